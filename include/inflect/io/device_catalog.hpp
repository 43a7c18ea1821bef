#pragma once
// The device catalog: calibration/devices/*.yaml, embedded into the binary at build time.
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

}  // namespace inflect::io
