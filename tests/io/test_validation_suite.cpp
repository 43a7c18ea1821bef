// The validation suite (io/validation_suite.hpp): a case's validation: block read strictly, the
// headline figure, the MAPE groups and the gate worked out by hand, and the runner checked
// against analysis::simulate on two bundled cases.
#include <doctest/doctest.h>

#include <cmath>
#include <filesystem>
#include <string>

#include "inflect/analysis/simulate.hpp"
#include "inflect/core/error.hpp"
#include "inflect/io/experiment_loader.hpp"
#include "inflect/io/validation_suite.hpp"
#include "temp_dir.hpp"

namespace {

using inflect::core::Error;
using inflect::core::ErrorKind;
using inflect::io::CaseResult;
using inflect::io::Figure;
using inflect::io::FigureError;

// An experiment file body does not matter to read_validation_case: only its validation: block.
std::string case_file(const std::string& block) { return "name: x\nvalidation:\n" + block; }

void expect_error(const std::string& stem, const std::string& block, const std::string& fragment) {
  inflect::test::TempDir t("validation-suite-err");
  const auto path = t.path / (stem + ".yaml");
  inflect::test::write_file(path, case_file(block));
  try {
    inflect::io::read_validation_case(path.string());
    FAIL("accepted: " << block);
  } catch (const Error& e) {
    CHECK(e.kind() == ErrorKind::input);
    const std::string full = inflect::core::format_error(e);
    CHECK_MESSAGE(full.find(fragment) != std::string::npos, full);
  }
}

const std::string kGood = "  case_id: c1\n  framework: nemo\n  precision: fp8\n  source: \"paper, Table 2\"\n";

CaseResult result(const std::string& id, const std::string& framework, const std::string& precision, const std::string& device,
                  std::initializer_list<double> errors) {
  CaseResult r;
  r.c.case_id = id;
  r.c.framework = framework;
  r.c.precision = precision;
  r.device = device;
  for (double e : errors) r.figures.push_back(FigureError{Figure::step_time_s, 1 + e, 1, e});
  return r;
}

}  // namespace

TEST_CASE("validation suite: a case's validation block is read whole, figures in headline order") {
  inflect::test::TempDir t("validation-suite-read");
  const auto path = t.path / "c1.yaml";
  inflect::test::write_file(path, case_file(kGood + "  published_tflops_per_gpu: 430\n  flops_counted: model\n"
                                                    "  published_mfu: 0.43\n"));
  const auto c = inflect::io::read_validation_case(path.string());
  CHECK(c.case_id == "c1");
  CHECK(c.framework == "nemo");
  CHECK(c.precision == "fp8");
  CHECK(c.source == "paper, Table 2");
  CHECK(c.flops_counted == "model");
  CHECK_FALSE(c.published(Figure::step_time_s).has_value());  // not given: not published
  CHECK_FALSE(c.published(Figure::tokens_per_s_per_gpu).has_value());
  CHECK(c.published(Figure::tflops_per_gpu) == 430);
  CHECK(c.published(Figure::mfu) == 0.43);
}

TEST_CASE("validation suite: a bad validation block is a located input error") {
  expect_error("c1", kGood + "  published_tflops_per_GPU: 1\n", "unknown key 'published_tflops_per_GPU'");
  expect_error("c1", "  case_id: c1\n  framework: deepspeed\n  precision: bf16\n  source: s\n  published_mfu: 0.4\n",
               "'deepspeed' is not allowed");
  expect_error("c2", kGood + "  published_step_time_s: 1\n", "differs from the file name 'c2'");
  expect_error("c1", "  case_id: c1\n  framework: nemo\n  precision: bf16\n  published_step_time_s: 1\n", "missing required key 'source'");
  expect_error("c1", kGood, "no published figure");
  // An empty value is a missing value: a figure written as null is refused, not read as absent.
  expect_error("c1", kGood + "  published_mfu: 0.4\n  published_step_time_s: null\n", "'published_step_time_s' has no value");
  expect_error("c1", kGood + "  published_tflops_per_gpu: 400\n", "needs flops_counted");
  expect_error("c1", kGood + "  published_mfu: 43\n", "not a fraction");
  expect_error("c1", kGood + "  published_step_time_s: -2\n", "must be a positive number");
  expect_error("c1", kGood + "  published_step_time_s: 1\n  flops_counted: both\n", "'both' is not allowed");
}

