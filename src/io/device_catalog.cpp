#include "inflect/io/device_catalog.hpp"

#include <algorithm>
#include <cmath>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "inflect/core/error.hpp"
#include "inflect/core/precision.hpp"
#include "inflect/core/strings.hpp"
#include "inflect/hw/compute_model.hpp"
#include "inflect/hw/power_model.hpp"
#include "io/embedded.hpp"

namespace inflect::io {

namespace {

using core::Precision;
using hw::DeviceSpec;
using hw::EfficiencyCurve;
using hw::MeasuringDevice;

const std::vector<Precision> kAllPrecisions = {Precision::fp32, Precision::tf32, Precision::bf16, Precision::fp16,
                                               Precision::fp8};

std::vector<std::string> precision_names() {
  std::vector<std::string> out;
  for (Precision p : kAllPrecisions) out.emplace_back(core::to_string(p));
  return out;
}

template <class Q>
Q positive(const Node& n, Q q) {
  if (!(q.value() > 0)) n.fail(fmt::format("must be positive; got '{}'", n.raw().Scalar()));
  return q;
}

double positive_double(const Node& n) {
  double v = n.as_double();
  if (!(v > 0)) n.fail(fmt::format("must be positive; got {}", v));
  return v;
}

std::string nonempty_string(const Node& n) {
  std::string s = n.as_string();
  if (s.empty()) n.fail("must not be empty");
  return s;
}

core::Seconds launch_overhead(const Node& n) {
  core::Seconds s = n.as_duration();
  // A launch overhead of a millisecond or more is a unit slip, not a GPU.
  if (!(s.value() >= 0 && s.value() < 1e-3))
    n.fail(fmt::format("'{}' is not a plausible kernel launch overhead; allowed: 0 to 1ms (e.g. 1.2us)",
                       n.raw().Scalar()));
  return s;
}

std::vector<std::int64_t> parse_shape(const Node& n) {
  std::string s = n.as_string();
  std::vector<std::int64_t> dims;
  std::size_t start = 0;
  while (start <= s.size()) {
    std::size_t end = s.find('x', start);
    if (end == std::string::npos) end = s.size();
    std::string part = s.substr(start, end - start);
    bool digits = !part.empty() && part.size() < 12 &&
                  std::all_of(part.begin(), part.end(), [](char c) { return c >= '0' && c <= '9'; });
    if (!digits) break;
    dims.push_back(std::stoll(part));
    start = end + 1;
  }
  if (dims.size() != 3 || std::any_of(dims.begin(), dims.end(), [](std::int64_t d) { return d <= 0; }))
    n.fail(fmt::format("'{}' is not a GEMM shape; expected MxNxK with positive integers, e.g. 4096x4096x4096", s));
  return dims;
}

// Checks the points are strictly increasing in x (after sorting) and the curve is work-monotone.
EfficiencyCurve finish_curve(std::vector<EfficiencyCurve::Point> pts, const Node& at, const std::string& what) {
  if (pts.empty()) at.fail(fmt::format("{}: no measurement points to build a curve from", what));
  std::sort(pts.begin(), pts.end(), [](const auto& a, const auto& b) { return a.x < b.x; });
  for (std::size_t i = 1; i < pts.size(); ++i)
    if (!(pts[i].x > pts[i - 1].x))
      at.fail(fmt::format("{}: two measurements sit at the same size {:.4g}; keep one (or exclude one)", what,
                          pts[i].x));
  EfficiencyCurve c{std::move(pts)};
  if (!c.work_monotone())
    at.fail(fmt::format("{}: the derived curve rises so steeply that a larger kernel would finish sooner than a "
                        "smaller one; check the measurements",
                        what));
  return c;
}

enum class Kind { gemm, attention, memory };

// The device a measurement ran on: this one, or the one named in `measured_on`.
MeasuringDevice measuring_device(const std::optional<Node>& measured_on, Kind kind, const DeviceSpec& d,
                                 std::optional<Precision> dtype, const Node& dtype_node) {
  MeasuringDevice on;
  if (!measured_on) {
    if (kind == Kind::memory) {
      on.peak = d.hbm_bandwidth.value();
    } else {
      core::check_invariant(dtype.has_value(), "compute measurements have a dtype");
      if (!d.peak_dense.count(*dtype))
        dtype_node.fail(fmt::format("'{}' is not a precision this device has a peak for (see peak_dense)",
                                    core::to_string(*dtype)));
      on.peak = d.peak_dense.at(*dtype).value();
    }
    on.compute_units = d.compute_units;
    on.gemm_tile = d.gemm_tile;
    on.launch_overhead = d.kernel_launch_overhead;
    return on;
  }
  MapReader r(*measured_on);
  nonempty_string(r.required("device"));
  nonempty_string(r.required("source"));
  if (kind == Kind::memory)
    on.peak = positive(r.required("hbm_bandwidth"), r.required("hbm_bandwidth").as_bandwidth()).value();
  else
    on.peak = positive(r.required("peak"), r.required("peak").as_flop_rate()).value();
  if (kind == Kind::gemm) {
    on.compute_units = static_cast<int>(r.required("compute_units").as_int(1, 1000000));
    on.gemm_tile = static_cast<int>(r.required("tile").as_int(1, 4096));
  }
  on.launch_overhead = launch_overhead(r.required("kernel_launch_overhead"));
  r.finish();
  return on;
}

struct GemmMeasurement {
  std::string source;
  std::vector<EfficiencyCurve::Point> points;  // fitted points only
  Node node;
};

std::vector<GemmMeasurement>::const_iterator find_measurement(const std::vector<GemmMeasurement>& ms,
                                                              const std::vector<std::string>& ids, const Node& ref) {
  std::string id = ref.as_string();
  auto it = std::find(ids.begin(), ids.end(), id);
  if (it == ids.end()) {
    std::string hint = core::closest_match(id, ids);
    ref.fail(fmt::format("'{}' is not a measurement id of this device{}; known: {}", id,
                         hint.empty() ? "" : fmt::format(" (did you mean '{}'?)", hint), core::join(ids)));
  }
  return ms.begin() + (it - ids.begin());
}

void parse_gemm(const Node& node, DeviceSpec& d) {
  MapReader g(node);
  d.gemm_tile = static_cast<int>(g.required("tile").as_int(1, 4096));
  std::vector<GemmMeasurement> ms;
  std::vector<std::string> ids;
  for (const Node& m : g.required("measurements").items()) {
    MapReader mr(m);
    Node id = mr.required("id");
    std::string id_s = nonempty_string(id);
    if (std::find(ids.begin(), ids.end(), id_s) != ids.end()) id.fail(fmt::format("duplicate measurement id '{}'", id_s));
    Node dtype_node = mr.required("dtype");
    Precision dtype = *core::parse_precision(dtype_node.as_choice(precision_names()));
    GemmMeasurement gm{nonempty_string(mr.required("source")), {}, m};
    MeasuringDevice on = measuring_device(mr.optional("measured_on"), Kind::gemm, d, dtype, dtype_node);
    for (const Node& p : mr.required("points").items()) {
      MapReader pr(p);
      auto dims = parse_shape(pr.required("shape"));
      Node rate = pr.required("rate");
      core::FlopRate achieved = positive(rate, rate.as_flop_rate());
      auto excluded = pr.optional("excluded");
      pr.finish();
      if (excluded) {
        nonempty_string(*excluded);  // the reason is data too
        continue;
      }
      gm.points.push_back(located(p, [&] { return hw::gemm_point(dims[0], dims[1], dims[2], achieved, on); }));
    }
    mr.finish();
    ids.push_back(id_s);
    ms.push_back(std::move(gm));
  }
  Node curves = g.required("curves");
  MapReader cr(curves);
  std::vector<std::optional<Node>> given;
  for (Precision p : kAllPrecisions) given.push_back(cr.optional(std::string(core::to_string(p))));
  cr.finish();  // before "missing", so a misspelt precision gets its suggestion
  for (std::size_t i = 0; i < kAllPrecisions.size(); ++i) {
    const Precision p = kAllPrecisions[i];
    std::string pname(core::to_string(p));
    const auto& c = given[i];
    if (!d.peak_dense.count(p)) {
      if (c) c->fail(fmt::format("no curve for '{}': the device has no {} peak in peak_dense", pname, pname));
      continue;
    }
    if (!c) curves.fail(fmt::format("missing curve for '{}': every precision in peak_dense needs one", pname));
    MapReader one(*c);
    Node shape_ref = one.required("shape");
    const auto& shape = *find_measurement(ms, ids, shape_ref);
    std::string what = fmt::format("gemm curve {}", pname);
    EfficiencyCurve curve = finish_curve(shape.points, shape_ref, what);
    std::string src = fmt::format("derived from {} ({})", shape_ref.as_string(), shape.source);
    if (auto anchor_ref = one.optional("anchor")) {
      const auto& anchor = *find_measurement(ms, ids, *anchor_ref);
      if (anchor.points.size() != 1)
        anchor_ref->fail(fmt::format("an anchor must be a single measured point; '{}' has {}", anchor_ref->as_string(),
                                     anchor.points.size()));
      curve = finish_curve(hw::anchored_curve(curve, anchor.points.front()).points, *anchor_ref, what);
      src += fmt::format(", anchored to {} ({})", anchor_ref->as_string(), anchor.source);
    }
    if (auto note = one.optional("note")) src += "; " + nonempty_string(*note);
    one.finish();
    d.sources["gemm_efficiency." + pname] = src;
    d.gemm_efficiency_by_precision[p] = std::move(curve);
  }
  g.finish();
  // The untyped curve is the training precision's, bf16, where the device has it.
  auto bf16 = d.gemm_efficiency_by_precision.find(Precision::bf16);
  d.gemm_efficiency = bf16 != d.gemm_efficiency_by_precision.end() ? bf16->second
                                                                      : d.gemm_efficiency_by_precision.begin()->second;
}

// The curve of a `measurements:` list (at `at`, the map holding it). Attention measurements may name
// their pass (`pass: forward | backward`, forward by default); `backward` collects the backward
// points into their own curve, which stays empty when there are none.
EfficiencyCurve parse_rate_curve(const Node& measurements, const Node& at, Kind kind, DeviceSpec& d,
                                 const std::string& field, EfficiencyCurve* backward = nullptr) {
  const Node& node = at;
  std::vector<EfficiencyCurve::Point> pts, bwd_pts;
  std::vector<std::string> srcs, bwd_srcs;
  std::set<std::string> ids;
  for (const Node& m : measurements.items()) {
    MapReader mr(m);
    Node id = mr.required("id");
    if (!ids.insert(nonempty_string(id)).second) id.fail(fmt::format("duplicate measurement id '{}'", id.as_string()));
    std::optional<Precision> dtype;
    std::optional<Node> dtype_node;
    double size = 0;
    double rate = 0;
    bool is_backward = false;
    if (kind == Kind::attention) {
      if (auto pass = mr.optional("pass")) is_backward = pass->as_choice({"forward", "backward"}) == "backward";
      dtype_node = mr.required("dtype");
      dtype = core::parse_precision(dtype_node->as_choice(precision_names()));
      size = positive_double(mr.required("flops"));
      rate = positive(mr.required("rate"), mr.required("rate").as_flop_rate()).value();
    } else {
      size = positive(mr.required("bytes"), mr.required("bytes").as_bytes()).value();
      rate = positive(mr.required("rate"), mr.required("rate").as_bandwidth()).value();
    }
    (is_backward ? bwd_srcs : srcs).push_back(fmt::format("{} ({})", id.as_string(), nonempty_string(mr.required("source"))));
    MeasuringDevice on = measuring_device(mr.optional("measured_on"), kind, d, dtype, dtype_node ? *dtype_node : m);
    mr.finish();
    (is_backward ? bwd_pts : pts).push_back(located(m, [&] { return hw::rate_point(size, rate, on); }));
  }
  if (pts.empty()) node.fail(fmt::format("{}: at least one forward measurement is needed", field));
  if (!bwd_pts.empty()) {
    d.sources[field + ".backward"] = "derived from " + core::join(bwd_srcs, "; ");
    *backward = finish_curve(std::move(bwd_pts), node, field + " (backward)");
  }
  d.sources[field] = "derived from " + core::join(srcs, "; ");
  return finish_curve(std::move(pts), node, field);
}

// `memory:` holds the streaming measurements.
EfficiencyCurve parse_memory_curve(const Node& node, DeviceSpec& d) {
  MapReader r(node);
  EfficiencyCurve c = parse_rate_curve(r.required("measurements"), node, Kind::memory, d, "memory_efficiency");
  r.finish();
  return c;
}

bool valid_name(const std::string& s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-';
  });
}

