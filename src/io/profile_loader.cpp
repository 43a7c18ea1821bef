#include "inflect/io/profile_loader.hpp"

#include <fmt/format.h>

#include <cmath>
#include <filesystem>

#include "inflect/core/error.hpp"
#include "inflect/calib/profile.hpp"
#include "inflect/io/collective_library_loader.hpp"

namespace inflect::io {
namespace {

constexpr net::CollectiveOp kOps[] = {net::CollectiveOp::all_reduce, net::CollectiveOp::reduce_scatter,
                                      net::CollectiveOp::all_gather, net::CollectiveOp::all_to_all,
                                      net::CollectiveOp::send_recv, net::CollectiveOp::broadcast,
                                      net::CollectiveOp::reduce};
constexpr net::FabricLevel kLevels[] = {net::FabricLevel::intra_node, net::FabricLevel::inter_node};

/// The value of `all` whose key(value) is written at `n`; else the reader's choice error.
template <class T, std::size_t N>
T by_key(const Node& n, const T (&all)[N], const char* (*key)(T)) {
  std::vector<std::string> names;
  for (T v : all) names.emplace_back(key(v));
  const std::string name = n.as_choice(names);
  for (T v : all)
    if (name == key(v)) return v;
  return all[0];  // as_choice accepted one of the names
}

double in_range(const Node& n, double lo, double hi, bool lo_open) {
  const double v = n.as_double();
  if (!std::isfinite(v) || v < lo || (lo_open && v == lo) || v > hi)
    n.fail(fmt::format("{} is out of range; allowed: {}{}, {}]", v, lo_open ? "(" : "[", lo, hi));
  return v;
}

}  // namespace

Profile parse_profile(const Node& root) {
  MapReader r(root);
  for (const char* k : {"profile", "topology", "device_file", "algorithm", "protocol", "collectives"}) (void)r.optional(k);
  r.finish();
  Profile out;
  net::CollectiveProfile& p = out.collectives;
  p.file = root.file();
  p.name = r.required("profile").as_string();
  p.topology = r.required("topology").as_string();
  if (auto d = r.optional("device_file")) {
    const std::filesystem::path rel(d->as_string());
    out.device_file = rel.is_absolute() ? rel.string() : (std::filesystem::path(root.file()).parent_path() / rel).string();
  }
  if (auto a = r.optional("algorithm")) out.algorithm = read_algorithm(*a, /*allow_auto=*/false);
  if (auto pr = r.optional("protocol")) out.protocol = read_protocol(*pr, /*allow_auto=*/false);
  std::vector<Node> items;
  if (auto c = r.optional("collectives")) items = c->items();
  if (items.empty() && out.device_file.empty() && !out.algorithm && !out.protocol)
    root.fail("a profile needs collectives fits, a device_file, or an algorithm or protocol (inflect calibrate writes them)");
  for (const Node& item : items) {
    MapReader fr(item);
    for (const char* k : {"collective", "level", "min_size", "latency", "scale", "sqrt_coefficient", "source"}) (void)fr.optional(k);
    fr.finish();
    net::CollectiveFit f;
    // The names are the ones calibrate writes (calib::op_key, calib::level_key): one table for both.
    f.op = by_key(fr.required("collective"), kOps, &calib::op_key);
    f.level = by_key(fr.required("level"), kLevels, &calib::level_key);
    f.latency = read_short_latency(fr.required("latency"));
    // A fit's scale is the measured wire time over the model's: far from 1 it is another cluster.
    f.scale = in_range(fr.required("scale"), 1e-3, 1e3, true);
    f.sqrt_coefficient = in_range(fr.required("sqrt_coefficient"), 0, 1, false);
    if (auto ms = fr.optional("min_size")) f.min_size = ms->as_bytes();
    f.source = fr.required("source").as_string();
    for (const auto* other : p.find(f.op, f.level))
      if (other->min_size.value() == f.min_size.value())
        item.fail(fmt::format("a second fit for {} at {} from {} bytes; give one per collective, level and min_size",
                              calib::op_key(f.op), calib::level_key(f.level), f.min_size.value()));
    p.fits.push_back(std::move(f));
  }
  return out;
}

Profile load_profile(const std::string& path) { return parse_profile(load_yaml_file(path, "profile")); }

void apply_profile(net::TopologySpec& spec, const net::CollectiveProfile& profile) {
  if (profile.topology != spec.name)
    throw core::Error(core::ErrorKind::input,
                      fmt::format("profile '{}' ({}) was fitted on topology '{}', not '{}'; calibrate this topology's "
                                  "measurements, or use its own topology file",
                                  profile.name, profile.file, profile.topology, spec.name));
  spec.collectives.profile = profile;
}

void apply_profile(plan::Experiment& e, const Profile& profile, const DeviceCatalog& catalog) {
  apply_profile(e.cluster.topology, profile.collectives);
  auto& choice = e.cluster.topology.collectives;
  if (!choice.algorithm) choice.algorithm = profile.algorithm;  // the experiment's or topology's own wins
  if (!choice.protocol) choice.protocol = profile.protocol;
  if (!profile.device_file.empty()) e.cluster.device = load_device_file(profile.device_file, catalog);
}

}  // namespace inflect::io
