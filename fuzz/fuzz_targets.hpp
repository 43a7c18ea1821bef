#pragma once
// The bodies of the fuzz targets, shared by the libFuzzer executables (fuzz/fuzz_*.cpp) and the
// corpus replay test (tests/io/test_fuzz_corpus.cpp), so every crash a fuzzer finds can be kept
// as a corpus file and replayed in the ordinary test run without libFuzzer.
//
// Contract: a parser may reject any input, but only with core::Error of kind input or io. Any
// other exception (std::out_of_range from a bounds check, YAML::Exception leaking past the
// reader, an internal invariant) is a bug and escapes, which libFuzzer reports as a crash.
#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "inflect/calib/gemm_sweep.hpp"
#include "inflect/calib/nccl_tests.hpp"
#include "inflect/calib/telemetry.hpp"
#include "inflect/core/error.hpp"
#include "inflect/io/collective_library_loader.hpp"
#include "inflect/io/device_catalog.hpp"
#include "inflect/io/experiment_loader.hpp"
#include "inflect/io/jobs_loader.hpp"
#include "inflect/io/model_loader.hpp"
#include "inflect/io/profile_loader.hpp"
#include "inflect/io/topology_loader.hpp"
#include "inflect/io/validation_suite.hpp"
#include "inflect/io/yaml_reader.hpp"
#include "inflect/net/collective.hpp"
#include "inflect/net/topology.hpp"
#include "inflect/workload/graph_json.hpp"
#include "inflect/workload/trace_import.hpp"

