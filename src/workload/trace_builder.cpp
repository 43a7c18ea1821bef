#include "inflect/workload/trace_builder.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <functional>
#include <queue>

#include "inflect/core/error.hpp"

namespace inflect::workload {
namespace {

template <class T>
void append_bytes(std::string& key, const T& v) {
  char buf[sizeof(T)];
  std::memcpy(buf, &v, sizeof(T));
  key.append(buf, sizeof(T));
}

void append_cost(std::string& key, const core::KernelCost& c) {
  append_bytes(key, c.cls);
  append_bytes(key, c.precision);
  append_bytes(key, c.flops.value());
  append_bytes(key, c.bytes.value());
  append_bytes(key, c.m);
  append_bytes(key, c.n);
  append_bytes(key, c.k);
  append_bytes(key, c.batch);
}

}  // namespace

void RankTrace::add(const TraceOp& op, std::span<const std::uint32_t> deps, std::string label) {
  ops_.push_back(op);
  deps_.insert(deps_.end(), deps.begin(), deps.end());
  dep_begin_.push_back(static_cast<std::uint32_t>(deps_.size()));
  labels_.push_back(std::move(label));
}

void RankTrace::add(const TraceOp& op, std::span<const std::uint32_t> deps) {
  ops_.push_back(op);
  deps_.insert(deps_.end(), deps.begin(), deps.end());
  dep_begin_.push_back(static_cast<std::uint32_t>(deps_.size()));
}

std::span<const std::uint32_t> RankTrace::deps(std::size_t i) const {
  return {deps_.data() + dep_begin_[i], dep_begin_[i + 1] - dep_begin_[i]};
}

std::uint32_t TraceGraphBuilder::kernel(const Kernel& k) {
  std::string key = k.name;
  key.push_back('\0');
  append_cost(key, k.cost);
  append_bytes(key, k.parts.size());
  for (const auto& p : k.parts) append_cost(key, p);
  append_bytes(key, k.recorded ? k.recorded->count_ps() : -1);
  auto [it, fresh] = kernel_index_.try_emplace(std::move(key), 0);
  if (fresh) it->second = g_.add_kernel(k);
  return it->second;
}

std::uint32_t TraceGraphBuilder::collective(const Collective& c) {
  std::string key = c.name;
  key.push_back('\0');
  append_bytes(key, c.kind);
  append_bytes(key, c.dim);
  append_bytes(key, c.group);
  append_bytes(key, c.bytes.value());
  for (const auto& t : c.then) {
    key += t.name;
    key.push_back('\0');
    append_bytes(key, t.kind);
    append_bytes(key, t.bytes.value());
  }
  auto [it, fresh] = collective_index_.try_emplace(std::move(key), 0);
  if (fresh) it->second = g_.add_collective(c);
  return it->second;
}

GroupId TraceGraphBuilder::group(const std::vector<RankId>& members, const std::vector<std::vector<RankId>>& mirrors) {
  std::string key;
  for (RankId m : members) append_bytes(key, m);
  for (const auto& mirror : mirrors) {
    key.push_back('|');
    for (RankId m : mirror) append_bytes(key, m);
  }
  auto [it, fresh] = group_index_.try_emplace(std::move(key), 0);
  if (fresh) it->second = g_.add_group(Group{members, mirrors});
  return it->second;
}

std::uint8_t TraceGraphBuilder::stream(const std::string& name, const std::string& where) {
  const auto& names = g_.stream_names();
  if (names.size() >= 255 && std::find(names.begin(), names.end(), name) == names.end())
    throw core::Error(core::ErrorKind::input, fmt::format("{}: stream '{}' would be the 256th over all ranks; the graph holds "
                                                          "at most 255 (an op holds its stream in a byte)",
                                                          where, name));
  return g_.stream(name);
}

bool TraceGraphBuilder::add_rank(RankId r, const RankTrace& t, const std::string& file) {
  const std::size_t n = t.size();
  indegree_.assign(n, 0);
  // children of each op, as a CSR over the deps
  std::vector<std::uint32_t> child_begin(n + 1, 0), children;
  for (std::size_t i = 0; i < n; ++i) {
    for (std::uint32_t d : t.deps(i)) {
      if (d >= n) core::check_invariant(false, "trace dependency out of range");
      ++child_begin[d + 1];
    }
    indegree_[i] = static_cast<std::uint32_t>(t.deps(i).size());
  }
  for (std::size_t i = 0; i < n; ++i) child_begin[i + 1] += child_begin[i];
  children.resize(child_begin[n]);
  {
    std::vector<std::uint32_t> fill(child_begin.begin(), child_begin.end() - 1);
    for (std::size_t i = 0; i < n; ++i)
      for (std::uint32_t d : t.deps(i)) children[fill[d]++] = static_cast<std::uint32_t>(i);
  }
  // Kahn's algorithm, lowest position first: an already ordered trace comes out unchanged.
  std::priority_queue<std::uint32_t, std::vector<std::uint32_t>, std::greater<>> ready;
  for (std::size_t i = 0; i < n; ++i)
    if (indegree_[i] == 0) ready.push(static_cast<std::uint32_t>(i));
  order_.clear();
  order_.reserve(n);
  while (!ready.empty()) {
    const std::uint32_t i = ready.top();
    ready.pop();
    order_.push_back(i);
    for (std::uint32_t c = child_begin[i]; c < child_begin[i + 1]; ++c)
      if (--indegree_[children[c]] == 0) ready.push(children[c]);
  }
  if (order_.size() != n) {
    // Walk back from an op left over through deps that are left over too: it must come around.
    std::uint32_t at = 0;
    while (indegree_[at] == 0) ++at;
    std::vector<std::uint32_t> seen_at(n, 0), path;
    while (seen_at[at] == 0) {
      seen_at[at] = static_cast<std::uint32_t>(path.size() + 1);
      path.push_back(at);
      for (std::uint32_t d : t.deps(at))
        if (indegree_[d] != 0) {
          at = d;
          break;
        }
    }
    std::vector<std::string> names;
    for (std::size_t i = seen_at[at] - 1; i < path.size() && names.size() < 8; ++i) names.push_back(t.label(path[i]));
    throw core::Error(core::ErrorKind::input,
                      fmt::format("{}: rank {}: the dependencies form a cycle ({} of {} nodes can never run): {} "
                                  "waits for {}",
                                  file, r, n - order_.size(), n, fmt::join(names, " -> waits for "), names.front()));
  }
  position_.assign(n, 0);
  const auto base = static_cast<OpId>(g_.ops().size());
  for (std::size_t p = 0; p < n; ++p) position_[order_[p]] = static_cast<std::uint32_t>(p);
  std::vector<OpId> deps;
  for (std::size_t p = 0; p < n; ++p) {
    const std::uint32_t i = order_[p];
    const TraceOp& op = t.op(i);
    deps.clear();
    // In the trace's order (a round trip keeps the bytes), each once.
    for (std::uint32_t d : t.deps(i)) {
      const OpId id = base + position_[d];
      if (std::find(deps.begin(), deps.end(), id) == deps.end()) deps.push_back(id);
    }
    g_.add_op(r, op.stream, op.type, op.payload, op.phase, op.layer, op.micro_batch, deps);
  }
  return g_.end_rank(r);
}

bool TraceGraphBuilder::add_copy(RankId r, RankId of) {
  // `of`'s kept rank and collectives, whether `of` was kept or stored as a replica itself.
  std::uint32_t kept = 0;
  const std::vector<std::uint32_t>* colls = nullptr;
  for (std::uint32_t k = 0; k < g_.kept_ranks().size() && !colls; ++k)
    if (g_.kept_ranks()[k].rank == of) {
      kept = k;
      colls = &g_.kept_ranks()[k].colls;
    }
  for (std::size_t i = 0; i < g_.replicas().size() && !colls; ++i)
    if (g_.replicas()[i].rank == of) {
      kept = g_.replicas()[i].kept;
      colls = &g_.replicas()[i].colls;
    }
  if (!colls) return false;
  for (std::uint32_t c : *colls)
    if (!is_member(c, r)) return false;
  g_.add_replica(r, kept, *colls);  // takes a copy before it stores the replica
  return true;
}

bool TraceGraphBuilder::is_member(std::uint32_t collective, RankId r) const {
  const auto& m = g_.groups()[g_.collectives()[collective].group].members;
  return std::find(m.begin(), m.end(), r) != m.end();
}

ExecutionGraph TraceGraphBuilder::finish(int total_ranks, std::string name) {
  std::vector<RankId> simulated(static_cast<std::size_t>(total_ranks));
  for (int i = 0; i < total_ranks; ++i) simulated[static_cast<std::size_t>(i)] = static_cast<RankId>(i);
  return finish(total_ranks, std::move(simulated), std::vector<std::uint32_t>(static_cast<std::size_t>(total_ranks), 1),
                std::move(name));
}

ExecutionGraph TraceGraphBuilder::finish(int total_ranks, std::vector<RankId> simulated, std::vector<std::uint32_t> represents,
                                         std::string name) {
  g_.set_ranks(total_ranks, std::move(simulated), std::move(represents));
  g_.name = std::move(name);
  g_.validate();
  return std::move(g_);
}

}  // namespace inflect::workload
