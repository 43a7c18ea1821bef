// `inflect jobs X.yaml`: several jobs on shared sites, each placement policy simulated together
// and each job alone (analysis/jobs.hpp, docs/geo.md "Several jobs on shared sites").
#include <fmt/format.h>

#include <cstdio>
#include <filesystem>

#include <unistd.h>

#include "cli/commands.hpp"
#include "inflect/analysis/jobs.hpp"
#include "inflect/core/parallel.hpp"
#include "inflect/io/jobs_loader.hpp"
#include "inflect/io/jobs_output.hpp"
#include "inflect/io/yaml_reader.hpp"

namespace inflect::cli {

int cmd_jobs(const JobsArgs& a) {
  const io::DeviceCatalog catalog = load_catalog(a.catalog_dirs);
  const analysis::JobsSpec spec = io::load_jobs(a.file, catalog);
  analysis::JobsOptions o;
  o.threads = core::jobs_or_hardware(a.threads);
  if (!a.quiet) {
    const bool tty = isatty(fileno(stderr)) != 0;
    o.on_progress = [tty](int done, int total) {
      if (tty) std::fprintf(stderr, "\rjobs: %d/%d engine runs   %s", done, total, done == total ? "\n" : "");
      else std::fprintf(stderr, "jobs: %d/%d engine runs\n", done, total);
      std::fflush(stderr);
    };
  }
  const analysis::JobsRun run = analysis::run_jobs(spec, o);
  std::fputs(io::format_jobs(run).c_str(), stdout);
  if (!a.out_dir.empty()) {
    io::make_directories(a.out_dir);
    const auto path = std::filesystem::path(a.out_dir) / "jobs.json";
    io::write_text_file(path.string(), io::jobs_to_json(run, o.threads));
    std::printf("wrote %s\n", path.c_str());
  }
  return kExitOk;
}

}  // namespace inflect::cli
