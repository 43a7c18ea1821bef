// The field table every report output is written from: each key documented, names unique,
// aliases resolving to their figure, report.json read back exactly, and docs/report.md's key
// table generated from it.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdlib>
#include <fstream>
#include <limits>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <string>

#include "inflect/io/report_fields.hpp"
#include "inflect/io/report_json.hpp"

namespace core = inflect::core;

namespace {

using inflect::analysis::RunReport;
namespace io = inflect::io;

RunReport sample() {
  RunReport r;
  r.name = "sample-run";
  r.model = "gpt-1.7b";
  r.device = "h100-sxm";
  r.topology = "dgx-h100";
  r.nodes = 2;
  r.devices = 16;
  r.plan = "tp8 pp1 dp2 cp1 zero1 1f1b recompute=none mb1 m=8";
  r.step_time = core::Seconds(0.1 + 0.2);  // not a short decimal: the exact double must come back
  r.tokens_per_step = 32768;
  r.tokens_per_s = *r.tokens_per_step / r.step_time.value();
  r.model_flops_per_step = core::Flops(3.3e17 / 3);
  r.hardware_flops_per_step = core::Flops(3.4e17 / 7);
  r.model_tflops_per_gpu = 123.456789;
  r.hardware_tflops_per_gpu = 130.1;
  r.peak_tflops_per_gpu = 989;
  r.mfu = *r.model_tflops_per_gpu / r.peak_tflops_per_gpu;
  r.memory.peak = core::Bytes(60e9 / 7);
  r.memory.capacity = core::Bytes(80e9);
  r.memory.parts = {{"optimizer", core::Bytes(4e9)}, {"weights", core::Bytes(1e9)}, {"activations", core::Bytes(3e9 / 7)}};
  r.breakdown.compute = core::Seconds(0.2);
  r.breakdown.exposed_comm.dp = core::Seconds(0.01 / 3);
  r.breakdown.exposed_comm.tp = core::Seconds(std::numeric_limits<double>::quiet_NaN());  // could not be computed
  r.breakdown.bubble = core::Seconds(0.05);
  r.breakdown.critical_rank_note = "rank 3";
  r.power.modeled = r.thermal.modeled = true;
  r.power.cap = core::Watts(700);
  r.power.avg_device = core::Watts(650.0 / 3);
  r.thermal.cooling = "air";
  r.thermal.peak_temp = core::Celsius(71.25);
  r.thermal.limiter = "power";
  r.steps = {{core::Seconds(0.31), core::Celsius(60.5), core::Watts(640)}, {r.step_time, core::Celsius(71.25), r.power.avg_device}};
  r.simulator.fidelity = "symmetric";
  r.simulator.ops = 123456789012ULL;
  r.simulator.events = 42;
  r.simulator.simulated_ranks = 2;
  r.simulator.wall = core::Seconds(1.5);
  return r;
}

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace

TEST_CASE("report fields: every field has a doc, every figure a unit, and names are unique") {
  std::set<std::string> names;
  const RunReport r = sample();
  for (const auto& f : io::report_fields()) {
    CAPTURE(f.key);
    CHECK(!f.doc.empty());
    CHECK(f.get);
    // Texts (and lists of texts) have no unit; every number, flag, count and list of numbers has one.
    const io::FieldValue v = f.get(r);
    const bool text = std::holds_alternative<std::string>(v) || std::holds_alternative<std::vector<std::string>>(v) ||
                      f.key == "steps";
    CHECK(text == f.unit.empty());
    CHECK(names.insert(std::string(f.key)).second);
    for (const auto& a : f.aliases) {
      CAPTURE(a.name);
      CHECK(names.insert(std::string(a.name)).second);
      CHECK(!a.where.empty());
      CHECK((a.divisor == 1) == a.unit.empty());  // a converted alias says into what
    }
  }
  for (const auto& f : io::step_fields()) {
    CHECK(!f.doc.empty());
    CHECK(!f.unit.empty());
  }
}

TEST_CASE("report fields: an alias names the same figure, in its own unit") {
  const RunReport r = sample();
  const auto dp = io::find_field("breakdown.exposed_dp_s");
  REQUIRE(dp.field != nullptr);
  CHECK(dp.field->key == "breakdown.exposed_comm_s.dp");
  CHECK(io::find_field("exposed_dp_s").field == dp.field);
  CHECK(io::find_field("exposed_comm_s.dp").field == dp.field);
  CHECK(std::get<double>(io::field_value(dp, r)) == r.breakdown.exposed_comm.dp.value());
  CHECK(io::find_field("avg_device_w").field == io::find_field("power.avg_device_w").field);
  // results.csv's peak memory is in GiB.
  const auto gib = io::find_field("peak_memory_gib");
  REQUIRE(gib.field != nullptr);
  CHECK(gib.field->key == "memory.peak_bytes");
  CHECK(std::get<double>(io::field_value(gib, r)) == r.memory.peak.value() / 1073741824.0);
  CHECK(io::find_field("no_such_figure").field == nullptr);
  CHECK_THROWS(io::field_named("no_such_figure"));
}

TEST_CASE("report fields: null rules") {
  RunReport r = sample();
  auto value = [&](const char* name) { return io::field_value(io::field_named(name), r); };
  // Not finite: null, whatever the rule.
  CHECK(std::holds_alternative<std::monostate>(value("breakdown.exposed_comm_s.tp")));
  r.simulated = false;
  CHECK(std::holds_alternative<std::monostate>(value("step_time_s")));
  CHECK(std::holds_alternative<double>(value("tokens_per_step")));
  r.memory.known = false;
  CHECK(std::holds_alternative<std::monostate>(value("peak_memory_bytes")));
  CHECK(std::holds_alternative<double>(value("memory.capacity_bytes")));
  r.power.modeled = r.thermal.modeled = false;
  CHECK(std::holds_alternative<std::monostate>(value("power.cap_w")));
  CHECK(std::holds_alternative<std::monostate>(value("limiter")));
}

TEST_CASE("report fields: report.json reads back into the same report, byte for byte") {
  for (int variant = 0; variant < 4; ++variant) {
    CAPTURE(variant);
    RunReport r = sample();
    if (variant == 1) {  // not simulated: no timing figures, a reason
      r.simulated = false;
      r.not_simulated = "peak memory 90 GiB exceeds 80 GiB";
      r.power.modeled = r.thermal.modeled = false;
    }
    if (variant == 2) r.memory.known = false;  // a trace without memory figures
    if (variant == 3) r.simulator.fidelity_note = "full: cluster.thermal makes devices differ";
    if (variant == 1 || variant == 3) r.warnings = {"a NIC of 3,200 Gb/s", "a hop of 0.6 s"};  // variant 0: none, []
    const auto j = io::report_json(r);
    const RunReport back = io::report_from_json(j);
    CHECK(io::report_to_json(back) == io::report_to_json(r));
    if (r.simulated) CHECK(back.step_time.value() == r.step_time.value());  // else null, and left at its default
    CHECK(back.simulator.ops == r.simulator.ops);
    CHECK(back.memory.parts.size() == r.memory.parts.size());
    CHECK(back.steps.size() == r.steps.size());
    CHECK(back.power.modeled == r.power.modeled);
    CHECK(back.warnings == r.warnings);
  }
}

TEST_CASE("report fields: docs/report.md's key tables are generated from the table") {
  const std::string path = std::string(INFLECT_SOURCE_DIR) + "/docs/report.md";
  const std::string begin = "<!-- report keys: generated from io::report_fields(), do not edit by hand -->\n";
  const std::string end = "<!-- end of report keys -->\n";
  std::string page = read_file(path);
  const auto b = page.find(begin), e = page.find(end);
  REQUIRE(b != std::string::npos);
  REQUIRE(e != std::string::npos);
  std::string want = "\n";  // appended, not "\n" + ...: GCC 12 warns falsely (-Wrestrict) on that
  want += io::report_keys_markdown();
  want += "\n";
  const std::string have = page.substr(b + begin.size(), e - b - begin.size());
  if (have != want && std::getenv("INFLECT_UPDATE_DOCS")) {
    page.replace(b + begin.size(), e - b - begin.size(), want);
    std::ofstream(path, std::ios::binary) << page;
    MESSAGE("rewrote the key tables of " << path);
    return;
  }
  INFO("docs/report.md's key tables differ from io::report_keys_markdown(); INFLECT_UPDATE_DOCS=1 rewrites them");
  CHECK(have == want);
}
