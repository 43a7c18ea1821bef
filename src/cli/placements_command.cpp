// `inflect placements X.yaml`: the ways to lay the experiment's plan onto its sites, simulated and
// ranked (search/placements.hpp, docs/placements.md).
#include <fmt/format.h>

#include <cstdio>
#include <filesystem>

#include <unistd.h>

#include "cli/commands.hpp"
#include "inflect/core/parallel.hpp"
#include "inflect/io/experiment_loader.hpp"
#include "inflect/io/profile_loader.hpp"
#include "inflect/io/yaml_reader.hpp"
#include "inflect/search/placements.hpp"

namespace inflect::cli {

int cmd_placements(const PlacementsArgs& a) {
  const io::DeviceCatalog catalog = load_catalog(a.catalog_dirs);
  plan::Experiment e = io::load_experiment(a.experiment, catalog);
  if (!a.profile.empty()) io::apply_profile(e, io::load_profile(a.profile), catalog);
  search::PlacementsOptions o;
  o.jobs = core::jobs_or_hardware(a.jobs);
  o.fidelity = a.fidelity;
  if (!a.quiet) {
    // Progress on stderr as the scan prints it: one line per placement, or a line redrawn on a terminal.
    const bool tty = isatty(fileno(stderr)) != 0;
    o.on_progress = [tty](int done, int total, const search::PlacementResult& r) {
      const std::string what = r.ok() ? fmt::format("step {:.4g} s", r.report.step_time.value()) : std::string("failed");
      if (tty) {
        std::fprintf(stderr, "\rplacements: %d/%d simulated   ", done, total);
        if (done == total) std::fprintf(stderr, "\n");
      } else {
        std::fprintf(stderr, "placements: %d/%d %s: %s\n", done, total, r.placement.name.c_str(), what.c_str());
      }
      std::fflush(stderr);
    };
  }
  const auto run = search::run_placements(e, o);
  std::fputs(search::format_placements(run).c_str(), stdout);
  if (!a.out_dir.empty()) {
    io::make_directories(a.out_dir);
    const auto path = std::filesystem::path(a.out_dir) / "placements.json";
    io::write_text_file(path.string(), search::placements_to_json(run));
    std::printf("wrote %s\n", path.c_str());
  }
  for (const auto& r : run.ranked)
    if (r.ok()) return kExitOk;
  return kExitNotSimulated;  // none ran (the plan does not fit in memory, as run exits)
}

}  // namespace inflect::cli
