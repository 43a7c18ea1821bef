#include "inflect/io/model_loader.hpp"

#include <algorithm>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "inflect/core/error.hpp"
#include "inflect/core/strings.hpp"
#include "inflect/io/provenance.hpp"
#include "io/embedded.hpp"

namespace inflect::io {

namespace {

using workload::MlpKind;
using workload::ModelSpec;

const std::vector<std::string> kMlpNames = {"gelu", "swiglu"};
// Layer indices are int16 in the execution graph; sizes must keep token and weight counts within
// int64 products, which 2^31 does with room to spare.
constexpr std::int64_t kMaxLayers = std::numeric_limits<std::int16_t>::max();
constexpr std::int64_t kMaxSize = std::int64_t{1} << 31;

std::string stem(std::string_view file) {
  std::string s(file);
  if (s.size() > 5 && s.ends_with(".yaml")) s.resize(s.size() - 5);
  return s;
}

// model.moe: {experts, top_k, expert_ffn_hidden, shared_experts, first_dense_layers,
// capacity_factor, imbalance}. The first three are required; over a preset, any may be restated.
void read_moe(const Node& map, ModelSpec& m) {
  MapReader r(map);
  auto& e = m.moe;
  const bool had = m.is_moe();
  auto need = [&](const char* key) -> std::optional<Node> { return had ? r.optional(key) : r.required(key); };
  if (auto n = need("experts")) e.experts = static_cast<int>(n->as_int(1, 1 << 16));
  std::optional<Node> top_k = need("top_k");
  if (top_k) e.top_k = static_cast<int>(top_k->as_int(1, 1 << 16));
  if (auto n = need("expert_ffn_hidden")) e.expert_ffn_hidden = n->as_int(1, kMaxSize);
  if (auto n = r.optional("shared_experts")) e.shared_experts = static_cast<int>(n->as_int(0, 1 << 16));
  std::optional<Node> dense = r.optional("first_dense_layers");
  if (dense) e.first_dense_layers = static_cast<int>(dense->as_int(0, kMaxLayers));
  if (auto n = r.optional("capacity_factor")) {
    e.capacity_factor = n->as_double();
    if (!(e.capacity_factor == 0 || e.capacity_factor >= 1))
      n->fail(fmt::format("capacity_factor: {} must be 0 (dropless) or at least 1 (a multiple of the balanced load)", e.capacity_factor));
  }
  std::optional<Node> imbalance = r.optional("imbalance");
  if (imbalance) {
    e.imbalance = imbalance->as_double();
    if (!(e.imbalance >= 1))
      imbalance->fail(fmt::format("imbalance: {} must be at least 1 (tokens of the busiest expert rank over the mean)", e.imbalance));
  }
  r.finish();
  if (e.top_k > e.experts) (top_k ? *top_k : map).fail(fmt::format("top_k: {} exceeds the {} experts", e.top_k, e.experts));
  // The busiest rank can at most receive every token once per expert it holds, up to top_k times:
  // with ep ranks that is ep x min(top_k, experts/ep) / top_k times the mean, at most experts/top_k
  // for any ep (reached with one expert per rank and every token choosing it). More is no routing.
  const double most = static_cast<double>(e.experts) / e.top_k;
  if (e.imbalance > most)
    (imbalance ? *imbalance : map).fail(fmt::format(
        "imbalance: {} exceeds experts/top_k = {}/{} = {:g}, the most any routing gives (every token to the "
        "busiest rank's experts)", e.imbalance, e.experts, e.top_k, most));
  if (m.layers > 0 && e.first_dense_layers >= m.layers)
    (dense ? *dense : map).fail(fmt::format("first_dense_layers: {} leaves no MoE layer of the {}", e.first_dense_layers, m.layers));
}

// Reads the shape fields present in `r` over `m`. `all_required` for preset files, which must
// spell out every field so that a preset never leans on a default.
void read_fields(MapReader& r, ModelSpec& m, bool all_required, std::optional<Node>& heads_node,
                 std::optional<Node>& kv_node, std::optional<Node>& ffn_node) {
  auto get = [&](const std::string& key) -> std::optional<Node> {
    if (all_required) return r.required(key);
    return r.optional(key);
  };
  if (auto n = get("name")) m.name = n->as_string();
  if (auto n = get("layers")) m.layers = static_cast<int>(n->as_int(1, kMaxLayers));
  if (auto n = get("hidden")) m.hidden = n->as_int(1, kMaxSize);
  if ((heads_node = get("heads"))) m.heads = static_cast<int>(heads_node->as_int(1, 1 << 16));
  if ((kv_node = get("kv_heads"))) m.kv_heads = static_cast<int>(kv_node->as_int(1, 1 << 16));
  if ((ffn_node = get("ffn_hidden"))) m.ffn_hidden = ffn_node->as_int(1, kMaxSize);
  if (auto n = get("mlp")) m.mlp = n->as_choice(kMlpNames) == "gelu" ? MlpKind::gelu : MlpKind::swiglu;
  if (auto n = get("vocab")) m.vocab = n->as_int(1, kMaxSize);
  if (auto n = get("seq_len")) m.seq_len = n->as_int(1, kMaxSize);
  if (auto n = get("tied_embeddings")) m.tied_embeddings = n->as_bool();
  if (auto n = get("source")) m.source = n->as_string();
  // `moe` is optional in presets and inline alike: a model without it is dense.
  if (auto n = r.optional("moe")) read_moe(*n, m);
}

// Shape rules every model must satisfy; messages point at the key that breaks them.
void check_shape(const ModelSpec& m, const Node& at, const std::optional<Node>& heads_node,
                 const std::optional<Node>& kv_node) {
  const Node& hn = heads_node ? *heads_node : at;
  const Node& kn = kv_node ? *kv_node : at;
  if (m.hidden % m.heads != 0)
    hn.fail(fmt::format("heads: {} does not divide hidden = {}; the head dimension hidden/heads must be a "
                        "whole number", m.heads, m.hidden));
  if (m.kv_heads > m.heads || m.heads % m.kv_heads != 0)
    kn.fail(fmt::format("kv_heads: {} must divide heads = {} (each key/value head serves a whole group of "
                        "query heads)", m.kv_heads, m.heads));
}

struct PresetFile {
  std::string file;  // e.g. "workloads/models/llama3-8b.yaml"
  std::string_view text;
};

std::optional<PresetFile> find_preset(const std::string& name) {
  for (const auto& [file, text] : embedded::catalog_models())
    if (stem(file) == name) return PresetFile{"workloads/models/" + std::string(file), text};
  return std::nullopt;
}

ModelSpec load_preset(const PresetFile& p, const std::string& name) {
  note_input("model preset", "built-in:" + p.file, p.text);  // compiled in: the report's provenance names it
  Node root = load_yaml_string(std::string(p.text), p.file);
  MapReader r(root);
  ModelSpec m;
  std::optional<Node> heads, kv, ffn;
  read_fields(r, m, true, heads, kv, ffn);
  r.finish();
  if (m.name != name)
    root.child("name").fail(fmt::format("name: '{}' differs from the file name '{}'; they must match so "
                                        "`preset: {}` finds it", m.name, name, name));
  check_shape(m, root, heads, kv);
  return m;
}

std::string unknown_preset_message(const std::string& name) {
  auto names = model_preset_names();
  std::string hint = core::closest_match(name, names);
  return fmt::format("'{}' is not a model preset{}; presets: {}", name,
                     hint.empty() ? "" : fmt::format(" (did you mean '{}'?)", hint), core::join(names));
}

}  // namespace

std::vector<std::string> model_preset_names() {
  std::vector<std::string> names;
  for (const auto& entry : embedded::catalog_models()) names.push_back(stem(entry.first));
  std::sort(names.begin(), names.end());
  return names;
}

workload::ModelSpec model_preset(const std::string& name) {
  auto p = find_preset(name);
  if (!p) throw core::Error(core::ErrorKind::input, unknown_preset_message(name));
  return load_preset(*p, name);
}

workload::ModelSpec parse_model(const Node& model_map) {
  MapReader r(model_map);
  ModelSpec m;
  bool from_preset = false;
  if (auto preset = r.optional("preset")) {
    std::string name = preset->as_string();
    auto p = find_preset(name);
    if (!p) preset->fail(unknown_preset_message(name));
    m = load_preset(*p, name);
    from_preset = true;
  }
  std::optional<Node> heads, kv, ffn;
  if (from_preset) {
    // Overrides: any field may be restated; the rest come from the preset.
    read_fields(r, m, false, heads, kv, ffn);
  } else {
    // Inline: the shape is required; name, source, kv_heads (= heads: multi-head attention),
    // ffn_hidden (GELU only: the GPT convention 4*hidden) and tied_embeddings (false) have defaults.
    m.name = "custom";
    m.source = "inline";
    for (const char* key : {"layers", "hidden", "heads", "mlp", "vocab", "seq_len"})
      if (r.written_empty(key)) r.fail_empty(key, true);
      else if (!r.has(key))
        model_map.fail(fmt::format("missing required key '{}' (or give `preset:` with one of: {})", key,
                                   core::join(model_preset_names())));
    read_fields(r, m, false, heads, kv, ffn);
    if (!kv) m.kv_heads = m.heads;
    if (!ffn) {
      if (m.mlp == MlpKind::swiglu)
        model_map.fail("missing required key 'ffn_hidden': SwiGLU models have no conventional MLP width "
                       "(Llama 3 8B uses 14336 for hidden 4096); write it out");
      m.ffn_hidden = 4 * m.hidden;
    }
  }
  r.finish();
  check_shape(m, model_map, heads, kv);
  return m;
}

}  // namespace inflect::io