namespace inflect::fuzz {

/// The input as text; bytes are taken as they are (YAML and JSON parsers must cope with any).
inline std::string as_text(const std::uint8_t* data, std::size_t size) {
  return size == 0 ? std::string() : std::string(reinterpret_cast<const char*>(data), size);
}

/// An experiment YAML; relative paths resolve against the project root, so corpus files can name
/// topologies/dgx-a100.yaml.
inline void experiment_yaml(const std::uint8_t* data, std::size_t size) {
  io::Node root = io::load_yaml_string(as_text(data, size), "<fuzz experiment>");
  (void)io::parse_experiment(root, io::project_root());
}

inline void topology_yaml(const std::uint8_t* data, std::size_t size) {
  (void)io::parse_topology(io::load_yaml_string(as_text(data, size), "<fuzz topology>"));
}

inline void device_yaml(const std::uint8_t* data, std::size_t size) {
  (void)io::parse_device(io::load_yaml_string(as_text(data, size), "<fuzz device>"));
}

/// An experiment's `model:` map (a preset name plus overrides, or fields inline).
inline void model_yaml(const std::uint8_t* data, std::size_t size) {
  (void)io::parse_model(io::load_yaml_string(as_text(data, size), "<fuzz model>"));
}

inline void graph_json(const std::uint8_t* data, std::size_t size) {
  workload::ExecutionGraph g = workload::graph_from_json(as_text(data, size), "<fuzz graph>");
  g.validate();  // a parsed graph must be one the engine may run, or be rejected here
}

/// One Chakra rank file, protobuf (`.et`) or chakra_jsonizer JSON: whatever it holds must import
/// into a graph the engine may run, or be rejected as input.
inline void chakra_file(const std::uint8_t* data, std::size_t size, const char* name) {
  workload::ImportedTrace t = workload::import_trace_text(workload::TraceFormat::chakra, name, as_text(data, size), {});
  t.graph.validate();
  (void)workload::graph_to_json(t.graph);
}
inline void chakra_et(const std::uint8_t* data, std::size_t size) { chakra_file(data, size, "fuzz.0.et"); }
inline void chakra_json(const std::uint8_t* data, std::size_t size) { chakra_file(data, size, "fuzz.0.json"); }

/// One rank's PyTorch profiler (Kineto) trace, imported with --retime so that GEMM and attention
/// shapes are read too: whatever it holds must import into a graph the engine may run, or be
/// rejected as input.
inline void kineto(const std::uint8_t* data, std::size_t size) {
  workload::TraceImportOptions o;
  o.retime = true;
  workload::ImportedTrace t = workload::import_trace_text(workload::TraceFormat::kineto, "fuzz.json", as_text(data, size), o);
  t.graph.validate();
  (void)workload::graph_to_json(t.graph);
}

/// nccl-tests output in any form parse_nccl_tests reads; the file name names a collective so that
/// inputs without one reach past the kind rules. Every row's time is asked for too (the helpers'
/// invariants hold for whatever the parser accepts).
inline void nccl_tests(const std::uint8_t* data, std::size_t size) {
  const auto table = calib::parse_nccl_tests(as_text(data, size), "fuzz_all_reduce.txt");
  for (const auto& row : table.rows) (void)calib::nccl_row_time(row, table.ranks);
}

inline void gemm_sweep(const std::uint8_t* data, std::size_t size) {
  (void)calib::parse_gemm_sweep(as_text(data, size), "<fuzz gemm sweep>");
}

inline void telemetry(const std::uint8_t* data, std::size_t size) {
  (void)calib::parse_telemetry(as_text(data, size), "<fuzz telemetry>");
}

/// A calibrated profile (inflect calibrate's output), then applied to a bundled topology's spec and
/// used to price collectives, so fits with odd values reach the cost formula too.
inline void profile_yaml(const std::uint8_t* data, std::size_t size) {
  const net::CollectiveProfile p = io::parse_profile(io::load_yaml_string(as_text(data, size), "<fuzz profile>")).collectives;
  net::TopologySpec spec = io::load_topology(io::project_root() + "/topologies/dgx-h100.yaml");
  spec.name = p.topology;
  io::apply_profile(spec, p);
  const net::Topology topo(spec, 2);
  const std::vector<net::DeviceId> members = {0, 1, 8, 9};
  for (double bytes : {8.0, 1e6, 1e9}) (void)net::collective_cost_model(net::CollectiveOp::all_reduce, members, topo).time(core::Bytes(bytes));
}

/// A collective library file (calibration/collectives/*.yaml's format), then used to price a collective.
inline void collective_library_yaml(const std::uint8_t* data, std::size_t size) {
  net::CollectiveLibrary lib =
      io::parse_collective_library(io::load_yaml_string(as_text(data, size), "<fuzz collective library>"));
  net::TopologySpec spec = io::load_topology(io::project_root() + "/topologies/dgx-h100.yaml");
  spec.collectives.library = lib;
  const net::Topology topo(spec, 2);
  const std::vector<net::DeviceId> members = {0, 1, 8, 9};
  for (double bytes : {8.0, 1e6, 1e9}) (void)net::lower_collective(net::CollectiveOp::all_reduce, members, core::Bytes(bytes), topo);
}

/// A validation case's `validation:` block (workloads/validation/*.yaml), read as the suite reads
/// it; the file name gives the case_id the seeds carry.
inline void validation_case_yaml(const std::uint8_t* data, std::size_t size) {
  (void)io::parse_validation_case(io::load_yaml_string(as_text(data, size), "fuzz-case.yaml"), "fuzz-case.yaml");
}

/// A jobs file (`inflect jobs`): the shared cluster, each job's experiment (paths resolve against
/// the project root, so seeds name workloads/examples/...) and its share, as the command reads it.
inline void jobs_yaml(const std::uint8_t* data, std::size_t size) {
  (void)io::parse_jobs(io::load_yaml_string(as_text(data, size), "<fuzz jobs>"), io::project_root());
}

using Entry = void (*)(const std::uint8_t*, std::size_t);

/// A fuzz target: its name is its corpus folder (fuzz/corpus/<name>/) and executable (fuzz_<name>).
struct Target {
  std::string_view name;
  Entry entry;
};

inline constexpr std::array<Target, 15> kTargets = {{
    {"experiment_yaml", &experiment_yaml},
    {"topology_yaml", &topology_yaml},
    {"device_yaml", &device_yaml},
    {"model_yaml", &model_yaml},
    {"graph_json", &graph_json},
    {"chakra_et", &chakra_et},
    {"chakra_json", &chakra_json},
    {"kineto", &kineto},
    {"nccl_tests", &nccl_tests},
    {"gemm_sweep", &gemm_sweep},
    {"telemetry", &telemetry},
    {"profile_yaml", &profile_yaml},
    {"collective_library_yaml", &collective_library_yaml},
    {"validation_case_yaml", &validation_case_yaml},
    {"jobs_yaml", &jobs_yaml},
}};

/// Runs one input through `entry`, swallowing the rejections the contract allows. Returns true if
/// the input was accepted, false if it was rejected with core::Error(input | io); anything else
/// (including core::Error(internal), which marks a bug) propagates.
inline bool run_one(Entry entry, const std::uint8_t* data, std::size_t size) {
  try {
    entry(data, size);
    return true;
  } catch (const core::Error& e) {
    if (e.kind() == core::ErrorKind::internal) throw;
    return false;
  }
}

}  // namespace inflect::fuzz
