// Thresholds, point matching and the three outputs of a comparison (docs/studies.md).
#include <doctest/doctest.h>

#include <cmath>
#include <cstdlib>

#include "inflect/core/error.hpp"
#include "inflect/study/compare.hpp"
#include "inflect/study/compare_output.hpp"
#include "temp_dir.hpp"

using namespace inflect;
using namespace inflect::study;

namespace {

ResultPoint point(std::string key, std::string status, double step_s, double peak_bytes = 1e9) {
  ResultPoint p;
  p.key = std::move(key);
  p.status = std::move(status);
  p.has_report = true;
  p.report.simulated = p.status == "ok";
  p.report.devices = 8;
  p.report.step_time = core::Seconds(step_s);
  p.report.tokens_per_step = 1e6;
  p.report.tokens_per_s = 1e6 / step_s;
  p.report.memory.peak = core::Bytes(peak_bytes);
  return p;
}

ResultSet scan_set(std::vector<ResultPoint> points) {
  ResultSet s;
  s.kind = SetKind::scan;
  s.path = "side";
  s.points = std::move(points);
  return s;
}

}  // namespace

TEST_CASE("thresholds: direction, amount and unit as written") {
  const Threshold up = parse_threshold("step_time_s:+2%");
  CHECK(up.metric == "step_time_s");
  CHECK(up.direction == Direction::increase);
  CHECK(up.relative);
  CHECK(up.amount == doctest::Approx(0.02));
  CHECK(parse_threshold("tokens_per_s:-1%").direction == Direction::decrease);
  CHECK(parse_threshold("mfu:1%").direction == Direction::either);
  CHECK(parse_threshold("mfu:+-1%").direction == Direction::either);
  CHECK(parse_threshold("mfu:\u00b11%").direction == Direction::either);
  const Threshold abs = parse_threshold("memory.peak_bytes:+0");
  CHECK_FALSE(abs.relative);
  CHECK(abs.amount == 0);
  // A scan row's alias names the same figure.
  CHECK(parse_threshold("peak_memory_bytes:+0").metric == "peak_memory_bytes");
}

TEST_CASE("thresholds: a malformed one says what is accepted") {
  auto message = [](const char* text) {
    try {
      (void)parse_threshold(text);
    } catch (const core::Error& e) {
      CHECK(e.kind() == core::ErrorKind::input);
      return e.message();
    }
    FAIL("no error for ", text);
    return std::string();
  };
  CHECK(message("step_tme_s:+2%").find("did you mean 'step_time_s'") != std::string::npos);
  CHECK(message("step_time_s+2%").find("no ':'") != std::string::npos);
  CHECK(message("step_time_s:+two%").find("not a non-negative number") != std::string::npos);
  CHECK(message("step_time_s:") .find("no amount") != std::string::npos);
  CHECK(message("name:+1%").find("not a measured figure") != std::string::npos);
  CHECK(message("step_time_s:+nan%").find("not a non-negative number") != std::string::npos);
}

TEST_CASE("thresholds: crossing, worked by hand") {
  const Threshold up = parse_threshold("step_time_s:+2%");
  // 10 s -> 10.2 s is +2.0%: on the line, not past it; 10.21 s is +2.1%: past it.
  CHECK_FALSE(crosses(up, 10, 10.2));
  CHECK(crosses(up, 10, 10.21));
  CHECK_FALSE(crosses(up, 10, 5));  // faster is not a regression of +2%
  const Threshold down = parse_threshold("tokens_per_s:-1%");
  CHECK(crosses(down, 100, 98.9));   // -1.1%
  CHECK_FALSE(crosses(down, 100, 200));
  const Threshold either = parse_threshold("mfu:1%");
  CHECK(crosses(either, 0.5, 0.506));  // +1.2%
  CHECK(crosses(either, 0.5, 0.494));  // -1.2%
  const Threshold any_growth = parse_threshold("memory.peak_bytes:+0");
  CHECK(crosses(any_growth, 1e9, 1e9 + 1));
  CHECK_FALSE(crosses(any_growth, 1e9, 1e9));
  // Relative to a base of 0: any move in the direction crosses it.
  CHECK(crosses(up, 0, 1e-9));
  CHECK_FALSE(relative_change(0, 1).has_value());
}

