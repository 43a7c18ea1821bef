// inflect: a discrete-event simulator of LLM-training clusters. See README.md.
#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <cstdio>
#include <new>

#include "cli/commands.hpp"
#include "inflect/core/error.hpp"
#include "inflect/io/experiment_loader.hpp"
#include "inflect/plan/fidelity.hpp"

namespace {

// --fidelity, read by plan::parse_fidelity; its error (naming the allowed values) is a usage error.
void add_fidelity_option(CLI::App* cmd, inflect::plan::Fidelity& into, const std::string& help) {
  cmd->add_option_function<std::string>(
      "--fidelity",
      [&into](const std::string& name) {
        try {
          into = inflect::plan::parse_fidelity(name);
        } catch (const inflect::core::Error& e) {
          throw CLI::ValidationError("--fidelity", e.message());
        }
      },
      help);
}

// --catalog DIR (repeatable): the user's own device files, added to the embedded catalog.
void add_catalog_option(CLI::App* cmd, std::vector<std::string>& into) {
  cmd->add_option("--catalog", into,
                  "a folder of device YAML files (docs/devices.md) added to the catalog for this run; repeatable")
      ->type_name("DIR");
}

// --topology T, --collective, --ranks, --nodes: how measured nccl-tests tables are read onto a cluster.
void add_table_options(CLI::App* cmd, inflect::cli::TableArgs& t) {
  cmd->add_option("--topology", t.topology, "topology YAML of the cluster the measurements ran on")->required();
  cmd->add_option("--collective", t.collective, "the collective, when a file does not say");
  cmd->add_option("--ranks", t.ranks, "ranks that ran it, when a file does not say")->check(CLI::PositiveNumber);
  cmd->add_option("--nodes", t.nodes, "nodes they spanned (default: ranks / devices per node)")->check(CLI::PositiveNumber);
}

// --profile P: a calibrated profile (inflect calibrate) on every experiment the command runs.
void add_profile_option(CLI::App* cmd, std::string& into) {
  cmd->add_option("--profile", into, "a calibrated profile (inflect calibrate): collectives, and the device if it has one, "
                                     "as measured on your cluster")
      ->type_name("P.yaml");
}

}  // namespace