// `attention:` (docs/devices.md, "Attention implementations"): named implementations, each with its
// own measured forward (and where measured, backward) curve, and the one the device runs unless an
// experiment picks another (training.attention). Their sources are kept under "attention.<name>";
// the selected one's also under "attention_efficiency" (DeviceSpec::with_attention).
void parse_attention(const Node& node, DeviceSpec& d) {
  MapReader r(node);
  if (r.has("measurements"))
    node.child("measurements")
        .fail("attention measurements belong to a named implementation: write attention: {default: NAME, "
              "implementations: [{name: NAME, description: ..., measurements: [...]}]} (docs/devices.md)");
  std::vector<std::string> names;
  for (const Node& item : r.required("implementations").items()) {
    MapReader ir(item);
    Node name_node = ir.required("name");
    hw::AttentionImplementation impl;
    impl.name = name_node.as_string();
    if (!valid_name(impl.name))
      name_node.fail(fmt::format("'{}' is not an implementation name; allowed: lower-case letters, digits and '-'", impl.name));
    if (std::find(names.begin(), names.end(), impl.name) != names.end())
      name_node.fail(fmt::format("duplicate attention implementation '{}'", impl.name));
    impl.description = nonempty_string(ir.required("description"));
    impl.forward = parse_rate_curve(ir.required("measurements"), item, Kind::attention, d, "attention." + impl.name,
                                    &impl.backward);
    ir.finish();
    names.push_back(impl.name);
    d.attention_implementations.push_back(std::move(impl));
  }
  if (names.empty()) node.child("implementations").fail("needs at least one implementation");
  Node def = r.required("default");
  d.default_attention = def.as_string();
  r.finish();
  if (std::find(names.begin(), names.end(), d.default_attention) == names.end()) {
    const std::string hint = core::closest_match(d.default_attention, names);
    def.fail(fmt::format("'{}' is not one of this device's attention implementations{}; they are: {}", d.default_attention,
                         hint.empty() ? "" : fmt::format(" (did you mean '{}'?)", hint), core::join(names)));
  }
  d = d.with_attention(d.default_attention);
}

