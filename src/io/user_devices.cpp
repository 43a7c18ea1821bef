// io::DeviceCatalog: the embedded catalog plus the user's own device files (`--catalog DIR`,
// `cluster.device_file`), each read by parse_device, so a device of one's own is checked exactly
// as a bundled one is. Declared in include/inflect/io/device_catalog.hpp.
#include <algorithm>
#include <filesystem>
#include <string>
#include <system_error>
#include <vector>

#include <fmt/format.h>

#include "inflect/core/error.hpp"
#include "inflect/core/strings.hpp"
#include "inflect/io/device_catalog.hpp"
#include "io/embedded.hpp"

namespace inflect::io {

namespace {

namespace fs = std::filesystem;
using core::Error;
using core::ErrorKind;

constexpr std::string_view kEmbedded = "<embedded>/";

bool same_file(const std::string& a, const std::string& b) {
  if (a == b) return true;
  std::error_code ec;  // an embedded device's "<embedded>/x.yaml" is no file: not the same
  return fs::equivalent(a, b, ec) && !ec;
}

/// The device `d` (read from `root`) may join `catalog` unless a device of its name came from
/// another file; the error points at the new file's `name:` line. Returns false when the same file
/// is already there (nothing to add).
bool check_new(const hw::DeviceSpec& d, const Node& root, const DeviceCatalog& catalog) {
  const hw::DeviceSpec* taken = catalog.lookup(d.name);
  if (taken == nullptr) return true;
  if (same_file(taken->file, d.file)) return false;
  root.child("name").fail(fmt::format("device '{}' in {} is already in the catalog ({}); rename it", d.name, d.file,
                                      device_origin(*taken)));
}

std::vector<hw::DeviceSpec> copy_of(const std::shared_ptr<const std::vector<hw::DeviceSpec>>& p) {
  return p ? *p : std::vector<hw::DeviceSpec>{};
}

}  // namespace

std::string device_yaml_text(const hw::DeviceSpec& d) {
  if (d.file.rfind(kEmbedded, 0) == 0) {
    const std::string name = d.file.substr(kEmbedded.size());
    for (const auto& [file, text] : embedded::catalog_devices())
      if (file == name) return std::string(text);
    throw core::Error(core::ErrorKind::internal, "embedded device file '" + name + "' not found");
  }
  return read_text_file(d.file, "device file");
}

std::string device_origin(const hw::DeviceSpec& d) {
  if (d.file.rfind(kEmbedded, 0) == 0) return "calibration/devices/" + d.file.substr(kEmbedded.size());
  return d.file;
}

void DeviceCatalog::add_file(const std::string& path) {
  const Node root = load_yaml_file(path, "device file");
  hw::DeviceSpec d = parse_device(root);
  if (!check_new(d, root, *this)) return;
  std::vector<hw::DeviceSpec> next = copy_of(added_);
  next.push_back(std::move(d));
  added_ = std::make_shared<const std::vector<hw::DeviceSpec>>(std::move(next));
}

void DeviceCatalog::add_dir(const std::string& dir) {
  std::error_code ec;
  if (!fs::is_directory(dir, ec))
    throw Error(ErrorKind::io, fmt::format("device folder '{}' not found (--catalog takes a folder of device YAML files)", dir));
  std::vector<std::string> files;
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    std::error_code file_ec;
    if (entry.path().extension() == ".yaml" && entry.is_regular_file(file_ec)) files.push_back(entry.path().string());
  }
  if (ec) throw Error(ErrorKind::io, fmt::format("cannot read device folder '{}': {}", dir, ec.message()));
  if (files.empty())
    throw Error(ErrorKind::io, fmt::format("device folder '{}' holds no device files (*.yaml); see docs/devices.md", dir));
  std::sort(files.begin(), files.end());
  // Built aside and kept only when every file is good: a failed add changes nothing.
  DeviceCatalog next = *this;
  for (const auto& f : files) next.add_file(f);
  *this = std::move(next);
}

const hw::DeviceSpec* DeviceCatalog::lookup(const std::string& name) const {
  for (const auto& d : device_catalog())
    if (d.name == name) return &d;
  if (added_)
    for (const auto& d : *added_)
      if (d.name == name) return &d;
  return nullptr;
}

const hw::DeviceSpec& DeviceCatalog::find(const std::string& name) const {
  if (const hw::DeviceSpec* d = lookup(name)) return *d;
  std::vector<std::string> names;
  for (const auto& d : all()) names.push_back(d.name);
  // The common short form ("h100") is a prefix of the names it means; it may mean several
  // ("h100-nvl", "h100-sxm"), and edit distance would pick one of them arbitrarily, so every
  // device it starts is suggested. Otherwise the closest name by edit distance.
  std::vector<std::string> prefixed;
  if (!name.empty())
    for (const auto& n : names)
      if (n.rfind(name, 0) == 0) prefixed.push_back("'" + n + "'");
  std::string hint;
  if (!prefixed.empty()) {
    hint = prefixed.size() == 1 ? prefixed.front()
                                : core::join(std::vector<std::string>(prefixed.begin(), prefixed.end() - 1)) + " or " +
                                      prefixed.back();
  } else if (std::string closest = core::closest_match(name, names); !closest.empty()) {
    hint = "'" + closest + "'";
  }
  throw Error(ErrorKind::input, fmt::format("unknown device '{}'{}; known: {}", name,
                                            hint.empty() ? "" : fmt::format(" (did you mean {}?)", hint), core::join(names)));
}

std::vector<hw::DeviceSpec> DeviceCatalog::all() const {
  std::vector<hw::DeviceSpec> out = device_catalog();
  if (added_) out.insert(out.end(), added_->begin(), added_->end());
  std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.name < b.name; });
  return out;
}

std::vector<hw::DeviceSpec> DeviceCatalog::added() const { return copy_of(added_); }

hw::DeviceSpec load_device_file(const std::string& path, const DeviceCatalog& catalog) {
  const Node root = load_yaml_file(path, "device file");
  hw::DeviceSpec d = parse_device(root);
  (void)check_new(d, root, catalog);
  return d;
}

}  // namespace inflect::io
