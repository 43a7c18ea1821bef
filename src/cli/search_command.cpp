// `inflect search`.
#include <fmt/format.h>

#include <cstdio>
#include <filesystem>
#include <fstream>

#include "cli/commands.hpp"
#include "inflect/io/profile_loader.hpp"
#include "inflect/core/error.hpp"
#include "inflect/core/parallel.hpp"
#include "inflect/search/search_output.hpp"
#include "inflect/search/searcher.hpp"

namespace inflect::cli {

int cmd_search(const SearchArgs& a) {
  const io::DeviceCatalog catalog = load_catalog(a.catalog_dirs);
  auto spec = search::load_search(a.file, catalog);
  if (!a.profile.empty()) io::apply_profile(spec.base, io::load_profile(a.profile), catalog);
  if (a.nodes > 0) search::set_nodes(spec, a.nodes);
  search::SearchOptions o;
  o.top = a.top_given ? a.top : spec.top;
  o.jobs = core::jobs_or_hardware(a.jobs);
  o.fidelity = a.fidelity;
  const auto result = search::run_search(spec, o);
  const std::string json = search::search_to_json(result);
  if (!a.out_dir.empty()) {
    std::filesystem::create_directories(a.out_dir);
    const auto path = std::filesystem::path(a.out_dir) / "search.json";
    std::ofstream f(path, std::ios::binary);
    if (!(f << json)) throw core::Error(core::ErrorKind::io, fmt::format("cannot write '{}'", path.string()));
  }
  if (a.json) {
    std::fputs(json.c_str(), stdout);
  } else {
    std::fputs(search::format_search(result, spec).c_str(), stdout);
    if (!a.out_dir.empty()) std::printf("wrote %s\n", (std::filesystem::path(a.out_dir) / "search.json").c_str());
  }
  // No plan fits in memory: valid, nothing simulated (3, as run on a plan that does not fit).
  return result.plans.empty() ? kExitNotSimulated : kExitOk;
}

}  // namespace inflect::cli
