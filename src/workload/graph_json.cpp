#include "inflect/workload/graph_json.hpp"

#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "inflect/core/error.hpp"
#include "inflect/core/strings.hpp"
#include "workload/graph_bounds.hpp"

namespace inflect::workload {

namespace {

using nlohmann::json;

constexpr const char* kFormat = "inflect-exec-graph";
constexpr int kVersion = 1;
const std::vector<std::string> kTopKeys = {"format", "version", "name", "total_ranks", "simulated_ranks",
                                           "represents", "streams", "meta", "groups", "kernels",
                                           "collectives", "ops"};
const std::vector<std::string> kMetaKeys = {"memory_peak_bytes", "micro_batches", "model_flops_per_step",
                                            "tokens_per_step"};
const std::vector<std::string> kClassNames = {"gemm", "attention", "memory", "attention_backward"};
const std::vector<std::string> kPrecisionNames = {"fp32", "tf32", "bf16", "fp16", "fp8"};
// In CollectiveKind's order: the reader casts the index.
const std::vector<std::string> kKindNames = {"all_reduce", "reduce_scatter", "all_gather", "all_to_all",
                                             "send_recv", "broadcast", "reduce"};
const std::vector<std::string> kDimNames = {"dp", "tp", "pp", "cp", "ep"};
// Bounds of graph_bounds.hpp, shared with the trace readers, and two of the step's facts alone.
using bounds::kBytesWhy;
using bounds::kKernelFlopsWhy;
using bounds::kMaxBytes;
using bounds::kMaxKernelFlops;
constexpr double kMaxTokensPerStep = 1e12;  // 60,000x Llama 3's 16M-token batch
constexpr double kMaxModelFlopsPerStep = 1e27;  // 25x the FLOPs of Llama 3 405B's whole training run
constexpr std::int64_t kMaxRecordedPs = bounds::kMaxRecordedSeconds * 1'000'000'000'000;
// Op fields before the trailing deps: rank, stream, type, payload, phase, layer, micro_batch.
constexpr std::size_t kOpFixedFields = 7;

const char* class_name(core::KernelClass c) {
  switch (c) {
    case core::KernelClass::gemm: return "gemm";
    case core::KernelClass::attention: return "attention";
    case core::KernelClass::attention_backward: return "attention_backward";
    case core::KernelClass::memory: return "memory";
  }
  return "?";
}

// JSON text of a number or string exactly as nlohmann writes it (shortest round-trip doubles,
// escaped strings), so the hand-written layout below parses back to the same values.
std::string num(double v) { return json(v).dump(); }
std::string str(const std::string& s) { return json(s).dump(); }

template <class T>
std::string int_list(const std::vector<T>& v) {
  std::string out = "[";
  for (std::size_t i = 0; i < v.size(); ++i) {
    if (i) out += ',';
    out += std::to_string(v[i]);
  }
  return out + "]";
}

// ---- reading

class Reader {
 public:
  explicit Reader(const std::string& file) : file_(file) {}

  [[noreturn]] void fail(const std::string& path, const std::string& message) const {
    throw core::Error(core::ErrorKind::input, message, core::SourceLocation{file_, 0, 0, path});
  }

  static std::string type_of(const json& j) {
    if (j.is_null()) return "null";
    if (j.is_boolean()) return "a boolean";
    if (j.is_number_integer()) return "an integer";
    if (j.is_number()) return "a number";
    if (j.is_string()) return "a string";
    if (j.is_array()) return "an array";
    return "an object";
  }

  const json& array(const json& j, const std::string& path) const {
    if (!j.is_array()) fail(path, fmt::format("expected an array, got {}", type_of(j)));
    return j;
  }

  const json& array(const json& j, const std::string& path, std::size_t n) const {
    array(j, path);
    if (j.size() != n) fail(path, fmt::format("expected {} fields, got {}", n, j.size()));
    return j;
  }