int main(int argc, char** argv) {
  using namespace inflect;
  io::set_project_root(INFLECT_SOURCE_DIR);
  CLI::App app{"inflect: simulate LLM training on modeled clusters"};
  app.require_subcommand(1);
  app.footer("Exit codes (README.md \"Exit codes\"): 0 simulated (validate: would be); 1 internal error; 2 bad input "
             "(a file, a key, an option); 3 valid but not simulated (memory does not fit; run --ignore-memory simulates "
             "anyway; validate-suite: its --gate failed; compare, study: a regression).");

  cli::RunArgs run;
  auto* run_cmd = app.add_subcommand("run", "simulate one experiment: summary on stdout, report.json and trace.json in --out");
  run_cmd->add_option("experiment", run.experiment, "experiment YAML")->required();
  auto* out_opt = run_cmd->add_option("--out", run.out_dir, "directory for report.json and trace.json (default out/)");
  run_cmd->add_flag("--json", run.json, "print report.json on stdout and nothing else");
  add_fidelity_option(run_cmd, run.fidelity, "full (every rank) or symmetric (one rank per class)");
  run_cmd->add_flag("--unfused", run.unfused, "one op per kernel and per collective instead of one per block or run of back-to-back collectives (same timing, bigger trace)");
  run_cmd->add_option("--trace-ranks", run.trace_ranks, "ranks kept in trace.json (default 64)")->check(CLI::PositiveNumber);
  run_cmd->add_flag("--no-trace", run.no_trace, "do not write trace.json");
  run_cmd->add_flag("--oneline", run.oneline, "print a one-line summary instead of the full one");
  run_cmd->add_flag("--retime", run.retime,
                    "a recorded trace (workload.chakra / workload.kineto): time its compute from its FLOPs, bytes and shapes "
                    "on this device instead of the recorded durations (workload.retime: true)");
  add_profile_option(run_cmd, run.profile);
  run_cmd->add_flag("--ignore-memory", run.ignore_memory,
                    "simulate a plan whose memory does not fit (by default it is reported, not simulated)");
  add_catalog_option(run_cmd, run.catalog_dirs);
  run_cmd->add_option("--max-ops", run.max_ops,
                      "with --fidelity full: refuse when the estimated ops of every rank exceed this (default 1e8)")
      ->check(CLI::PositiveNumber);

  cli::ScanArgs scan;
  auto* scan_cmd = app.add_subcommand("scan", "run a what-if scan (sweep axes, plan families): results, findings, report.html");
  scan_cmd->add_option("scan", scan.file, "scan YAML (an experiment plus sweep:, plans:, where:, analysis:)")->required();
  scan_cmd->add_option("--out", scan.out_dir, "directory for results.csv/.jsonl, scan.json, report.md/.html (default out/scan)");
  scan_cmd->add_option("--jobs,-j", scan.jobs, "points simulated in parallel (default: all hardware threads)")
      ->check(CLI::NonNegativeNumber);
  scan_cmd->add_flag("--resume", scan.resume, "keep the rows already in --out and run only the missing points");
  scan_cmd->add_option("--shard", scan.shard, "run only the i-th of N disjoint parts (i/N, 1 <= i <= N); join with merge");
  add_fidelity_option(scan_cmd, scan.fidelity, "full or symmetric (default)");
  scan_cmd->add_flag("--quiet,-q", scan.quiet, "no progress output");
  scan_cmd->add_option("--max-points", scan.max_points,
                       "refuse a scan that expands to more points than this, before any runs (default 10000)")
      ->check(CLI::Range(1, 100000));
  add_catalog_option(scan_cmd, scan.catalog_dirs);
  add_profile_option(scan_cmd, scan.profile);

  cli::SearchArgs search;
  auto* search_cmd = app.add_subcommand("search", "find the best plans: enumerate, prune by memory, estimate, simulate the top K");
  search_cmd->add_option("search", search.file, "search YAML (an experiment without its plan, plus search:)")->required();
  auto* top_opt = search_cmd->add_option("--top", search.top, "plans simulated with the engine (default: search.top, else 10)")
                      ->check(CLI::Range(1, 10000));
  search_cmd->add_option("--jobs,-j", search.jobs, "threads (default: all hardware threads)")->check(CLI::NonNegativeNumber);
  add_fidelity_option(search_cmd, search.fidelity, "full or symmetric (default)");
  search_cmd->add_option("--out", search.out_dir, "also write search.json (counts, estimates, the simulated plans' reports) here");
  search_cmd->add_flag("--json", search.json, "print search.json on stdout and nothing else");
  search_cmd->add_option("--nodes", search.nodes, "search for this many nodes instead of the file's cluster.nodes")
      ->check(CLI::Range(1, 1 << 20));
  add_catalog_option(search_cmd, search.catalog_dirs);
  add_profile_option(search_cmd, search.profile);

  cli::PlacementsArgs placements;
  auto* placements_cmd = app.add_subcommand(
      "placements", "lay the plan onto the cluster's sites every way that changes what crosses the WAN (dp, pp, cp, ep "
                    "outermost; flat or hierarchical data parallelism), simulate each, rank them and say why each loses");
  placements_cmd->add_option("experiment", placements.experiment, "experiment YAML with cluster.sites")->required();
  placements_cmd->add_option("--out", placements.out_dir, "also write placements.json (every placement's figures and report) here");
  placements_cmd->add_option("--threads,--jobs,-j", placements.jobs, "threads (default: all hardware threads)")
      ->check(CLI::NonNegativeNumber);
  add_fidelity_option(placements_cmd, placements.fidelity, "full or symmetric (default)");
  placements_cmd->add_flag("--quiet,-q", placements.quiet, "no progress lines");
  add_catalog_option(placements_cmd, placements.catalog_dirs);
  add_profile_option(placements_cmd, placements.profile);

  cli::JobsArgs jobs;
  auto* jobs_cmd = app.add_subcommand(
      "jobs", "place several jobs on a cluster's sites by each policy (pack, spread), simulate them together on the shared "
              "fabric and WAN and each alone, and rank the policies by total throughput with each job's slowdown and why");
  jobs_cmd->add_option("file", jobs.file, "jobs YAML: cluster, jobs (name, experiment, nodes), policies")->required();
  jobs_cmd->add_option("--out", jobs.out_dir, "also write jobs.json here");
  jobs_cmd->add_option("--threads,--jobs,-j", jobs.threads, "threads (default: all hardware threads)")->check(CLI::NonNegativeNumber);
  jobs_cmd->add_flag("--quiet,-q", jobs.quiet, "no progress lines");
  add_catalog_option(jobs_cmd, jobs.catalog_dirs);

  std::string report_dir;
  auto* report_cmd = app.add_subcommand("report", "re-render report.md and report.html of a scan from its saved results");
  report_cmd->add_option("dir", report_dir, "a scan's output directory")->required();

  std::vector<std::string> merge_dirs;
  std::string merge_out = "out/scan";
  auto* merge_cmd = app.add_subcommand("merge", "join the results of a scan's shards (scan --shard i/N) and render its reports");
  merge_cmd->add_option("dirs", merge_dirs, "the shards' output directories")->required();
  merge_cmd->add_option("--out", merge_out, "directory for the joined results (default out/scan)");

  // --catalog for the commands that take no Args struct (only one subcommand runs).
  std::vector<std::string> catalog_dirs;
  std::string validate_file;
  auto* validate_cmd = app.add_subcommand("validate", "check an experiment file; simulates nothing");
  validate_cmd->add_option("experiment", validate_file, "experiment YAML")->required();
  add_catalog_option(validate_cmd, catalog_dirs);

  auto* devices_cmd = app.add_subcommand("devices", "print the device catalog (with --catalog: and your devices)");
  add_catalog_option(devices_cmd, catalog_dirs);

  cli::ExportArgs exp;
  auto* export_cmd = app.add_subcommand("export", "write the execution graph an experiment compiles to (or a trace imports to): "
                                                  "inflect's JSON, or Chakra execution traces per rank");
  export_cmd->add_option("experiment", exp.experiment, "experiment YAML")->required();
  export_cmd->add_option("--format", exp.format, "json (inflect's execution graph, default) or chakra (MLCommons Chakra ET: "
                                                 "NAME.RANK.et per simulated rank in --out, and their JSON in --out/json)")
      ->check(CLI::IsMember({"json", "chakra"}));
  export_cmd->add_option("--out", exp.out, "output file for json (default graph.json); directory for chakra (default chakra/)");
  add_fidelity_option(export_cmd, exp.fidelity, "full or symmetric (default)");
  add_catalog_option(export_cmd, catalog_dirs);

  cli::CheckCollectivesArgs check;
  auto* check_cmd = app.add_subcommand("check-collectives", "replay every row of a measured nccl-tests / rccl-tests table through the collective model: measured vs simulated time and busbw, and the mean error");
  check_cmd->add_option("file", check.file, "nccl-tests output (text, -J JSON, or a Markdown table)")->required();
  add_table_options(check_cmd, check.table);
  check_cmd->add_option("--profile", check.profile, "a calibrated profile (inflect calibrate) to check instead of the model");

  cli::CalibrateArgs calib_args;
  auto* calib_cmd = app.add_subcommand("calibrate", "fit the collective model to your nccl-tests results (and a device to your GEMM sweeps and telemetry) and write a profile (--profile for run, scan, search and check-collectives)");
  calib_cmd->add_option("path", calib_args.path, "an nccl-tests result file, GEMM sweep or telemetry log, or a folder of them")->required();
  add_table_options(calib_cmd, calib_args.table);
  calib_cmd->add_option("--out", calib_args.out, "the profile YAML to write")->required();
  calib_cmd->add_option("--name", calib_args.name, "the profile's name (default: the --out file's name)");
  calib_cmd->add_option("--device", calib_args.device, "the catalog device GEMM sweeps and telemetry (*.csv) calibrate (default: the topology's)");
  calib_cmd->add_option("--inlet-c", calib_args.inlet_c, "inlet air or coolant temperature (C) the telemetry ran at: needed to fit the thermal resistance");

  cli::CollectiveArgs coll;
  auto* coll_cmd = app.add_subcommand("collective", "one collective's modelled time, algbw and busbw (nccl-tests' definitions), or a sweep as an nccl-tests table");
  coll_cmd->add_option("kind", coll.kind, "all_reduce, reduce_scatter, all_gather, all_to_all, sendrecv, broadcast or reduce")->required();
  coll_cmd->add_option("size", coll.size, "message size in nccl-tests' meaning (e.g. 1GiB); or --sweep");
  coll_cmd->add_option("--topology", coll.topology, "topology YAML")->required();
  coll_cmd->add_option("--nodes", coll.nodes, "nodes (default 1)");
  coll_cmd->add_option("--devices-per-node", coll.devices_per_node, "devices used per node (default: all)");
  coll_cmd->add_option("--sweep", coll.sweep, "LO:HI sizes, doubling (e.g. 8B:16GiB)");
  coll_cmd->add_option("--step-factor", coll.step_factor, "size multiplier between sweep rows (default 2)");
  coll_cmd->add_option("--algorithm", coll.algorithm, "force an algorithm (ring, tree, nvls, nvls_tree, pat, direct, ...)");
  coll_cmd->add_option("--protocol", coll.protocol, "force a protocol (ll, ll128, simple)");

  cli::ValidateSuiteArgs suite;
  auto* suite_cmd = app.add_subcommand("validate-suite", "simulate every published training run in a folder (default "
                                                         "workloads/validation): each case's error and the MAPE per framework, precision and device");
  suite_cmd->add_option("dir", suite.dir, "folder of validation cases (experiment YAMLs with a validation: block)");
  suite_cmd->add_option("--jobs,-j", suite.jobs, "cases simulated in parallel (default: all hardware threads)")
      ->check(CLI::NonNegativeNumber);
  suite_cmd->add_flag("--json", suite.json, "print the results as JSON (errors as fractions) and nothing else");
  suite_cmd->add_option("--gate", suite.gate_percent, "exit 3 when any case's |error| exceeds this many percent (default: no gate)")
      ->type_name("PCT");
  add_fidelity_option(suite_cmd, suite.fidelity, "full or symmetric (default)");

  cli::CompareArgs cmp;
  auto* compare_cmd = app.add_subcommand("compare", "compare two reports, two scan result folders or two study result folders "
                                                    "point by point; exit 3 when a threshold is crossed or a point appeared, "
                                                    "vanished or changed status");
  compare_cmd->add_option("base", cmp.base, "the base: report.json, a scan's --out folder or a study's")->required();
  compare_cmd->add_option("new", cmp.now, "the new side, of the same kind")->required();
  compare_cmd->add_option("--fail-on", cmp.fail_on, "METRIC:CHANGE, e.g. step_time_s:+2% tokens_per_s:-1% mfu:1% "
                                                    "memory.peak_bytes:+0; repeatable")
      ->type_name("METRIC:CHANGE");
  compare_cmd->add_option("--thresholds", cmp.thresholds_file, "a YAML file with fail_on: {metric: change, ...}")->type_name("FILE");
  compare_cmd->add_option("--markdown", cmp.markdown, "also write the comparison as Markdown (a pull-request comment)")
      ->type_name("FILE");
  compare_cmd->add_option("--junit", cmp.junit, "also write JUnit XML (a test case per point and metric)")->type_name("FILE");
  compare_cmd->add_flag("--all", cmp.all, "list unchanged points too");

  cli::StudyArgs study_args;
  auto* study_cmd = app.add_subcommand("study", "run a regression study (experiments and scans with baselines) and compare "
                                                "with its baselines; exit 3 on a regression");
  study_cmd->add_option("study", study_args.file, "study YAML (docs/studies.md)")->required();
  study_cmd->add_option("--out", study_args.out_dir, "folder for the results and comparison.{txt,md}, junit.xml (default out/study)");
  study_cmd->add_option("--jobs,-j", study_args.jobs, "threads (default: all hardware threads)")->check(CLI::NonNegativeNumber);
  study_cmd->add_flag("--update-baselines", study_args.update_baselines,
                      "rewrite the baselines from this run, on purpose (the comparison is still printed)");
  study_cmd->add_flag("--quiet,-q", study_args.quiet, "no progress lines");

  bool quick = false;
  auto* bench_cmd = app.add_subcommand("bench", "measure the simulator's own speed");
  bench_cmd->add_flag("--quick", quick, "skip the 16,384-GPU full-fidelity case (and replay 20k-node traces, not 100k)");
  bool traces_only = false;
  bench_cmd->add_flag("--traces", traces_only, "only the trace-replay cases (Chakra files written and replayed)");

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    int rc = app.exit(e);
    return rc == 0 ? cli::kExitOk : cli::kExitInput;
  }
  try {
    if (*run_cmd) {
      run.out_given = out_opt->count() > 0;
      return cli::cmd_run(run);
    }
    if (*scan_cmd) return cli::cmd_scan(scan);
    if (*search_cmd) {
      search.top_given = top_opt->count() > 0;
      return cli::cmd_search(search);
    }
    if (*placements_cmd) return cli::cmd_placements(placements);
    if (*jobs_cmd) return cli::cmd_jobs(jobs);
    if (*report_cmd) return cli::cmd_report(report_dir);
    if (*merge_cmd) return cli::cmd_merge(merge_dirs, merge_out);
    if (*validate_cmd) return cli::cmd_validate(validate_file, catalog_dirs);
    if (*suite_cmd) return cli::cmd_validate_suite(suite);
    if (*devices_cmd) return cli::cmd_devices(catalog_dirs);
    if (*export_cmd) {
      exp.catalog_dirs = catalog_dirs;
      return cli::cmd_export(exp);
    }
    if (*bench_cmd) {
      if (!traces_only) return cli::cmd_bench(quick);
      cli::bench_traces(quick);
      return 0;
    }
    if (*compare_cmd) return cli::cmd_compare(cmp);
    if (*study_cmd) return cli::cmd_study(study_args);
    if (*coll_cmd) return cli::cmd_collective(coll);
    if (*check_cmd) return cli::cmd_check_collectives(check);
    if (*calib_cmd) return cli::cmd_calibrate(calib_args);
  } catch (const core::Error& e) {
    std::fprintf(stderr, "inflect: error: %s\n", core::format_error(e).c_str());
    return e.kind() == core::ErrorKind::internal ? cli::kExitInternal : cli::kExitInput;
  } catch (const std::bad_alloc&) {
    // Not a defect: the work asked for does not fit this machine's memory. Say what to change.
    std::fprintf(stderr,
                 "inflect: error: out of memory: the execution graph or the scan did not fit in this machine's memory; use the "
                 "symmetric fidelity (the default), fewer ranks or points, or a machine with more memory\n");
    return cli::kExitInput;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "inflect: internal error: %s\n", e.what());
    return cli::kExitInternal;
  }
  return 0;
}
