// report.json: the keys scripts read, in a fixed order, byte-identical for the same report; and
// the summary's wording for fitting and non-fitting memory.
#include <doctest/doctest.h>

#include <cmath>
#include <limits>
#include <nlohmann/json.hpp>
#include <string>

#include "inflect/io/report_json.hpp"

namespace core = inflect::core;

namespace {

inflect::analysis::RunReport sample() {
  inflect::analysis::RunReport r;
  r.name = "gpt3-175b-a100";
  r.model = "gpt3-175b";
  r.device = "a100-sxm-80g";
  r.topology = "dgx-a100";
  r.nodes = 128;
  r.devices = 1024;
  r.plan = "tp8 pp16 dp8 cp1 sp zero1 1f1b recompute=full mb1";
  // step 10 s = compute 7 + comm (0.5 dp + 1 tp + 0.25 pp) + bubble 1 + other 0.25
  r.step_time = core::Seconds(10);
  r.tokens_per_step = 1536.0 * 2048;
  r.tokens_per_s = *r.tokens_per_step / r.step_time.value();
  r.model_flops_per_step = core::Flops(1.6e18);
  r.hardware_flops_per_step = core::Flops(2.1e18);
  r.model_tflops_per_gpu = 156.4;
  r.hardware_tflops_per_gpu = 205.1;
  r.peak_tflops_per_gpu = 312;
  r.mfu = 0.5;
  r.memory.peak = core::Bytes(60e9);
  r.memory.capacity = core::Bytes(80e9);
  r.memory.fits = true;
  r.memory.peak_stage = 0;
  r.memory.parts = {{"activations", core::Bytes(30e9)}, {"optimizer", core::Bytes(20e9)}, {"weights", core::Bytes(6e9)}, {"gradients", core::Bytes(4e9)}};
  r.breakdown.compute = core::Seconds(7);
  r.breakdown.exposed_comm.dp = core::Seconds(0.5);
  r.breakdown.exposed_comm.tp = core::Seconds(1);
  r.breakdown.exposed_comm.pp = core::Seconds(0.25);
  r.breakdown.bubble = core::Seconds(1);
  r.breakdown.other = core::Seconds(0.25);
  r.breakdown.critical_rank_note = "rank 0 (stage 0)";
  r.simulator.wall = core::Seconds(1.25);
  r.simulator.events = 123456;
  r.simulator.ops = 7890;
  r.simulator.simulated_ranks = 16;
  r.simulator.fidelity = "symmetric";
  return r;
}

}  // namespace

TEST_CASE("report_json: keys scripts read, with their values") {
  auto j = nlohmann::json::parse(inflect::io::report_to_json(sample()));
  CHECK(j["step_time_s"].get<double>() == 10);
  CHECK(j["tokens_per_s"].get<double>() == doctest::Approx(1536.0 * 2048 / 10));
  CHECK(j["model_tflops_per_gpu"].get<double>() == 156.4);
  CHECK(j["hardware_tflops_per_gpu"].get<double>() == 205.1);
  CHECK(j["mfu"].get<double>() == 0.5);
  CHECK(j["devices"].get<int>() == 1024);
  CHECK(j["memory"]["peak_bytes"].get<double>() == 60e9);
  CHECK(j["memory"]["capacity_bytes"].get<double>() == 80e9);
  CHECK(j["memory"]["fits"].get<bool>());
  CHECK(j["memory"]["over_by_bytes"].get<double>() == 0);
  CHECK(j["memory"]["parts"]["weights"].get<double>() == 6e9);
  CHECK(j["breakdown"]["compute_s"].get<double>() == 7);
  CHECK(j["breakdown"]["exposed_comm_s"]["total"].get<double>() == doctest::Approx(1.75));
  CHECK(j["breakdown"]["exposed_comm_s"]["dp"].get<double>() == 0.5);
  CHECK(j["breakdown"]["exposed_comm_s"]["tp"].get<double>() == 1);
  CHECK(j["breakdown"]["exposed_comm_s"]["pp"].get<double>() == 0.25);
  CHECK(j["breakdown"]["exposed_comm_s"]["cp"].get<double>() == 0);
  CHECK(j["breakdown"]["exposed_comm_s"]["ep"].get<double>() == 0);
  CHECK(j["breakdown"]["bubble_s"].get<double>() == 1);
  CHECK(j["breakdown"]["other_s"].get<double>() == 0.25);
  // The wall-clock figures are under one object, simulator.timing, which comparisons mask.
  CHECK(j["simulator"]["timing"]["wall_s"].get<double>() == 1.25);
  CHECK(j["simulator"]["timing"].size() == 3);
  CHECK_FALSE(j["simulator"].contains("wall_s"));
  CHECK(j["simulator"]["events"].get<std::uint64_t>() == 123456);
  CHECK(j["simulator"]["ops"].get<std::uint64_t>() == 7890);
  CHECK(j["simulator"]["simulated_ranks"].get<int>() == 16);
  CHECK(j["simulator"]["fidelity"] == "symmetric");
  for (const char* k : {"name", "model", "device", "topology", "nodes", "plan", "tokens_per_step",
                        "model_flops_per_step", "hardware_flops_per_step"})
    CHECK_MESSAGE(j.contains(k), k);
  CHECK(j["plan"] == "tp8 pp16 dp8 cp1 sp zero1 1f1b recompute=full mb1");
}