  std::int64_t integer(const json& j, const std::string& path, std::int64_t lo, std::int64_t hi) const {
    if (!j.is_number_integer()) fail(path, fmt::format("expected an integer, got {}", type_of(j)));
    if (j.is_number_unsigned() && j.get<std::uint64_t>() > static_cast<std::uint64_t>(hi))
      fail(path, fmt::format("{} is out of range [{}, {}]", j.get<std::uint64_t>(), lo, hi));
    std::int64_t v = j.get<std::int64_t>();
    if (v < lo || v > hi) fail(path, fmt::format("{} is out of range [{}, {}]", v, lo, hi));
    return v;
  }

  double non_negative(const json& j, const std::string& path) const {
    if (!j.is_number()) fail(path, fmt::format("expected a number, got {}", type_of(j)));
    double v = j.get<double>();
    if (!std::isfinite(v) || v < 0) fail(path, fmt::format("{} must be a finite number >= 0", v));
    return v;
  }

  /// non_negative() and at most `hi`: a figure no hardware or model comes near (see kMax*).
  double bounded(const json& j, const std::string& path, double hi, const char* why) const {
    const double v = non_negative(j, path);
    if (v > hi) fail(path, fmt::format("{} is out of range; at most {:.0e} ({})", v, hi, why));
    return v;
  }

  std::string string(const json& j, const std::string& path) const {
    if (!j.is_string()) fail(path, fmt::format("expected a string, got {}", type_of(j)));
    return j.get<std::string>();
  }

  std::size_t choice(const json& j, const std::string& path, const std::vector<std::string>& allowed) const {
    std::string s = string(j, path);
    for (std::size_t i = 0; i < allowed.size(); ++i)
      if (allowed[i] == s) return i;
    std::string hint = core::closest_match(s, allowed);
    fail(path, fmt::format("'{}' is not allowed{}; allowed: {}", s,
                           hint.empty() ? "" : fmt::format(" (did you mean '{}'?)", hint), core::join(allowed)));
  }