// `power:` and `thermal:` (docs/power.md). Every scalar here carries a source under
// "power.<key>" / "thermal.<key>" (sourced_fields).
const std::vector<std::string> kPowerKeys = {"idle", "calibration", "hbm_pj_per_byte", "onchip_pj_per_byte",
                                             "communication", "min_clock_mhz", "clock_step_mhz", "voltage_floor",
                                             "voltage_knee_mhz", "memory_clock_share", "min_power_cap", "leakage_w_per_c"};
const std::vector<std::string> kThermalKeys = {"resistance_air_c_per_w", "resistance_liquid_c_per_w", "capacitance_j_per_c",
                                               "slowdown_c", "shutdown_c", "hysteresis_c"};

double fraction(const Node& n, bool zero_ok) {
  const double v = n.as_double();
  if (!(v <= 1 && (zero_ok ? v >= 0 : v > 0))) n.fail(fmt::format("must be a fraction in {}0, 1]; got {}", zero_ok ? "[" : "(", v));
  return v;
}

void parse_power(const Node& node, DeviceSpec& d) {
  MapReader r(node);
  hw::PowerSpec& p = d.power;
  p.idle = positive(r.required("idle"), r.required("idle").as_watts());
  {
    Node cal = r.required("calibration");
    MapReader cr(cal);
    p.calibration_rate = positive(cr.required("rate"), cr.required("rate").as_flop_rate());
    Node prec = cr.required("precision");
    p.calibration_precision = *core::parse_precision(prec.as_choice(precision_names()));
    p.calibration_clock_mhz = positive_double(cr.required("clock_mhz"));
    const auto dims = parse_shape(cr.required("shape"));
    p.calibration_m = dims[0];
    p.calibration_n = dims[1];
    p.calibration_k = dims[2];
    (void)nonempty_string(cr.required("measurement"));
    cr.finish();
  }
  p.hbm_pj_per_byte = positive_double(r.required("hbm_pj_per_byte"));
  p.onchip_pj_per_byte = positive_double(r.required("onchip_pj_per_byte"));
  p.communication = positive(r.required("communication"), r.required("communication").as_watts());
  p.min_clock_mhz = positive_double(r.required("min_clock_mhz"));
  p.clock_step_mhz = positive_double(r.required("clock_step_mhz"));
  p.voltage_floor = fraction(r.required("voltage_floor"), false);
  p.voltage_knee_mhz = positive_double(r.required("voltage_knee_mhz"));
  p.memory_clock_share = fraction(r.required("memory_clock_share"), true);
  p.min_power_cap = positive(r.required("min_power_cap"), r.required("min_power_cap").as_watts());
  {
    Node leak = r.required("leakage_w_per_c");
    p.leakage_w_per_c = leak.as_double();
    if (!(p.leakage_w_per_c >= 0 && p.leakage_w_per_c <= 20))
      leak.fail(fmt::format("{} is out of range; allowed: 0 to 20 W per C", p.leakage_w_per_c));
  }
  r.finish();
  // How the figures fit together (idle below board power, the clocks in order, the calibration
  // GEMM below the peak and its traffic below board - idle) is hw::PowerModel's check, run by
  // parse_device once the thermal data it needs is read too.
}