TEST_CASE("compare: points matched by key, and one-sided points and status changes fail") {
  const ResultSet base = scan_set({point("a", "ok", 10), point("b", "ok", 10), point("gone", "ok", 10)});
  const ResultSet now = scan_set({point("b", "does_not_fit", 10), point("a", "ok", 10.5), point("new", "ok", 10)});
  CompareOptions o;
  o.thresholds = {parse_threshold("step_time_s:+2%")};
  const Comparison c = compare(base, now, o);
  REQUIRE(c.points.size() == 4);
  // Base order, then what only the new side has.
  CHECK(c.points[0].key == "a");
  CHECK(c.points[3].key == "new");
  // a: 10 -> 10.5 s is +5%, past +2%.
  REQUIRE(c.points[0].failures().size() == 1);
  CHECK(c.points[0].failures()[0].find("+5.00%") != std::string::npos);
  CHECK(c.points[1].failures()[0] == "status changed: ok -> does_not_fit");
  CHECK(c.points[2].now == nullptr);
  CHECK(c.points[2].failed());
  CHECK(c.points[3].base == nullptr);
  CHECK(c.failed_points() == 4);

  const Comparison same = compare(base, base, o);
  CHECK_FALSE(same.failed());
}

TEST_CASE("compare: the inputs' differences beyond the key are warnings with their point counts") {
  ResultPoint a = point("a", "ok", 10), b = point("b", "ok", 10);
  a.report.provenance.inputs = {{"topology", "t.yaml", "1111"}};
  b.report.provenance.inputs = {{"topology", "t.yaml", "1111"}};
  a.report.provenance.effective = {{"parallel.tp", "8"}};
  b.report.provenance.effective = {{"parallel.tp", "8"}};
  const ResultSet base = scan_set({a, b});
  ResultPoint a2 = a, b2 = b;
  a2.report.provenance.inputs[0].hash = "2222";
  b2.report.provenance.inputs[0].hash = "2222";
  b2.report.provenance.effective[0].second = "4";
  const ResultSet now = scan_set({a2, b2});
  const Comparison c = compare(base, now, {});
  REQUIRE(c.warnings.size() == 2);
  CHECK(c.warnings[0] == "topology t.yaml differs (1111 -> 2222) (2 points)");
  CHECK(c.warnings[1] == "effective parallel.tp: 8 -> 4 (1 point)");
  CHECK_FALSE(c.failed());  // warnings alone do not fail
}

TEST_CASE("compare: different kinds of result are refused") {
  ResultSet report;
  report.kind = SetKind::report;
  CHECK_THROWS_AS(compare(report, scan_set({}), {}), core::Error);
}

TEST_CASE("compare outputs: Markdown and JUnit say the verdict, and JUnit validates against its schema") {
  const ResultSet base = scan_set({point("a<&>", "ok", 10), point("b", "ok", 10, 2e9)});
  const ResultSet now = scan_set({point("a<&>", "ok", 11), point("b", "ok", 10, 3e9)});
  CompareOptions o;
  o.thresholds = {parse_threshold("step_time_s:+2%"), parse_threshold("memory.peak_bytes:+0")};
  const Comparison c = compare(base, now, o);
  const std::string md = comparison_markdown(c, "t");
  CHECK(md.find("### t: **FAIL**") == 0);
  CHECK(md.find("| a<&> | step_time_s 10 -> 11 (+10.00%) crosses step_time_s:+2% |") != std::string::npos);

  const std::string xml = comparison_junit(c, "t");
  // 2 points x (presence and status + 6 default metrics) = 14 cases; 2 crossed thresholds.
  CHECK(xml.find("tests=\"14\" failures=\"2\"") != std::string::npos);
  CHECK(xml.find("classname=\"a&lt;&amp;&gt;\" name=\"step_time_s\"") != std::string::npos);
  test::TempDir dir("junit");
  test::write_file(dir.path / "junit.xml", xml);
  const std::string schema = std::string(INFLECT_SOURCE_DIR) + "/tests/data/junit/jenkins-junit.xsd";
  const std::string cmd = "xmllint --noout --schema '" + schema + "' '" + (dir.path / "junit.xml").string() + "' 2>&1";
  CHECK_MESSAGE(std::system(cmd.c_str()) == 0, "xmllint rejected the JUnit XML (libxml2-utils installed? scripts/setup)");
  // The check can fail: a testcase without its required name does not validate.
  test::write_file(dir.path / "bad.xml", "<testsuites><testsuite name=\"x\" tests=\"1\"><testcase/></testsuite></testsuites>\n");
  const std::string bad = "xmllint --noout --schema '" + schema + "' '" + (dir.path / "bad.xml").string() + "' >/dev/null 2>&1";
  CHECK(std::system(bad.c_str()) != 0);
}