 private:
  std::string file_;
};

// A GEMM with a shape does 2 m n k FLOPs per batch element: the compute model times it from its
// FLOPs and picks its efficiency from its shape, so the two must describe one GEMM (a graph with
// 1e20 FLOPs on a 1x1x1 GEMM ran as a 1e20-FLOP kernel of the smallest GEMM's efficiency). 1%
// allows a tool that rounds; inflect's own exports agree exactly. A shape of 0 is unknown and
// checks nothing.
void check_gemm_flops(const Reader& r, const core::KernelCost& c, const std::string& path) {
  if (c.cls != core::KernelClass::gemm || c.m == 0 || c.n == 0 || c.k == 0) return;
  const double expected = 2.0 * static_cast<double>(c.m) * static_cast<double>(c.n) * static_cast<double>(c.k) *
                          static_cast<double>(c.batch);
  if (std::abs(c.flops.value() - expected) <= 0.01 * expected) return;
  r.fail(path + ".flops", fmt::format("{:.6g} FLOPs, but a GEMM of m={}, n={}, k={}, batch={} does 2*m*n*k*batch = {:.6g}; give "
                                      "the FLOPs its shape does, or a shape of 0 0 0 when the shape is unknown",
                                      c.flops.value(), c.m, c.n, c.k, c.batch, expected));
}

json parse_entry(const Reader& r, const std::string& text) {
  try {
    return json::parse(text);
  } catch (const json::parse_error& e) {
    r.fail("", fmt::format("not valid JSON (at byte {}): {}", e.byte, e.what()));
  } catch (const json::exception& e) {
    // e.g. out_of_range for a number like 1e400 that no double holds
    r.fail("", fmt::format("not valid JSON: {}", e.what()));
  }
}

Kernel read_kernel(const Reader& r, const json& kj, const std::string& path) {
  constexpr std::int64_t kMaxDim = std::numeric_limits<std::int64_t>::max();
  if (kj.size() < 9 || kj.size() > 11)
    r.fail(path, fmt::format("expected 9 fields (10 with the parts of a fused block, 11 with a recorded duration), got {}",
                             kj.size()));
  Kernel k;
  k.name = r.string(kj[0], path + ".name");
  k.cost.cls = static_cast<core::KernelClass>(r.choice(kj[1], path + ".class", kClassNames));
  k.cost.precision = *core::parse_precision(kPrecisionNames[r.choice(kj[2], path + ".precision", kPrecisionNames)]);
  k.cost.flops = core::Flops(r.bounded(kj[3], path + ".flops", kMaxKernelFlops, kKernelFlopsWhy));
  k.cost.bytes = core::Bytes(r.bounded(kj[4], path + ".bytes", kMaxBytes, kBytesWhy));
  k.cost.m = r.integer(kj[5], path + ".m", 0, kMaxDim);
  k.cost.n = r.integer(kj[6], path + ".n", 0, kMaxDim);
  k.cost.k = r.integer(kj[7], path + ".k", 0, kMaxDim);
  k.cost.batch = r.integer(kj[8], path + ".batch", 1, kMaxDim);
  check_gemm_flops(r, k.cost, path);
  if (kj.size() == 11)
    k.recorded = core::Time::ps(r.integer(kj[10], path + ".recorded_ps", 0, kMaxRecordedPs));
  if (kj.size() >= 10) {
    const json& parts = r.array(kj[9], path + ".parts");
    if (parts.empty() && kj.size() == 10) r.fail(path + ".parts", "empty; leave the field out for a kernel that is not fused");
    for (std::size_t pi = 0; pi < parts.size(); ++pi) {
      const std::string pp = fmt::format("{}.parts[{}]", path, pi);
      const json& pj = r.array(parts[pi], pp, 8);
      core::KernelCost pc;
      pc.cls = static_cast<core::KernelClass>(r.choice(pj[0], pp + ".class", kClassNames));
      pc.precision = *core::parse_precision(kPrecisionNames[r.choice(pj[1], pp + ".precision", kPrecisionNames)]);
      pc.flops = core::Flops(r.bounded(pj[2], pp + ".flops", kMaxKernelFlops, kKernelFlopsWhy));
      pc.bytes = core::Bytes(r.bounded(pj[3], pp + ".bytes", kMaxBytes, kBytesWhy));
      pc.m = r.integer(pj[4], pp + ".m", 0, kMaxDim);
      pc.n = r.integer(pj[5], pp + ".n", 0, kMaxDim);
      pc.k = r.integer(pj[6], pp + ".k", 0, kMaxDim);
      pc.batch = r.integer(pj[7], pp + ".batch", 1, kMaxDim);
      check_gemm_flops(r, pc, pp);
      k.parts.push_back(pc);
    }
  }
  return k;
}

Collective read_collective(const Reader& r, const json& cj, const std::string& path, std::size_t group_count) {
  if (cj.size() != 5 && cj.size() != 6)
    r.fail(path, fmt::format("expected 5 fields (6 with the collectives it runs after itself), got {}", cj.size()));
  Collective c;
  c.name = r.string(cj[0], path + ".name");
  c.kind = static_cast<CollectiveKind>(r.choice(cj[1], path + ".kind", kKindNames));
  c.dim = static_cast<ParallelDim>(r.choice(cj[2], path + ".dim", kDimNames));
  std::int64_t group = r.integer(cj[3], path + ".group", 0, std::numeric_limits<GroupId>::max());
  if (static_cast<std::size_t>(group) >= group_count)
    r.fail(path + ".group", fmt::format("group {} does not exist; {} groups are defined", group, group_count));
  c.group = static_cast<GroupId>(group);
  c.bytes = core::Bytes(r.bounded(cj[4], path + ".bytes", kMaxBytes, kBytesWhy));
  if (cj.size() == 6) {
    const json& then = r.array(cj[5], path + ".then");
    if (then.empty()) r.fail(path + ".then", "a collective's list of those it runs after itself may not be empty");
    for (std::size_t pi = 0; pi < then.size(); ++pi) {
      const std::string pp = fmt::format("{}.then[{}]", path, pi);
      const json& pj = r.array(then[pi], pp, 3);
      CollectivePart part;
      part.name = r.string(pj[0], pp + ".name");
      part.kind = static_cast<CollectiveKind>(r.choice(pj[1], pp + ".kind", kKindNames));
      part.bytes = core::Bytes(r.bounded(pj[2], pp + ".bytes", kMaxBytes, kBytesWhy));
      c.then.push_back(std::move(part));
    }
  }
  return c;
}

}  // namespace

std::string kernel_to_json(const Kernel& k) {
  const core::KernelCost& c = k.cost;
  std::string out;
  out += fmt::format("[{},\"{}\",\"{}\",{},{},{},{},{},{}", str(k.name), class_name(c.cls),
                     core::to_string(c.precision), num(c.flops.value()), num(c.bytes.value()), c.m, c.n,
                     c.k, c.batch);
  if (!k.parts.empty() || k.recorded) {
    // A fused block: its parts, each [class, precision, flops, bytes, m, n, k, batch]; the engine
    // times the block as the sum of its parts, so they must survive the round trip. A recorded
    // kernel writes its (possibly empty) parts, then its measured duration in ps.
    out += ",[";
    for (std::size_t pi = 0; pi < k.parts.size(); ++pi) {
      const core::KernelCost& pc = k.parts[pi];
      out += fmt::format("{}[\"{}\",\"{}\",{},{},{},{},{},{}]", pi ? "," : "", class_name(pc.cls),
                         core::to_string(pc.precision), num(pc.flops.value()), num(pc.bytes.value()), pc.m, pc.n,
                         pc.k, pc.batch);
    }
    out += "]";
    if (k.recorded) out += fmt::format(",{}", k.recorded->count_ps());
  }
  out += "]";
  return out;
}

std::string collective_to_json(const Collective& c) {
  std::string out;
  out += fmt::format("[{},\"{}\",\"{}\",{},{}", str(c.name), to_string(c.kind), to_string(c.dim), c.group,
                     num(c.bytes.value()));
  if (!c.then.empty()) {
    // The collectives it runs right after itself, as [name, kind, bytes] (Collective::then).
    out += ",[";
    for (std::size_t pi = 0; pi < c.then.size(); ++pi)
      out += fmt::format("{}[{},\"{}\",{}]", pi ? "," : "", str(c.then[pi].name), to_string(c.then[pi].kind),
                         num(c.then[pi].bytes.value()));
    out += "]";
  }
  out += "]";
  return out;
}

std::string graph_to_json(const ExecutionGraph& g) {
  // The format has no replicas: they are written out as the ops they stand for.
  if (!g.replicas().empty()) return graph_to_json(g.expanded());
  // Hand-laid so that a graph of millions of ops is written without building a JSON tree: one line
  // per table entry, keys in a fixed order, ops as arrays (docs/execution-graph.md).
  std::string out;
  out.reserve(64 + g.ops().size() * 24);
  out += fmt::format("{{\"format\":\"{}\",\"version\":{},\n", kFormat, kVersion);
  out += fmt::format("\"name\":{},\n\"total_ranks\":{},\n", str(g.name), g.total_ranks());
  out += "\"simulated_ranks\":" + int_list(g.simulated_ranks()) + ",\n";
  out += "\"represents\":" + int_list(g.represents()) + ",\n";
  out += "\"streams\":" + json(g.stream_names()).dump() + ",\n";
  out += "\"meta\":{";
  // The facts the graph knows, by name in sorted order (as the free-form map they once were was);
  // a fact it does not know is left out, never written as 0.
  const GraphFacts& facts = g.facts();
  std::vector<std::pair<const char*, std::optional<double>>> known = {
      {"memory_peak_bytes", facts.memory_peak ? std::optional(facts.memory_peak->value()) : std::nullopt},
      {"micro_batches", facts.micro_batches ? std::optional(static_cast<double>(*facts.micro_batches)) : std::nullopt},
      {"model_flops_per_step",
       facts.model_flops_per_step ? std::optional(facts.model_flops_per_step->value()) : std::nullopt},
      {"tokens_per_step", facts.tokens_per_step}};
  bool first = true;
  for (const auto& [k, v] : known) {
    if (!v) continue;
    if (!first) out += ',';
    first = false;
    out += str(k) + ":" + num(*v);
  }
  out += "},\n\"groups\":[";
  for (std::size_t i = 0; i < g.groups().size(); ++i) {
    const Group& gr = g.groups()[i];
    out += i ? ",\n[" : "\n[";
    out += int_list(gr.members) + ",[";
    for (std::size_t j = 0; j < gr.mirrors.size(); ++j) {
      if (j) out += ',';
      out += int_list(gr.mirrors[j]);
    }
    out += "]]";
  }
  out += "],\n\"kernels\":[";
  for (std::size_t i = 0; i < g.kernels().size(); ++i) {
    out += i ? ",\n" : "\n";
    out += kernel_to_json(g.kernels()[i]);
  }
  out += "],\n\"collectives\":[";
  for (std::size_t i = 0; i < g.collectives().size(); ++i) {
    out += i ? ",\n" : "\n";
    out += collective_to_json(g.collectives()[i]);
  }
  out += "],\n\"ops\":[";
  for (std::size_t i = 0; i < g.ops().size(); ++i) {
    const Op& op = g.ops()[i];
    out += i ? ",\n" : "\n";
    out += fmt::format("[{},{},{},{},{},{},{}", op.rank, op.stream, static_cast<int>(op.type), op.payload,
                       static_cast<int>(op.phase), op.layer, op.micro_batch);
    for (OpId dep : g.deps(static_cast<OpId>(i))) out += fmt::format(",{}", dep);
    out += ']';
  }
  out += "]}\n";
  return out;
}

Kernel kernel_from_json(const std::string& text, const std::string& where) {
  const Reader r(where);
  const json j = parse_entry(r, text);
  return read_kernel(r, r.array(j, "kernel"), "kernel");
}

Collective collective_from_json(const std::string& text, const std::string& where, std::size_t group_count) {
  const Reader r(where);
  const json j = parse_entry(r, text);
  return read_collective(r, r.array(j, "collective"), "collective", group_count);
}

ExecutionGraph graph_from_json(const std::string& text, const std::string& file) {
  Reader r(file);
  const json doc = parse_entry(r, text);
  if (!doc.is_object()) r.fail("", fmt::format("expected a JSON object at the top, got {}", Reader::type_of(doc)));
  for (const auto& [key, value] : doc.items()) {
    bool known = false;
    for (const auto& k : kTopKeys) known = known || k == key;
    if (!known) {
      std::string hint = core::closest_match(key, kTopKeys);
      r.fail(key, fmt::format("unknown key '{}'{}; allowed: {}", key,
                              hint.empty() ? "" : fmt::format(" (did you mean '{}'?)", hint), core::join(kTopKeys)));
    }
  }
  for (const auto& k : kTopKeys)
    if (!doc.contains(k)) r.fail(k, fmt::format("missing required key '{}'", k));

  if (r.string(doc["format"], "format") != kFormat)
    r.fail("format", fmt::format("'{}' is not an execution graph; expected '{}'", doc["format"].get<std::string>(), kFormat));
  std::int64_t version = r.integer(doc["version"], "version", 0, std::numeric_limits<std::int32_t>::max());
  if (version != kVersion) r.fail("version", fmt::format("version {} is not supported; supported: {}", version, kVersion));

  ExecutionGraph g;
  g.name = r.string(doc["name"], "name");
  constexpr std::int64_t kMaxRank = std::numeric_limits<RankId>::max();
  const int total = static_cast<int>(r.integer(doc["total_ranks"], "total_ranks", 1, kMaxRank));

  std::vector<RankId> simulated;
  const json& sim = r.array(doc["simulated_ranks"], "simulated_ranks");
  for (std::size_t i = 0; i < sim.size(); ++i)
    simulated.push_back(static_cast<RankId>(r.integer(sim[i], fmt::format("simulated_ranks[{}]", i), 0, total - 1)));
  std::vector<std::uint32_t> represents;
  const json& rep = r.array(doc["represents"], "represents");
  for (std::size_t i = 0; i < rep.size(); ++i)
    represents.push_back(static_cast<std::uint32_t>(
        r.integer(rep[i], fmt::format("represents[{}]", i), 1, std::numeric_limits<std::uint32_t>::max())));
  if (represents.size() != simulated.size())
    r.fail("represents", fmt::format("has {} entries but simulated_ranks has {}; they pair one to one",
                                     represents.size(), simulated.size()));
  g.set_ranks(total, std::move(simulated), std::move(represents));

  const json& streams = r.array(doc["streams"], "streams");
  if (streams.size() > 255) r.fail("streams", fmt::format("{} streams; at most 255 are allowed", streams.size()));
  std::set<std::string> seen;
  for (std::size_t i = 0; i < streams.size(); ++i) {
    std::string path = fmt::format("streams[{}]", i);
    std::string s = r.string(streams[i], path);
    if (!seen.insert(s).second) r.fail(path, fmt::format("stream '{}' is listed twice", s));
    g.stream(s);
  }

  const json& meta = doc["meta"];
  if (!meta.is_object()) r.fail("meta", fmt::format("expected an object, got {}", Reader::type_of(meta)));
  GraphFacts& facts = g.facts();
  for (const auto& [k, v] : meta.items()) {
    const std::string path = "meta." + k;
    const double x = r.non_negative(v, path);
    if (k == "tokens_per_step")
      facts.tokens_per_step = r.bounded(v, path, kMaxTokensPerStep, "60,000x Llama 3's 16M-token batch");
    else if (k == "model_flops_per_step")
      facts.model_flops_per_step = core::Flops(r.bounded(v, path, kMaxModelFlopsPerStep, "25x Llama 3 405B's whole training run"));
    else if (k == "memory_peak_bytes") facts.memory_peak = core::Bytes(r.bounded(v, path, kMaxBytes, kBytesWhy));
    else if (k == "micro_batches") {
      if (!(x >= 1 && x == std::floor(x) && x <= 1e15)) r.fail(path, fmt::format("{} is not a whole number >= 1", x));
      facts.micro_batches = static_cast<std::int64_t>(x);
    } else {
      const std::string hint = core::closest_match(k, kMetaKeys);
      r.fail(path, fmt::format("unknown figure '{}'{}; known: {}", k, hint.empty() ? "" : fmt::format(" (did you mean '{}'?)", hint),
                               core::join(kMetaKeys)));
    }
  }

  const json& groups = r.array(doc["groups"], "groups");
  for (std::size_t i = 0; i < groups.size(); ++i) {
    std::string path = fmt::format("groups[{}]", i);
    const json& gj = r.array(groups[i], path, 2);
    Group gr;
    const json& mem = r.array(gj[0], path + ".members");
    for (std::size_t j = 0; j < mem.size(); ++j)
      gr.members.push_back(static_cast<RankId>(r.integer(mem[j], fmt::format("{}.members[{}]", path, j), 0, total - 1)));
    const json& mirrors = r.array(gj[1], path + ".mirrors");
    for (std::size_t j = 0; j < mirrors.size(); ++j) {
      std::string mp = fmt::format("{}.mirrors[{}]", path, j);
      const json& mj = r.array(mirrors[j], mp);
      std::vector<RankId> ranks;
      for (std::size_t q = 0; q < mj.size(); ++q)
        ranks.push_back(static_cast<RankId>(r.integer(mj[q], fmt::format("{}[{}]", mp, q), 0, total - 1)));
      gr.mirrors.push_back(std::move(ranks));
    }
    g.add_group(std::move(gr));
  }

  const json& kernels = r.array(doc["kernels"], "kernels");
  for (std::size_t i = 0; i < kernels.size(); ++i) {
    std::string path = fmt::format("kernels[{}]", i);
    const json& kj = r.array(kernels[i], path);
    g.add_kernel(read_kernel(r, kj, path));
  }

  const json& colls = r.array(doc["collectives"], "collectives");
  for (std::size_t i = 0; i < colls.size(); ++i) {
    std::string path = fmt::format("collectives[{}]", i);
    const json& cj = r.array(colls[i], path);
    g.add_collective(read_collective(r, cj, path, g.groups().size()));
  }

  const json& ops = r.array(doc["ops"], "ops");
  if (ops.size() > std::numeric_limits<OpId>::max()) r.fail("ops", "too many ops for 32-bit op ids");
  std::vector<OpId> deps;
  // When each rank's ops are contiguous (inflect writes them so), a rank that copies an earlier
  // one is stored as its replica (ExecutionGraph::end_rank), as the compiler and the trace
  // importers store them: a full-fidelity graph replays from its rank classes. File ids then map
  // to stored ones through the rank's start.
  bool contiguous = true;
  {
    std::set<std::int64_t> ended;
    std::int64_t current = -1;
    for (const json& oj : ops) {
      if (!oj.is_array() || oj.empty() || !oj[0].is_number_integer()) {
        contiguous = false;
        break;
      }
      const auto rk = oj[0].get<std::int64_t>();
      if (rk == current) continue;
      if (current >= 0) ended.insert(current);
      if (ended.count(rk)) {
        contiguous = false;
        break;
      }
      current = rk;
    }
  }
  const std::set<RankId> simulated_set(g.simulated_ranks().begin(), g.simulated_ranks().end());
  std::size_t run_start = 0;  // the current rank's first op, in the file
  OpId run_base = 0;          // and its id in the graph
  for (std::size_t i = 0; i < ops.size(); ++i) {
    std::string path = fmt::format("ops[{}]", i);
    const json& oj = r.array(ops[i], path);
    if (contiguous && i > 0 && oj[0] != ops[i - 1][0]) {
      (void)g.end_rank(static_cast<RankId>(ops[i - 1][0].get<std::int64_t>()));
      run_start = i;
      run_base = static_cast<OpId>(g.ops().size());
    }
    if (oj.size() < kOpFixedFields)
      r.fail(path, fmt::format("expected at least {} fields (rank, stream, type, payload, phase, layer, "
                               "micro_batch, deps...), got {}", kOpFixedFields, oj.size()));
    auto rank = static_cast<RankId>(r.integer(oj[0], path + ".rank", 0, total - 1));
    if (!simulated_set.count(rank)) r.fail(path + ".rank", fmt::format("rank {} is not simulated (not in simulated_ranks)", rank));
    auto stream = static_cast<std::uint8_t>(
        r.integer(oj[1], path + ".stream", 0, static_cast<std::int64_t>(g.stream_names().size()) - 1));
    auto type = static_cast<OpType>(r.integer(oj[2], path + ".type (0 compute, 1 collective)", 0, 1));
    std::int64_t table = type == OpType::compute ? static_cast<std::int64_t>(g.kernels().size())
                                                 : static_cast<std::int64_t>(g.collectives().size());
    if (table == 0)
      r.fail(path + ".payload", fmt::format("a {} op needs a {} table entry, and the table is empty",
                                            type == OpType::compute ? "compute" : "collective",
                                            type == OpType::compute ? "kernels" : "collectives"));
    auto payload = static_cast<std::uint32_t>(r.integer(oj[3], path + ".payload", 0, table - 1));
    auto phase = static_cast<Phase>(
        r.integer(oj[4], path + ".phase (0 forward, 1 backward, 2 recompute, 3 optimizer)", 0, 3));
    auto layer = static_cast<std::int16_t>(r.integer(oj[5], path + ".layer", -1, std::numeric_limits<std::int16_t>::max()));
    auto mb = static_cast<std::uint16_t>(r.integer(oj[6], path + ".micro_batch", 0, std::numeric_limits<std::uint16_t>::max()));
    deps.clear();
    for (std::size_t j = kOpFixedFields; j < oj.size(); ++j) {
      std::string dp = fmt::format("{}.deps[{}]", path, j - kOpFixedFields);
      if (i == 0) r.fail(dp, "the first op cannot have deps");
      const auto d = static_cast<OpId>(r.integer(oj[j], dp + " (an earlier op)", 0, static_cast<std::int64_t>(i) - 1));
      if (!contiguous) {
        deps.push_back(d);
        continue;
      }
      if (d < run_start)
        r.fail(dp, fmt::format("op {} (rank {}) depends on op {} of rank {}: cross-rank order goes through collectives", i, rank, d,
                               ops[d][0].dump()));
      deps.push_back(run_base + static_cast<OpId>(d - run_start));
    }
    g.add_op(rank, stream, type, payload, phase, layer, mb, deps);
  }
  if (contiguous && !ops.empty()) (void)g.end_rank(static_cast<RankId>(ops.back()[0].get<std::int64_t>()));

  try {
    g.validate();
  } catch (const core::Error& e) {
    throw core::Error(core::ErrorKind::input, e.message(), core::SourceLocation{file, 0, 0, ""});
  }
  return g;
}

}  // namespace inflect::workload
