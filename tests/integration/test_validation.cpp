// Published training runs replayed as experiments (workloads/validation/*.yaml): prints predicted
// vs published step time and TFLOP/s per GPU (`ctest -V -R validation` shows the table). The only
// assertion is a gross-error guard — every prediction finite, positive and within a factor of 3 of
// the published figure — not a fit: nothing in these files is tuned to the published numbers.
//
// TFLOP/s per GPU: the Megatron papers and README count the FLOPs of activation recomputation
// (Narayanan et al. 2021, eq. 3, has the extra forward pass), so their figure is compared with our
// hardware_tflops_per_gpu (kernels actually run, recompute included), not model_tflops_per_gpu.
#include <doctest/doctest.h>

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "inflect/analysis/simulate.hpp"
#include "inflect/io/experiment_loader.hpp"
#include "inflect/io/yaml_reader.hpp"

namespace {

namespace fs = std::filesystem;

constexpr double kGrossFactor = 3.0;

struct Published {
  std::string case_id;
  std::optional<double> step_time_s;
  std::optional<double> tflops_per_gpu;
};

std::optional<double> optional_number(const YAML::Node& n) {
  if (!n || n.IsNull()) return std::nullopt;
  return n.as<double>();
}

Published read_validation(const std::string& file) {
  inflect::io::Node root = inflect::io::load_yaml_file(file);
  const YAML::Node v = root.raw()["validation"];
  REQUIRE_MESSAGE(v.IsMap(), file, ": no validation: map");
  Published p;
  REQUIRE_MESSAGE(v["case_id"], file, ": validation.case_id missing");
  p.case_id = v["case_id"].as<std::string>();
  p.step_time_s = optional_number(v["published_step_time_s"]);
  p.tflops_per_gpu = optional_number(v["published_tflops_per_gpu"]);
  return p;
}

std::string opt(std::optional<double> v, const char* f) {
  return v ? fmt::format(fmt::runtime(f), *v) : std::string("-");
}

/// Checks `predicted` against `published`: finite, positive, within kGrossFactor either way.
void check_gross(const char* what, double predicted, std::optional<double> published) {
  CAPTURE(what);
  CHECK(std::isfinite(predicted));
  CHECK(predicted > 0);
  if (published && *published > 0 && predicted > 0) {
    const double ratio = predicted / *published;
    CHECK_MESSAGE(ratio <= kGrossFactor, what, ": predicted ", predicted, " vs published ", *published);
    CHECK_MESSAGE(ratio >= 1 / kGrossFactor, what, ": predicted ", predicted, " vs published ", *published);
  }
}

}  // namespace

TEST_CASE("validation cases: predicted vs published (gross-error guard, not a fit)") {
  inflect::io::set_project_root(INFLECT_SOURCE_DIR);
  std::vector<fs::path> files;
  for (const auto& entry : fs::directory_iterator(fs::path(INFLECT_SOURCE_DIR) / "workloads" / "validation"))
    if (entry.is_regular_file() && entry.path().extension() == ".yaml") files.push_back(entry.path());
  std::sort(files.begin(), files.end());
  REQUIRE(!files.empty());

  std::ostringstream table;
  table << "\nvalidation (symmetric fidelity; published TFLOP/s count recompute, so they are compared with"
           " hardware TFLOP/s)\n";
  table << fmt::format("{:<30} {:>5}  {:<60} {:>9} {:>9} {:>7}  {:>8} {:>8} {:>7}\n", "case", "GPUs", "plan",
                       "step s", "pub s", "err %", "hw TF/s", "pub TF/s", "err %");
  for (const auto& file : files) {
    CAPTURE(file.string());
    const Published pub = read_validation(file.string());
    const inflect::plan::Experiment e = inflect::io::load_experiment(file.string());
    const inflect::analysis::RunReport r = inflect::analysis::simulate(e, {inflect::plan::Fidelity::symmetric, true, nullptr});
    auto err = [](double pred, std::optional<double> p) {
      return p && *p > 0 ? fmt::format("{:+.1f}", 100 * (pred - *p) / *p) : std::string("-");
    };
    table << fmt::format("{:<30} {:>5}  {:<60} {:>9.3f} {:>9} {:>7}  {:>8.1f} {:>8} {:>7}\n", pub.case_id, r.devices,
                         r.plan, r.step_time.value(), opt(pub.step_time_s, "{:.3f}"), err(r.step_time.value(), pub.step_time_s),
                         r.hardware_tflops_per_gpu, opt(pub.tflops_per_gpu, "{:.1f}"),
                         err(r.hardware_tflops_per_gpu, pub.tflops_per_gpu));
    CHECK(r.name == pub.case_id);
    check_gross("step_time_s", r.step_time.value(), pub.step_time_s);
    check_gross("TFLOP/s per GPU", r.hardware_tflops_per_gpu, pub.tflops_per_gpu);
  }
  MESSAGE(table.str());
}

