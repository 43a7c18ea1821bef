#pragma once
// The device catalog: calibration/devices/*.yaml, embedded into the binary at build time, plus the
// user's own device files (`--catalog DIR`, `cluster.device_file`), read by the same parser.
#include <memory>
#include <string>
#include <vector>

#include "inflect/hw/device.hpp"
#include "inflect/io/yaml_reader.hpp"

namespace inflect::io {

/// Parses one device document (strict keys; every figure's source is required).
hw::DeviceSpec parse_device(const Node& root);
/// Every embedded device, sorted by name; parsed once, thread-safe.
const std::vector<hw::DeviceSpec>& device_catalog();
/// The device named `name`; throws core::Error(input): "unknown device 'h100' (did you mean
/// 'h100-sxm'?); known: ...".
const hw::DeviceSpec& find_device(const std::string& name);
/// The table `inflect devices` prints: name, peaks per precision, HBM, bandwidths, power.
std::string format_device_table(const std::vector<hw::DeviceSpec>& devices);

/// The devices a run may name: the embedded catalog plus the user's own device files, each parsed
/// by parse_device. A value passed to whatever loads experiments (no process-wide state): default-
/// constructed it is the embedded catalog alone; copies are cheap (the added devices are shared and
/// never modified: adding makes a new list) and may be read from any number of threads.
/// (src/io/user_devices.cpp)
class DeviceCatalog {
 public:
  DeviceCatalog() = default;

  /// Adds every `*.yaml` directly in `dir` (`inflect ... --catalog DIR`), in file-name order.
  /// Throws core::Error(io) when `dir` is not a folder or holds no *.yaml, the parser's located
  /// input error for a bad file, and core::Error(input) at the file's `name` when a device of
  /// that name is already here (see add_file). Adds nothing when it throws.
  void add_dir(const std::string& dir);
  /// Adds the device file at `path`. A name already in the catalog is an error naming both files:
  /// "device 'h100-sxm' in DIR/h100-sxm.yaml is already in the catalog
  /// (calibration/devices/h100-sxm.yaml); rename it".
  void add_file(const std::string& path);

  /// The device named `name`, or nullptr.
  const hw::DeviceSpec* lookup(const std::string& name) const;
  /// The device named `name`; unknown: core::Error(input) as find_device's, listing every name here.
  const hw::DeviceSpec& find(const std::string& name) const;
  /// Every device, embedded and added, sorted by name.
  std::vector<hw::DeviceSpec> all() const;
  /// The devices added to the embedded ones, in the order added.
  std::vector<hw::DeviceSpec> added() const;

 private:
  std::shared_ptr<const std::vector<hw::DeviceSpec>> added_;
};

/// Reads the device file at `path` (as cluster.device_file does) and checks it does not take the
/// name of a catalog device read from another file (the DeviceCatalog::add_file message). Errors
/// are located in the device file.
hw::DeviceSpec load_device_file(const std::string& path, const DeviceCatalog& catalog);

/// The text of the file a device was read from (the embedded catalog's, or the user's file): what
/// `inflect calibrate` starts a calibrated device from.
std::string device_yaml_text(const hw::DeviceSpec& d);

/// Where a device was read from, as messages show it: "calibration/devices/h100-sxm.yaml" for an
/// embedded device, else its file as given.
std::string device_origin(const hw::DeviceSpec& d);

}  // namespace inflect::io
