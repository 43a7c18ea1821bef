#pragma once
// The `inflect` subcommands. Each returns the process exit code: 0 success, 2 bad input (any
// core::Error of kind input or io, printed as "inflect: error: file:line:col: key: message").
#include <optional>
#include <string>
#include <vector>

#include "inflect/io/device_catalog.hpp"
#include "inflect/plan/fidelity.hpp"
#include "inflect/scan/scan_file.hpp"

namespace inflect::cli {

/// The exit codes every command shares; docs/report.md "Exit codes" is their table.
inline constexpr int kExitOk = 0;            // simulated (or, for validate, would be)
inline constexpr int kExitInternal = 1;      // a defect in inflect
inline constexpr int kExitInput = 2;         // bad input: a file, a key, a command-line option
inline constexpr int kExitNotSimulated = 3;  // valid but not simulated (memory does not fit); a gate failed
inline constexpr int kExitGateFailed = 3;     // the same code: compare, study, validate-suite --gate found a regression

struct RunArgs {
  std::string experiment;
  std::string out_dir = "out";
  bool out_given = false;
  bool json = false;
  plan::Fidelity fidelity = plan::Fidelity::symmetric;
  bool unfused = false;
  int trace_ranks = 64;
  bool no_trace = false;
  bool oneline = false;
  bool ignore_memory = false;
  bool retime = false;  // --retime: a trace's compute timed on the device (workload.retime)
  /// --fidelity full is refused when its estimated op count (the symmetric graph's ops per rank
  /// times the ranks) exceeds this: a budget raised on purpose, not hours of work by accident.
  double max_ops = 1e8;
  std::string profile;  // a calibrated profile (inflect calibrate), empty = none
  std::vector<std::string> catalog_dirs;  // --catalog: folders of the user's device files
};

struct ScanArgs {
  std::string file;
  std::string out_dir = "out/scan";
  int jobs = 0;  // 0 = all hardware threads
  bool resume = false;
  std::string shard;  // "i/N", empty = the whole scan
  plan::Fidelity fidelity = plan::Fidelity::symmetric;
  bool quiet = false;
  std::vector<std::string> catalog_dirs;
  std::string profile;  // a calibrated profile applied to every point
  /// The most points (before where: filters) a scan may expand to before it is refused: a budget
  /// the user raises on purpose, so a short file cannot start hours of work by accident.
  int max_points = scan::kDefaultMaxPoints;
};

/// inflect compare BASE NEW (docs/studies.md).
struct CompareArgs {
  std::string base, now;
  std::vector<std::string> fail_on;  // METRIC:CHANGE thresholds
  std::string thresholds_file;       // a YAML file with fail_on:
  std::string markdown, junit;       // also write these files
  bool all = false;                  // list unchanged points too
};

/// inflect study STUDY.yaml (docs/studies.md).
struct StudyArgs {
  std::string file;
  std::string out_dir = "out/study";
  int jobs = 0;
  bool update_baselines = false;
  bool quiet = false;
};

struct SearchArgs {
  std::string file;
  int top = 10;
  bool top_given = false;  // else the file's search.top
  int jobs = 0;            // 0 = all hardware threads
  plan::Fidelity fidelity = plan::Fidelity::symmetric;
  std::string out_dir;     // empty = write nothing
  bool json = false;
  int nodes = 0;           // > 0: overrides cluster.nodes
  std::string profile;  // a calibrated profile applied to the base experiment
  std::vector<std::string> catalog_dirs;
};

/// inflect placements X.yaml (docs/placements.md).
struct PlacementsArgs {
  std::string experiment;
  std::string out_dir;  // empty = write nothing
  int jobs = 0;         // 0 = all hardware threads
  plan::Fidelity fidelity = plan::Fidelity::symmetric;
  bool quiet = false;
  std::string profile;
  std::vector<std::string> catalog_dirs;
};

/// inflect jobs X.yaml (docs/geo.md, "Several jobs on shared sites").
struct JobsArgs {
  std::string file;
  std::string out_dir;  // empty = write nothing
  int threads = 0;      // 0 = all hardware threads
  bool quiet = false;
  std::vector<std::string> catalog_dirs;
};

struct CollectiveArgs {
  std::string kind;            // all_reduce, reduce_scatter, all_gather, all_to_all, sendrecv, broadcast, reduce
  std::string size;            // one size, or empty with --sweep
  std::string topology;
  int nodes = 1;
  int devices_per_node = 0;    // 0 = the topology's
  std::string sweep;           // "LO:HI"
  double step_factor = 2;
  std::string algorithm;       // empty = the topology's or the library's choice
  std::string protocol;
};

/// How measured nccl-tests tables are read onto a cluster (check-collectives and calibrate).
struct TableArgs {
  std::string topology;
  std::string collective;  // when a file does not say
  std::optional<int> ranks, nodes;
};

struct CheckCollectivesArgs {
  std::string file;
  std::string profile;
  TableArgs table;
};

struct CalibrateArgs {
  std::string path;  // a results file or a folder of them
  std::string out;
  std::string name;  // the profile's name (default: the --out file's stem)
  std::string device;  // the catalog device GEMM sweeps calibrate (default: the topology's)
  std::optional<double> inlet_c;  // the inlet the telemetry ran at (thermal fits need it)
  TableArgs table;
};

/// `inflect validate-suite`: exit 0, or 3 when --gate is given and a case is outside it.
struct ValidateSuiteArgs {
  std::string dir = "workloads/validation";
  int jobs = 0;  // 0 = all hardware threads
  bool json = false;
  std::optional<double> gate_percent;  // fail when any figure's |error| is above this many percent
  plan::Fidelity fidelity = plan::Fidelity::symmetric;
};

int cmd_run(const RunArgs& a);
int cmd_validate_suite(const ValidateSuiteArgs& a);
int cmd_check_collectives(const CheckCollectivesArgs& a);
int cmd_calibrate(const CalibrateArgs& a);
int cmd_collective(const CollectiveArgs& a);
int cmd_search(const SearchArgs& a);
int cmd_placements(const PlacementsArgs& a);
int cmd_jobs(const JobsArgs& a);
int cmd_compare(const CompareArgs& a);
int cmd_study(const StudyArgs& a);
int cmd_scan(const ScanArgs& a);
int cmd_report(const std::string& dir);
int cmd_merge(const std::vector<std::string>& dirs, const std::string& out_dir);
int cmd_validate(const std::string& experiment, const std::vector<std::string>& catalog_dirs);
int cmd_devices(const std::vector<std::string>& catalog_dirs);
struct ExportArgs {
  std::string experiment;
  std::string out;  // empty: graph.json (json) or chakra/ (chakra)
  std::string format = "json";
  plan::Fidelity fidelity = plan::Fidelity::symmetric;
  std::vector<std::string> catalog_dirs;
};
int cmd_export(const ExportArgs& a);
/// The embedded catalog plus every `--catalog` folder's devices, read before any experiment.
io::DeviceCatalog load_catalog(const std::vector<std::string>& dirs);
int cmd_bench(bool quick);
/// The trace-replay cases of `inflect bench` (bench_traces.cpp).
void bench_traces(bool quick);

}  // namespace inflect::cli