void parse_thermal(const Node& node, DeviceSpec& d) {
  MapReader r(node);
  hw::ThermalSpec& t = d.thermal;
  t.resistance_air_c_per_w = positive_double(r.required("resistance_air_c_per_w"));
  t.resistance_liquid_c_per_w = positive_double(r.required("resistance_liquid_c_per_w"));
  t.capacitance_j_per_c = positive_double(r.required("capacitance_j_per_c"));
  t.slowdown_c = r.required("slowdown_c").as_double();
  t.shutdown_c = r.required("shutdown_c").as_double();
  t.hysteresis_c = r.required("hysteresis_c").as_double();
  r.finish();
  if (!(t.slowdown_c < t.shutdown_c) || !(t.hysteresis_c >= 0 && t.hysteresis_c < t.slowdown_c))
    node.fail(fmt::format("needs slowdown_c < shutdown_c and 0 <= hysteresis_c; got {}, {}, {}", t.slowdown_c, t.shutdown_c,
                          t.hysteresis_c));
}

// `memory_reserve:` (docs/devices.md, "Memory"): what a training process cannot use of the
// reported capacity. Each figure is a size (0 allowed: AMD's runtime sees all of amd-smi's total)
// and carries a source under "memory_reserve.<key>"; together they must leave some memory.
const std::vector<std::string> kReserveKeys = {"driver", "context", "per_communicator"};

