#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>

#include <cstdio>
#include <string_view>

// ctest runs each case in its own process, selected by name (doctest_discover_tests in
// tests/CMakeLists.txt). A filter that selects nothing runs nothing and doctest reports success,
// so a case whose name ctest cannot pass through (a ';' splits it, as a CMake list) would pass
// forever without running. This counts the cases that ran and fails a filtered run of none.
namespace {

int g_cases_run = 0;

struct CountCases : doctest::IReporter {
  explicit CountCases(const doctest::ContextOptions&) {}
  void report_query(const doctest::QueryData&) override {}
  void test_run_start() override {}
  void test_run_end(const doctest::TestRunStats&) override {}
  void test_case_start(const doctest::TestCaseData&) override { ++g_cases_run; }
  void test_case_reenter(const doctest::TestCaseData&) override {}
  void test_case_end(const doctest::CurrentTestCaseStats&) override {}
  void test_case_exception(const doctest::TestCaseException&) override {}
  void subcase_start(const doctest::SubcaseSignature&) override {}
  void subcase_end() override {}
  void log_assert(const doctest::AssertData&) override {}
  void log_message(const doctest::MessageData&) override {}
  void test_case_skipped(const doctest::TestCaseData&) override {}
};

REGISTER_LISTENER("count_cases", 1, CountCases);

}  // namespace

int main(int argc, char** argv) {
  doctest::Context context(argc, argv);
  const int rc = context.run();
  if (context.shouldExit()) return rc;
  bool filtered = false;
  for (int i = 1; i < argc; ++i) {
    const std::string_view a = argv[i];
    filtered = filtered || a.starts_with("--test-case=") || a.starts_with("-tc=");
  }
  if (filtered && g_cases_run == 0) {
    std::fprintf(stderr, "no test case matches the filter (a name with ';' cannot pass through ctest)\n");
    return 1;
  }
  return rc;
}