TEST_CASE("validation suite: MAPE over headline errors, grouped by framework, precision and device") {
  // Headline errors +10%, -30%, +5%: overall (10 + 30 + 5) / 3 = 15%, max 30%. Framework a: cases
  // 1 and 2, (10 + 30) / 2 = 20%; b: case 3, 5%. bf16: cases 1 and 3, (10 + 5) / 2 = 7.5%; fp8: 30%.
  // Case 3's second figure (-40%) counts for the gate but not for the MAPE.
  const std::vector<CaseResult> rs = {result("one", "a", "bf16", "x", {0.10}), result("two", "a", "fp8", "y", {-0.30}),
                                      result("three", "b", "bf16", "x", {0.05, -0.40})};
  const auto s = inflect::io::summarize(rs);
  CHECK(s.overall.cases == 3);
  CHECK(s.overall.mape == doctest::Approx(0.15));
  CHECK(s.overall.max_abs == doctest::Approx(0.30));
  REQUIRE(s.by_framework.size() == 2);
  CHECK(s.by_framework[0].name == "a");
  CHECK(s.by_framework[0].mape == doctest::Approx(0.20));
  CHECK(s.by_framework[1].mape == doctest::Approx(0.05));
  REQUIRE(s.by_precision.size() == 2);
  CHECK(s.by_precision[0].name == "bf16");
  CHECK(s.by_precision[0].mape == doctest::Approx(0.075));
  CHECK(s.by_precision[1].mape == doctest::Approx(0.30));
  REQUIRE(s.by_device.size() == 2);
  CHECK(s.by_device[1].name == "y");

  // Gate at 25%: case two (headline -30%) and case three (a second figure at -40%); at 50% none.
  const auto out = inflect::io::outside_gate(rs, 0.25);
  REQUIRE(out.size() == 2);
  CHECK(out[0]->c.case_id == "two");
  CHECK(out[1]->c.case_id == "three");
  CHECK(inflect::io::outside_gate(rs, 0.50).empty());

  const std::string md = inflect::io::suite_markdown(rs, s);
  CHECK(md.find("| one | a | bf16 | x |") != std::string::npos);
  CHECK(md.find("| all | 3 | 15.0% | 30.0% |") != std::string::npos);
  CHECK(inflect::io::format_suite(rs, s).find("framework a") != std::string::npos);
}

TEST_CASE("validation suite: case files are the folder's own *.yaml, sorted, and a missing or empty folder is an error") {
  inflect::test::TempDir t("validation-suite-files");
  inflect::test::write_file(t.path / "b.yaml", "x: 1\n");
  inflect::test::write_file(t.path / "a.yaml", "x: 1\n");
  inflect::test::write_file(t.path / "notes.md", "x\n");
  inflect::test::write_file(t.path / "traces" / "c.yaml", "x: 1\n");
  const auto files = inflect::io::validation_case_files(t.path.string());
  REQUIRE(files.size() == 2);
  CHECK(std::filesystem::path(files[0]).filename() == "a.yaml");
  CHECK(std::filesystem::path(files[1]).filename() == "b.yaml");
  CHECK_THROWS_AS(inflect::io::validation_case_files((t.path / "traces" / "none").string()), Error);
  inflect::test::TempDir empty("validation-suite-empty");
  CHECK_THROWS_AS(inflect::io::validation_case_files(empty.path.string()), Error);
}

TEST_CASE("validation suite: the runner reports what simulate does, in file order whatever the jobs") {
  // Two bundled cases: a TFLOP/s figure counted with recomputation (hardware), and a step time
  // before a TFLOP/s. Each prediction is the report's own figure; the error (pred - pub) / pub.
  inflect::io::set_project_root(INFLECT_SOURCE_DIR);
  const std::string dir = std::string(INFLECT_SOURCE_DIR) + "/workloads/validation/";
  const std::vector<std::string> files = {dir + "mcore-h100-gpt-1.7b.yaml", dir + "megatron-a100-selene-gpt-18b.yaml"};
  const auto one = inflect::io::run_validation_suite(files, {1, inflect::plan::Fidelity::symmetric});
  const auto two = inflect::io::run_validation_suite(files, {2, inflect::plan::Fidelity::symmetric});
  REQUIRE(one.size() == 2);
  REQUIRE(two.size() == 2);
  for (std::size_t i = 0; i < 2; ++i) {
    CHECK(one[i].c.case_id == two[i].c.case_id);
    REQUIRE(one[i].figures.size() == two[i].figures.size());
    for (std::size_t k = 0; k < one[i].figures.size(); ++k) CHECK(one[i].figures[k].predicted == two[i].figures[k].predicted);
  }
  inflect::analysis::SimulateOptions sim;
  sim.simulate_over_memory = true;
  const auto r0 = inflect::analysis::simulate(inflect::io::load_experiment(files[0]), sim);
  CHECK(one[0].c.case_id == "mcore-h100-gpt-1.7b");
  REQUIRE(one[0].figures.size() == 1);
  CHECK(one[0].headline().figure == Figure::tflops_per_gpu);
  CHECK(one[0].headline().predicted == r0.hardware_tflops_per_gpu);
  CHECK(one[0].headline().error == doctest::Approx((r0.hardware_tflops_per_gpu - 408.8) / 408.8));
  const auto r1 = inflect::analysis::simulate(inflect::io::load_experiment(files[1]), sim);
  REQUIRE(one[1].figures.size() == 2);
  CHECK(one[1].headline().figure == Figure::step_time_s);
  CHECK(one[1].headline().predicted == r1.step_time.value());
  CHECK(one[1].figures[1].figure == Figure::tflops_per_gpu);
  CHECK(one[1].gpus == 256);
  CHECK(one[1].device == "a100-sxm-80g");
}