core::Bytes non_negative_size(const Node& n) {
  const core::Bytes b = n.as_bytes();
  if (!(b.value() >= 0)) n.fail(fmt::format("must not be negative; got '{}'", n.raw().Scalar()));
  return b;
}

void parse_memory_reserve(const Node& node, DeviceSpec& d) {
  MapReader r(node);
  hw::MemoryReserve& m = d.memory_reserve;
  m.driver = non_negative_size(r.required("driver"));
  m.context = non_negative_size(r.required("context"));
  m.per_communicator = non_negative_size(r.required("per_communicator"));
  r.finish();
  // A process with one communicator must still have memory left: a reserve at or above the
  // capacity is a unit slip (MB for MiB, a capacity in GB read as bytes).
  if (!(m.total(1) < d.hbm_capacity))
    node.fail(fmt::format("driver + context + one communicator's buffers ({:.0f} MiB) leave nothing of hbm_capacity "
                          "({:.0f} MiB); check the units",
                          m.total(1).value() / 1048576.0, d.hbm_capacity.value() / 1048576.0));
}

// The figures that must carry a source, by the key `sources` uses.
std::vector<std::string> sourced_fields(const DeviceSpec& d) {
  std::vector<std::string> keys;
  for (const auto& [p, rate] : d.peak_dense) keys.push_back("peak_dense." + std::string(core::to_string(p)));
  for (const char* k : {"vector_fp32", "hbm_capacity", "hbm_bandwidth", "board_power", "scale_up_bandwidth",
                        "compute_units", "max_clock_mhz", "kernel_launch_overhead", "comm_interference", "gemm.tile"})
    keys.emplace_back(k);
  for (const auto& k : kReserveKeys) keys.push_back("memory_reserve." + k);
  for (const auto& k : kPowerKeys) keys.push_back("power." + k);
  for (const auto& k : kThermalKeys) keys.push_back("thermal." + k);
  return keys;
}

}  // namespace