TEST_CASE("report_json: the straggler row and the variability figures are there only with variability") {
  const auto plain = nlohmann::json::parse(inflect::io::report_to_json(sample()));
  CHECK_FALSE(plain["breakdown"].contains("stragglers_s"));
  CHECK_FALSE(plain.contains("variability"));
  inflect::analysis::RunReport r = sample();
  // step 10 s = compute 6.5 + comm 1.75 + bubble 1 + other 0.25 + stragglers 0.5
  r.breakdown.compute = core::Seconds(6.5);
  r.breakdown.stragglers = core::Seconds(0.5);
  r.variability.modeled = true;
  r.variability.gpu_speed_spread = 0.02;
  r.variability.seed = 1;
  r.variability.slowest_device = 617;
  r.variability.slowest_device_factor = 1.0712;
  const std::string text = inflect::io::report_to_json(r);
  const auto j = nlohmann::json::parse(text);
  CHECK(j["breakdown"]["stragglers_s"].get<double>() == 0.5);
  CHECK(j["variability"]["slowest_device"].get<int>() == 617);
  CHECK(j["variability"]["slowest_device_factor"].get<double>() == 1.0712);
  CHECK(j["variability"]["kernel_jitter"].get<double>() == 0);
  // Read back and written again, byte for byte (scan rows are read back from report.json).
  CHECK(inflect::io::report_to_json(inflect::io::report_from_json(nlohmann::ordered_json::parse(text))) == text);
  CHECK(inflect::io::format_summary(r).find("waiting for stragglers") != std::string::npos);
}

TEST_CASE("report_json: the diloco section is there only with training.diloco, and reads back") {
  CHECK_FALSE(nlohmann::json::parse(inflect::io::report_to_json(sample())).contains("diloco"));
  inflect::analysis::RunReport r = sample();
  auto& d = r.diloco;
  d.modeled = true;
  d.sync_every = 100;
  d.workers = 4;
  d.fragments = 1;
  d.compression = "int8";
  d.inner_step = core::Seconds(9.9);
  d.sync_step = core::Seconds(19.9);
  d.time_per_step = core::Seconds(10);  // (99 * 9.9 + 19.9) / 100
  d.time_per_token = core::Seconds(10.0 / (1536.0 * 2048));
  d.sync_share = 0.1 / 10;
  d.outer_bytes_per_rank = core::Bytes(1e9);
  d.traffic_vs_dp = 0.0025;
  d.statistical_efficiency = "not modelled: ...";
  // The synchronous plan did not fit: its step and the ratio are unknown, written null.
  const std::string text = inflect::io::report_to_json(r);
  const auto j = nlohmann::json::parse(text);
  CHECK(j["diloco"]["sync_step_s"].get<double>() == 19.9);
  CHECK(j["diloco"]["traffic_vs_dp"].get<double>() == 0.0025);
  CHECK(j["diloco"]["compression"].get<std::string>() == "int8");
  CHECK(j["diloco"]["synchronous_step_s"].is_null());
  CHECK(j["diloco"]["time_to_target_ratio"].is_null());
  CHECK(inflect::io::report_to_json(inflect::io::report_from_json(nlohmann::ordered_json::parse(text))) == text);
  const std::string summary = inflect::io::format_summary(r);
  CHECK(summary.find("DiLoCo: 4 workers, an outer sync every 100 steps, int8 compression, blocking") != std::string::npos);
  CHECK(summary.find("not simulated (its plan does not fit)") != std::string::npos);
  CHECK(summary.find("statistical efficiency not modelled") != std::string::npos);
}