// Cases measured on this project's own lent H200 (workloads/validation/traces/*.yaml, from
// calibration/traces/h200/): one GPU, so every figure is the device and the compute/power model —
// no network. Printed predicted vs measured step time, average power and SM clock. The assertions
// are bands the model must stay inside, not a fit (nothing was tuned to these rows): step time
// within 40% (the model leaves out eager PyTorch's unfused element-wise kernels and per-kernel
// overheads beyond its launch cost, so it runs short, most at micro-batch 1), and where the
// measured run was power-capped (NVML reported SW power cap), the prediction is power-limited too
// and its average power within 5% of the measured.
TEST_CASE("H200 trace cases: predicted vs measured step time, power and clock") {
  inflect::io::set_project_root(INFLECT_SOURCE_DIR);
  std::vector<fs::path> files;
  for (const auto& entry : fs::directory_iterator(fs::path(INFLECT_SOURCE_DIR) / "workloads" / "validation" / "traces"))
    if (entry.is_regular_file() && entry.path().extension() == ".yaml") files.push_back(entry.path());
  std::sort(files.begin(), files.end());
  REQUIRE(files.size() >= 4);

  std::ostringstream table;
  table << "\nH200 trace cases (one device; measured on this project's H200, calibration/traces/h200)\n";
  table << fmt::format("{:<28} {:>8} {:>8} {:>7}  {:>6} {:>6}  {:>6} {:>6}  {}\n", "case", "step s", "meas s", "err %",
                       "W", "meas W", "MHz", "meas", "limiter");
  for (const auto& file : files) {
    CAPTURE(file.string());
    inflect::io::Node root = inflect::io::load_yaml_file(file.string());
    const YAML::Node v = root.raw()["validation"];
    const double step = v["published_step_time_s"].as<double>();
    const double watts = v["measured_avg_power_w"].as<double>();
    const double mhz = v["measured_clock_mhz"].as<double>();
    const inflect::plan::Experiment e = inflect::io::load_experiment(file.string());
    const inflect::analysis::RunReport r = inflect::analysis::simulate(e, {inflect::plan::Fidelity::symmetric, true, nullptr});
    table << fmt::format("{:<28} {:>8.4f} {:>8.4f} {:>+7.1f}  {:>6.0f} {:>6.0f}  {:>6.0f} {:>6.0f}  {}\n", r.name, r.step_time.value(),
                         step, 100 * (r.step_time.value() - step) / step, r.power.avg_device.value(), watts, r.power.avg_clock_mhz, mhz,
                         r.thermal.limiter);
    CHECK(std::abs(r.step_time.value() - step) / step <= 0.40);
    // The measured runs below 1.95 GHz were held by the power limit (clock-event reason SW power cap).
    if (mhz < 1950) {
      CHECK(r.thermal.limiter == "power");
      CHECK(std::abs(r.power.avg_device.value() - watts) / watts <= 0.05);
    }
  }
  MESSAGE(table.str());
}