hw::DeviceSpec parse_device(const Node& root) {
  // Unknown keys first, so a misspelt required key reads "did you mean", not "missing".
  {
    MapReader keys(root);
    for (const char* k : {"name", "display_name", "vendor", "peak_dense", "vector_fp32", "hbm_capacity", "memory_reserve", "hbm_bandwidth",
                          "board_power", "scale_up_bandwidth", "compute_units", "max_clock_mhz",
                          "kernel_launch_overhead", "comm_interference", "sources", "gemm", "attention", "memory",
                          "power", "thermal"})
      (void)keys.optional(k);
    keys.finish();
  }
  MapReader r(root);
  DeviceSpec d;
  d.file = root.file();
  Node name = r.required("name");
  d.name = name.as_string();
  if (!valid_name(d.name))
    name.fail(fmt::format("'{}' is not a catalog name; allowed: lower-case letters, digits and '-'", d.name));
  // The file is found by its name, so the two must agree.
  const std::string& file = root.file();
  if (file.size() > 5 && file.compare(file.size() - 5, 5, ".yaml") == 0) {
    std::size_t slash = file.find_last_of('/');
    std::string stem = file.substr(slash == std::string::npos ? 0 : slash + 1);
    stem.resize(stem.size() - 5);
    if (stem != d.name) name.fail(fmt::format("'{}' does not match the file name '{}.yaml'", d.name, stem));
  }
  d.display_name = nonempty_string(r.required("display_name"));
  d.vendor = r.required("vendor").as_choice({"nvidia", "amd"});
  {
    Node peaks = r.required("peak_dense");
    MapReader pr(peaks);
    for (Precision p : kAllPrecisions)
      if (auto v = pr.optional(std::string(core::to_string(p)))) d.peak_dense[p] = positive(*v, v->as_flop_rate());
    pr.finish();
    if (d.peak_dense.empty()) peaks.fail(fmt::format("needs at least one precision; allowed: {}", core::kPrecisionNames));
  }
  d.vector_fp32 = positive(r.required("vector_fp32"), r.required("vector_fp32").as_flop_rate());
  d.hbm_capacity = positive(r.required("hbm_capacity"), r.required("hbm_capacity").as_bytes());
  parse_memory_reserve(r.required("memory_reserve"), d);
  d.hbm_bandwidth = positive(r.required("hbm_bandwidth"), r.required("hbm_bandwidth").as_bandwidth());
  d.board_power = positive(r.required("board_power"), r.required("board_power").as_watts());
  d.scale_up_bandwidth = positive(r.required("scale_up_bandwidth"), r.required("scale_up_bandwidth").as_bandwidth());
  d.compute_units = static_cast<int>(r.required("compute_units").as_int(1, 1000000));
  d.max_clock_mhz = positive_double(r.required("max_clock_mhz"));
  d.kernel_launch_overhead = launch_overhead(r.required("kernel_launch_overhead"));
  {
    Node ci = r.required("comm_interference");
    d.comm_interference = ci.as_double();
    if (!(d.comm_interference >= 0 && d.comm_interference < 1))
      ci.fail(fmt::format("comm_interference: {} must be a slowdown fraction in [0, 1)", d.comm_interference));
  }
  const Node power = r.required("power");
  parse_power(power, d);
  parse_thermal(r.required("thermal"), d);
  located(power, [&] { (void)hw::PowerModel(d); });
  {
    Node sources = r.required("sources");
    MapReader sr(sources);
    for (const std::string& key : sourced_fields(d)) {
      if (!sr.has(key))
        sources.fail(fmt::format("missing the source of '{}': every figure needs one (hardware.md key or data entry)", key));
      d.sources[key] = nonempty_string(sr.required(key));
    }
    sr.finish();
  }
  parse_gemm(r.required("gemm"), d);
  parse_attention(r.required("attention"), d);
  d.memory_efficiency = parse_memory_curve(r.required("memory"), d);
  r.finish();
  return d;
}