TEST_CASE("report_json: deterministic key order, volatile fields optional") {
  auto r = sample();
  std::string a = inflect::io::report_to_json(r);
  CHECK(a == inflect::io::report_to_json(r));
  // The top-level order is the documented one (docs/report.md), not alphabetical.
  CHECK(a.find("\"name\"") < a.find("\"step_time_s\""));
  CHECK(a.find("\"step_time_s\"") < a.find("\"memory\""));
  CHECK(a.find("\"memory\"") < a.find("\"breakdown\""));
  CHECK(a.find("\"breakdown\"") < a.find("\"simulator\""));
  // memory parts keep the report's order: largest first
  CHECK(a.find("\"activations\"") < a.find("\"gradients\""));

  std::string stable = inflect::io::report_to_json(r, false);
  CHECK(stable.find("timing") == std::string::npos);
  r.simulator.wall = core::Seconds(99);  // a slower machine
  CHECK(inflect::io::report_to_json(r, false) == stable);
  CHECK(inflect::io::report_to_json(r, true) != a);
}

TEST_CASE("report_json: unknown figures are null, never made up") {
  auto r = sample();
  r.memory.known = false;
  r.mfu = std::numeric_limits<double>::quiet_NaN();
  auto j = nlohmann::json::parse(inflect::io::report_to_json(r));
  CHECK(j["memory"]["known"] == false);
  CHECK(j["memory"]["peak_bytes"].is_null());
  CHECK(j["memory"]["fits"].is_null());
  CHECK(j["memory"]["capacity_bytes"].get<double>() == 80e9);
  CHECK(j["mfu"].is_null());
}

TEST_CASE("report_json: a trace without tokens or model FLOPs has them, and what is made of them, null") {
  auto r = sample();
  r.tokens_per_step.reset();
  r.tokens_per_s.reset();
  r.model_flops_per_step.reset();
  r.model_tflops_per_gpu.reset();
  r.mfu.reset();
  r.power.modeled = r.thermal.modeled = true;
  r.power.energy_per_token.reset();
  const std::string text = inflect::io::report_to_json(r);
  auto j = nlohmann::json::parse(text);
  for (const char* k : {"tokens_per_step", "tokens_per_s", "model_flops_per_step", "model_tflops_per_gpu", "mfu"}) {
    CAPTURE(k);
    CHECK(j[k].is_null());
  }
  CHECK(j["power"]["energy_per_token_j"].is_null());
  CHECK(j["hardware_tflops_per_gpu"].get<double>() == 205.1);  // what the kernels did is still known
  // Read back, they stay unknown.
  CHECK(inflect::io::report_to_json(inflect::io::report_from_json(nlohmann::ordered_json::parse(text))) == text);
}

TEST_CASE("report_json: duplicate memory parts are summed") {
  auto r = sample();
  r.memory.parts = {{"buffers", core::Bytes(1e9)}, {"buffers", core::Bytes(2e9)}};
  auto j = nlohmann::json::parse(inflect::io::report_to_json(r));
  CHECK(j["memory"]["parts"].size() == 1);
  CHECK(j["memory"]["parts"]["buffers"].get<double>() == 3e9);
}

TEST_CASE("summary: fits, shares of the step, and does-not-fit by how much") {
  auto r = sample();
  std::string s = inflect::io::format_summary(r);
  INFO(s);
  CHECK(s.find("gpt3-175b-a100") != std::string::npos);
  CHECK(s.find("10.000 s") != std::string::npos);
  CHECK(s.find("50.0 %") != std::string::npos);        // MFU
  CHECK(s.find("156.4 model") != std::string::npos);
  CHECK(s.find("FITS") != std::string::npos);
  CHECK(s.find("DOES NOT FIT") == std::string::npos);
  CHECK(s.find(" 70.0 %") != std::string::npos);       // compute 7 of 10 s
  CHECK(s.find(" 17.5 %") != std::string::npos);       // exposed comm 1.75 of 10 s
  CHECK(s.find("pipeline bubble") != std::string::npos);

  // 90e9 of 80e9: over by 10e9 bytes = 9.3 GiB
  r.memory.peak = core::Bytes(90e9);
  r.memory.fits = false;
  r.memory.over_by = core::Bytes(10e9);
  s = inflect::io::format_summary(r);
  CHECK(s.find("DOES NOT FIT (over by 9.3 GiB)") != std::string::npos);
}
