#include "inflect/calib/profile.hpp"

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include <sstream>

namespace inflect::calib {

const char* op_key(net::CollectiveOp op) {
  switch (op) {
    case net::CollectiveOp::all_reduce: return "all_reduce";
    case net::CollectiveOp::reduce_scatter: return "reduce_scatter";
    case net::CollectiveOp::all_gather: return "all_gather";
    case net::CollectiveOp::all_to_all: return "all_to_all";
    case net::CollectiveOp::send_recv: return "send_recv";
    case net::CollectiveOp::broadcast: return "broadcast";
    case net::CollectiveOp::reduce: return "reduce";
  }
  return "?";
}

const char* level_key(net::FabricLevel level) {
  return level == net::FabricLevel::intra_node ? "intra_node" : "inter_node";
}

std::string profile_yaml(const net::CollectiveProfile& profile, const std::string& header_comment,
                         const std::string& device_file) {
  YAML::Emitter out;
  out.SetDoublePrecision(6);
  std::istringstream lines(header_comment);
  std::string line;
  while (std::getline(lines, line)) out << YAML::Comment(line) << YAML::Newline;
  out << YAML::BeginMap;
  out << YAML::Key << "profile" << YAML::Value << profile.name;
  out << YAML::Key << "topology" << YAML::Value << profile.topology;
  if (!device_file.empty()) out << YAML::Key << "device_file" << YAML::Value << device_file;
  out << YAML::Key << "collectives" << YAML::Value << YAML::BeginSeq;
  for (const auto& f : profile.fits) {
    out << YAML::BeginMap;
    out << YAML::Key << "collective" << YAML::Value << op_key(f.op);
    out << YAML::Key << "level" << YAML::Value << level_key(f.level);
    out << YAML::Key << "min_size" << YAML::Value << fmt::format("{:.0f}B", f.min_size.value());
    // Units written out, as every input file has them.
    out << YAML::Key << "latency" << YAML::Value << fmt::format("{:.4g}us", f.latency.value() * 1e6);
    out << YAML::Key << "scale" << YAML::Value << f.scale;
    out << YAML::Key << "sqrt_coefficient" << YAML::Value << f.sqrt_coefficient;
    out << YAML::Key << "source" << YAML::Value << YAML::DoubleQuoted << f.source;
    out << YAML::EndMap;
  }
  out << YAML::EndSeq << YAML::EndMap;
  return std::string(out.c_str()) + "\n";
}

}  // namespace inflect::calib
