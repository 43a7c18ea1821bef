#include "inflect/search/search_file.hpp"

#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include <fmt/format.h>

#include "inflect/core/error.hpp"
#include "inflect/io/experiment_loader.hpp"
#include "inflect/io/options.hpp"
#include "inflect/io/yaml_reader.hpp"
#include "inflect/plan/schedule.hpp"

namespace inflect::search {

namespace {

using core::Error;
using core::ErrorKind;
using io::Node;

/// The plan keys the search varies: writing one in `parallel:` would give a plan two sources.
constexpr const char* kSearched[] = {"tp", "pp", "dp", "cp", "ep", "zero", "fsdp", "schedule", "virtual_stages",
                                     "recompute", "sequence_parallel", "mesh", "shard_group"};

/// Why parallel.<key> cannot be written in a search file, and what to write instead: most keys
/// have a search.<key> list; the others are derived by the search or not searched at all.
std::string searched_key_message(const std::string& key) {
  if (key == "dp") return "parallel.dp is what the search derives (devices / (tp*pp*cp)); restrict tp, pp and cp instead";
  if (key == "fsdp") return "parallel.fsdp is ZeRO-3 to the search; restrict it with search.zero instead";
  if (key == "mesh") return "parallel.mesh is not searched: the search places ranks in the default order (tp, cp, pp, dp)";
  if (key == "shard_group") return "parallel.shard_group (hybrid sharding) is not searched yet: every searched plan shards over dp*cp";
  return fmt::format("parallel.{} is what the search varies; restrict it with search.{} instead", key, key);
}

std::vector<Node> list_of(const Node& n, const std::string& what) {
  if (!n.is_sequence() || n.raw().size() == 0) n.fail(fmt::format("expected a non-empty list of {}", what));
  return n.items();
}

template <class T, class Read>
std::vector<T> read_list(const Node& n, const std::string& what, Read read) {
  std::vector<T> out;
  std::set<std::string> seen;
  for (const auto& item : list_of(n, what)) {
    if (!seen.insert(item.raw().Scalar()).second) item.fail(fmt::format("'{}' appears twice", item.raw().Scalar()));
    out.push_back(read(item));
  }
  return out;
}

std::vector<int> read_degrees(const Node& n, std::int64_t lo, std::int64_t hi) {
  return read_list<int>(n, "degrees", [&](const Node& v) { return static_cast<int>(v.as_int(lo, hi)); });
}

SearchSpace read_space(const Node& n, int& top) {
  io::MapReader r(n);
  SearchSpace s;
  if (auto v = r.optional("top")) top = static_cast<int>(v->as_int(1, 10000));
  if (auto v = r.optional("tp")) s.tp = read_degrees(*v, 1, 1024);
  if (auto v = r.optional("pp")) s.pp = read_degrees(*v, 1, 1 << 16);
  if (auto v = r.optional("cp")) s.cp = read_degrees(*v, 1, 1 << 16);
  if (auto v = r.optional("ep")) s.ep = read_degrees(*v, 1, 1 << 16);
  if (auto v = r.optional("virtual_stages")) s.virtual_stages = read_degrees(*v, 2, 64);
  if (auto v = r.optional("zero")) s.zero = read_degrees(*v, 0, 3);
  if (auto v = r.optional("micro_batch"))
    s.micro_batch = read_list<std::int64_t>(*v, "micro-batch sizes", [](const Node& x) { return x.as_int(1, 1 << 20); });
  if (auto v = r.optional("schedule"))
    s.schedules = read_list<plan::Schedule>(*v, "schedules", [](const Node& x) {
      // Every schedule but custom (a search proposes plans; a custom order is the user's own).
      return *plan::schedule_from_name(x.as_choice({"1f1b", "gpipe", "interleaved", "zero-bubble", "dualpipe", "dualpipev"}));
    });
  if (auto v = r.optional("recompute"))
    s.recompute = read_list<plan::Recompute>(*v, "recomputation choices", [](const Node& x) {
      return *workload::recompute_from_name(x.as_choice({"none", "selective", "full"}));
    });
  if (auto v = r.optional("sequence_parallel"))
    s.sequence_parallel = read_list<bool>(*v, "true/false", [](const Node& x) { return x.as_bool(); });
  r.finish();
  return s;
}

}  // namespace

SearchSpec parse_search(const std::string& text, const std::string& name, const std::string& base_dir,
                        const io::DeviceCatalog& catalog) {
  SearchSpec out;
  out.file = name;
  Node root = io::load_yaml_string(text, name);
  if (root.is_null()) throw Error(ErrorKind::input, "empty search file: expected cluster, model, training and search", {name, 1, 1, ""});
  {
    io::MapReader r(root);
    for (const auto* o : io::options_under("")) (void)r.optional(std::string(o->key));
    (void)r.required("search");
    r.finish();
  }
  const Node search_node = root.child("search");
  out.space = read_space(search_node, out.top);
  if (root.raw()["parallel"]) {
    const Node par = root.child("parallel");
    if (par.is_map())
      for (const char* k : kSearched)
        if (par.raw()[k]) par.child(k).fail(searched_key_message(k));
    // The estimate has no closed form for TE's TP overlap (ring-exchange hops behind GEMM slices,
    // pipelined reduce-scatter pieces): ranking plans by an estimate that ignores it would put
    // them in the wrong order, so a search does not take it.
    if (par.is_map() && par.raw()["tp_comm_overlap"] && par.child("tp_comm_overlap").as_bool())
      par.child("tp_comm_overlap")
          .fail("parallel.tp_comm_overlap is not modelled by the search's estimate: search without it, then run the "
                "chosen plans with it (inflect run)");
    if (par.is_map() && par.raw()["layers_per_stage"])
      par.child("layers_per_stage")
          .fail("parallel.layers_per_stage fixes pp, which the search varies (and its estimate assumes an even split)");
  }
  if (root.raw()["training"] && root.raw()["training"].IsMap() && root.raw()["training"]["micro_batch"])
    root.child("training").child("micro_batch").fail("training.micro_batch is what the search varies; restrict it with search.micro_batch instead");
  if (root.raw()["workload"]) root.child("workload").fail("a search compiles a model; a recorded trace has no plan to search");
  // The estimate prices one synchronous step; DiLoCo's period of inner and sync steps it does not.
  if (root.raw()["training"] && root.raw()["training"].IsMap() && root.raw()["training"]["diloco"])
    root.child("training").child("diloco").fail("training.diloco is not modelled by the search's estimate: search without it, then "
                                                 "run the chosen plans with it (inflect run, or a scan over its keys)");

  YAML::Node raw = root.raw();
  raw.remove("search");
  out.base = io::parse_experiment(root, base_dir, /*check_plan_keys=*/false, catalog);
  if (!out.base.workload.model) root.fail("a search needs a model (model.preset or model.*)");
  if (out.base.training.global_batch < 1 || out.base.training.seq_len < 1)
    root.fail("a search needs training.seq_len and training.global_batch");
  out.name = out.base.name;
  // A bound on the enumeration, so a typo (or a fuzzer) cannot ask for billions of plans.
  const double size = space_size(resolve_space(out.base, out.space));
  if (size > kMaxSpaceSize)
    search_node.fail(fmt::format("the search space has {:.3g} combinations before any check; at most {:.0e} are allowed "
                                          "(list fewer values, e.g. of pp or cp)",
                                          size, kMaxSpaceSize));
  return out;
}

void set_nodes(SearchSpec& spec, int nodes) {
  if (nodes < 1) throw Error(ErrorKind::input, fmt::format("--nodes {}: expected at least 1 node", nodes));
  spec.base.cluster.nodes = nodes;
  const double size = space_size(resolve_space(spec.base, spec.space));
  if (size > kMaxSpaceSize)
    throw Error(ErrorKind::input, fmt::format("the search space has {:.3g} combinations before any check; at most {:.0e} are allowed", size,
                                              kMaxSpaceSize));
}

SearchSpec load_search(const std::string& path, const io::DeviceCatalog& catalog) {
  const std::string text = io::read_text_file(path, "search file");
  const auto dir = std::filesystem::path(path).parent_path().string();
  return parse_search(text, path, dir.empty() ? "." : dir, catalog);
}

}  // namespace inflect::search