const std::vector<hw::DeviceSpec>& device_catalog() {
  // A function-local static is initialised once, thread-safely, on first use.
  static const std::vector<hw::DeviceSpec> devices = [] {
    std::vector<hw::DeviceSpec> out;
    for (const auto& [file, text] : embedded::catalog_devices())
      out.push_back(parse_device(load_yaml_string(std::string(text), "<embedded>/" + std::string(file))));
    std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.name < b.name; });
    for (std::size_t i = 1; i < out.size(); ++i)
      core::check_invariant(out[i].name != out[i - 1].name, "device names are unique (they equal file names)");
    return out;
  }();
  return devices;
}

const hw::DeviceSpec& find_device(const std::string& name) {
  // The embedded catalog alone; its devices are static, so the reference outlives the temporary.
  return DeviceCatalog().find(name);
}

std::string format_device_table(const std::vector<hw::DeviceSpec>& devices) {
  auto tflops = [](const DeviceSpec& d, Precision p) -> std::string {
    auto it = d.peak_dense.find(p);
    return it == d.peak_dense.end() ? "-" : fmt::format("{:.1f}", it->second.value() / 1e12);
  };
  std::size_t w = 4;
  for (const auto& d : devices) w = std::max(w, d.name.size());
  // HBM as the driver reports it, in GiB (what nvidia-smi and amd-smi print, in MiB / 1024).
  std::string out = fmt::format("{:<{}}  {:>12}  {:>11}  {:>7}  {:>8}  {:>13}  {:>7}\n", "name", w, "bf16 TFLOP/s",
                                "fp8 TFLOP/s", "HBM GiB", "HBM TB/s", "scale-up GB/s", "board W");
  for (const auto& d : devices)
    out += fmt::format("{:<{}}  {:>12}  {:>11}  {:>7.1f}  {:>8.2f}  {:>13.0f}  {:>7.0f}\n", d.name, w,
                       tflops(d, Precision::bf16), tflops(d, Precision::fp8), d.hbm_capacity.value() / 1073741824.0,
                       d.hbm_bandwidth.value() / 1e12, d.scale_up_bandwidth.value() / 1e9, d.board_power.value());
  return out;
}

}  // namespace inflect::io
