#include "cli/commands.hpp"

#include <fmt/format.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>

#include "inflect/analysis/simulate.hpp"
#include "inflect/core/error.hpp"
#include "inflect/hw/compute_model.hpp"
#include "inflect/io/chrome_trace.hpp"
#include "inflect/io/device_catalog.hpp"
#include "inflect/io/experiment_loader.hpp"
#include "inflect/io/profile_loader.hpp"
#include "inflect/io/provenance.hpp"
#include "inflect/io/report_json.hpp"
#include "inflect/plan/compiler.hpp"
#include "inflect/plan/plausibility.hpp"
#include "inflect/sim/engine.hpp"
#include "inflect/workload/chakra_export.hpp"
#include "inflect/workload/graph_json.hpp"

namespace inflect::cli {
namespace {

// On stderr, so --json's stdout stays the report alone (which carries them too, in `warnings`).
void print_warnings(const std::vector<std::string>& warnings) {
  for (const auto& w : warnings) std::fprintf(stderr, "inflect: warning: %s\n", w.c_str());
}

}  // namespace

io::DeviceCatalog load_catalog(const std::vector<std::string>& dirs) {
  io::DeviceCatalog catalog;
  for (const auto& d : dirs) catalog.add_dir(d);
  return catalog;
}

// Full fidelity simulates every rank. Its size is estimated up front from the symmetric graph (a
// few milliseconds: its ops per stored rank times the cluster's ranks), said on stderr when it is
// large, and refused past --max-ops: a million-GPU full-fidelity run used to work for ten minutes
// printing nothing.
void check_full_fidelity_budget(const plan::Experiment& e, const RunArgs& a) {
  if (a.fidelity != plan::Fidelity::full || !e.workload.model) return;
  plan::CompileOptions o;
  o.fidelity = plan::Fidelity::symmetric;
  const plan::CompiledPlan c = plan::compile(e, o);
  const auto& g = c.graph;
  const std::size_t simulated = g.simulated_ranks().size();
  if (simulated == 0) return;
  // Every op of the symmetric graph, replicas' included, over the ranks it simulates.
  const double estimate = static_cast<double>(g.op_count()) / static_cast<double>(simulated) * g.total_ranks();
  if (estimate > a.max_ops)
    throw core::Error(core::ErrorKind::input,
                      fmt::format("{}: --fidelity full would simulate about {:.3g} ops over {} ranks, over the budget of {:.3g} "
                                  "(--max-ops); run the symmetric fidelity (the default; it simulates {} rank classes), or raise "
                                  "--max-ops on purpose",
                                  a.experiment, estimate, g.total_ranks(), a.max_ops, simulated));
  if (estimate > 1e7)
    std::fprintf(stderr, "full fidelity: about %.3g ops over %d ranks (symmetric: %zu rank classes); this takes a while\n", estimate,
                 g.total_ranks(), simulated);
}

int cmd_run(const RunArgs& a) {
  // Every file the run reads, for report.json's provenance.
  io::InputRecorder inputs;
  const io::DeviceCatalog catalog = load_catalog(a.catalog_dirs);
  plan::Experiment e = io::load_experiment(a.experiment, catalog);
  if (!a.profile.empty()) io::apply_profile(e, io::load_profile(a.profile), catalog);
  if (a.retime) {
    if (e.workload.model)
      throw core::Error(core::ErrorKind::input, fmt::format("--retime re-times a recorded trace's compute; {} compiles a model, "
                                                            "which is always timed on its device", a.experiment));
    e.workload.retime = true;
  }
  check_full_fidelity_budget(e, a);
  analysis::SimulateOptions so;
  so.fidelity = a.fidelity;
  so.fuse_blocks = !a.unfused;
  so.simulate_over_memory = a.ignore_memory;
  const bool write_files = !a.json || a.out_given;
  io::ChromeTraceWriter trace(a.trace_ranks);
  if (write_files && !a.no_trace) {
    // The trace goes to its file as it is formatted: a full-fidelity trace reaches a gigabyte.
    io::make_directories(a.out_dir);
    trace.stream_to((std::filesystem::path(a.out_dir) / "trace.json").string());
    so.observer = &trace;
  }
  analysis::RunReport r = analysis::simulate(e, so);
  r.provenance = io::provenance_of(e, inputs.files());
  print_warnings(r.warnings);
  const bool traced = !a.no_trace && r.simulated;
  if (write_files) {
    io::make_directories(a.out_dir);
    io::write_text_file((std::filesystem::path(a.out_dir) / "report.json").string(), io::report_to_json(r) + "\n");
    if (traced) trace.write((std::filesystem::path(a.out_dir) / "trace.json").string());
  }
  if (a.json) {
    std::fputs((io::report_to_json(r) + "\n").c_str(), stdout);
  } else if (a.oneline && !r.simulated) {
    std::fputs(fmt::format("{:<28} {:>6} GPUs {:<10} {:<44} NOT SIMULATED: does not fit (mem {:5.1f}/{:.0f} GiB)\n", r.name, r.devices,
                           r.device, r.plan, r.memory.peak.value() / 1073741824.0, r.memory.capacity.value() / 1073741824.0)
                   .c_str(),
               stdout);
  } else if (a.oneline) {
    std::fputs(fmt::format("{:<28} {:>6} GPUs {:<10} {:<44} step {:8.3f} s  {:>10.0f} tok/s  {:6.1f} TFLOP/s/GPU  MFU {:5.1f}%  "
                           "mem {:5.1f}/{:.0f} GiB{}\n",
                           r.name, r.devices, r.device, r.plan, r.step_time.value(), r.tokens_per_s.value_or(std::nan("")), r.model_tflops_per_gpu.value_or(std::nan("")), 100 * r.mfu.value_or(std::nan("")),
                           r.memory.peak.value() / 1073741824.0, r.memory.capacity.value() / 1073741824.0,
                           r.memory.fits ? "" : " DOES NOT FIT")
                   .c_str(),
               stdout);
  } else {
    std::fputs(io::format_summary(r).c_str(), stdout);
    if (write_files)
      std::fputs(fmt::format("\nwrote {0}/report.json{1}\n", a.out_dir, !traced ? "" : fmt::format(" and {}/trace.json", a.out_dir)).c_str(),
                 stdout);
  }
  // 3: valid but not simulated (docs/report.md "Exit codes"); the report says why. A script's gate
  // must not read a skipped plan as a simulated one.
  return r.simulated ? kExitOk : kExitNotSimulated;
}

int cmd_validate(const std::string& experiment, const std::vector<std::string>& catalog_dirs) {
  plan::Experiment e = io::load_experiment(experiment, load_catalog(catalog_dirs));
  print_warnings(plan::plausibility_warnings(e));
  std::string what;
  bool fits = true;
  if (e.workload.model) {
    plan::check_plan(e);
    plan::MemoryEstimate mem = plan::estimate_memory(e, plan::derive_dp(e));
    fits = mem.fits();
    what = fmt::format("model {} on {} x {} ({} devices), dp={}; peak memory {:.1f} GiB of {:.1f} GiB", e.workload.model->name,
                       e.cluster.nodes, e.cluster.topology.name, e.cluster.devices(), plan::derive_dp(e), mem.peak.value() / 1073741824.0,
                       mem.capacity.value() / 1073741824.0);
  } else {
    // A trace is read whole: its errors (and a rank count that does not match the cluster) show here.
    const workload::ExecutionGraph g = analysis::build_graph(e);
    analysis::check_graph(e, g);
    what = fmt::format("{} trace {}: {} ranks, {} ops, on {} devices", workload::to_string(e.workload.trace_format),
                       e.workload.trace_file, g.total_ranks(), g.op_count(), e.cluster.devices());
  }
  if (!fits) {
    // Valid, but `inflect run` would report it without simulating it: exit 3, as run does.
    std::fputs(fmt::format("{}: valid but NOT SIMULATED: its memory does not fit ({}); `inflect run` reports it without "
                           "simulating it (--ignore-memory simulates anyway)\n",
                           experiment, what)
                   .c_str(),
               stdout);
    return kExitNotSimulated;
  }
  std::fputs(fmt::format("{}: ok: {}\n", experiment, what).c_str(), stdout);
  return kExitOk;
}

int cmd_devices(const std::vector<std::string>& catalog_dirs) {
  std::fputs(io::format_device_table(load_catalog(catalog_dirs).all()).c_str(), stdout);
  return 0;
}

int cmd_export(const ExportArgs& a) {
  plan::Experiment e = io::load_experiment(a.experiment, load_catalog(a.catalog_dirs));
  analysis::SimulateOptions so;
  so.fidelity = a.fidelity;
  workload::ExecutionGraph g = analysis::build_graph(e, so);
  if (a.format == "json") {
    const std::string out = a.out.empty() ? "graph.json" : a.out;
    io::write_text_file(out, workload::graph_to_json(g));
    std::fputs(fmt::format("wrote {} ({} ops on {} simulated ranks)\n", out, g.op_count(), g.simulated_ranks().size()).c_str(), stdout);
    return 0;
  }
  // Chakra: NAME.RANK.et per simulated rank in --out, and the JSON chakra_jsonizer would print for
  // each in --out/json (a directory holds one trace). Each kernel's duration on the experiment's
  // device goes into duration_micros, for ASTRA-sim's replay.
  const std::string dir = a.out.empty() ? "chakra" : a.out;
  const std::string json_dir = (std::filesystem::path(dir) / "json").string();
  io::make_directories(json_dir);
  const hw::ComputeModel model(e.cluster.device);
  std::vector<core::Time> durations;
  for (const auto& k : g.kernels()) durations.push_back(sim::kernel_duration(k, model));
  std::string stem = std::filesystem::path(a.experiment).stem().string();
  int files = 0;
  workload::export_chakra(g, &durations, [&](const workload::ChakraRankTrace& t) {
    io::write_text_file((std::filesystem::path(dir) / fmt::format("{}.{}.et", stem, t.rank)).string(), t.et);
    io::write_text_file((std::filesystem::path(json_dir) / fmt::format("{}.{}.json", stem, t.rank)).string(), t.json);
    ++files;
  });
  std::fputs(fmt::format("wrote {} Chakra rank files to {}/ ({}.RANK.et) and {}/ (JSON); {} ops on {} simulated ranks of {}\n",
                         files, dir, stem, json_dir, g.op_count(), g.simulated_ranks().size(), g.total_ranks())
                 .c_str(),
             stdout);
  return 0;
}

}  // namespace inflect::cli
