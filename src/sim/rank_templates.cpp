#include "sim/rank_templates.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <limits>

#include "inflect/core/error.hpp"

namespace inflect::sim {

using workload::GroupId;
using workload::Op;
using workload::OpId;
using workload::OpType;

// Sorts the simulated ranks into classes (workload::rank_classes) and builds each class's template
// from its first rank's ops.
RankTemplates::RankTemplates(const workload::ExecutionGraph& g, const std::string& compute_stream)
    : g_(g), rank_ops_(g), keys_(static_cast<std::uint32_t>(std::max<std::size_t>(1, g.stream_names().size()))) {
  for (std::size_t i = 0; i < g.stream_names().size(); ++i)
    if (g.stream_names()[i] == compute_stream) compute_stream_ = static_cast<int>(i);
  workload::RankClasses rc = workload::rank_classes(g, rank_ops_);
  const std::size_t n = g.ops().size();
  // Room for the worst case (every rank its own class) without regrowing; only the part used is
  // ever touched, so a 21M-op graph of 16 classes pays for 16 ranks' worth.
  ops_.reserve(n + 1);
  local_.reserve(n);
  deps_.reserve(g.dep_storage().size());
  succ_.reserve(g.dep_storage().size());
  classes_ = rc.classes();
  for (std::uint32_t c = 0; c < rc.classes(); ++c) build(Slot(rc.representative[c]), rc.roles(c));
  cls_.assign(rc.class_of.begin(), rc.class_of.end());
  bind_begin_.assign(rc.binding_begin.begin(), rc.binding_begin.end());
  bind_ = std::move(rc.bindings);
  OpTemplate sentinel;
  sentinel.dep_begin = static_cast<std::uint32_t>(deps_.size());
  sentinel.succ_begin = static_cast<std::uint32_t>(succ_.size());
  ops_.push_back(sentinel);
}

void RankTemplates::build(Slot rep, std::span<const GroupId> roles) {
  const auto& ops = g_.ops();
  const std::uint32_t slot = rep.value();
  const std::uint32_t nops = rank_ops_.count(slot);
  const std::uint32_t nstreams = keys_.streams();
  if (roles.size() > std::numeric_limits<std::uint16_t>::max())
    throw core::Error(core::ErrorKind::input,
                      fmt::format("rank {} calls more than 65535 process groups", g_.simulated_ranks()[slot]));
  const auto base = static_cast<std::uint32_t>(ops_.size());
  // Stream-major order: a stream's ops are one contiguous range and its head an index into it.
  std::vector<std::uint32_t> count(nstreams + 1, 0);
  for (std::uint32_t j = 0; j < nops; ++j) ++count[ops[rank_ops_.id(slot, j)].stream + 1];
  for (std::uint32_t s = 0; s < nstreams; ++s) count[s + 1] += count[s];
  for (std::uint32_t s = 0; s <= nstreams; ++s) stream_begin_.push_back(TemplateOp(base + count[s]));
  auto& top_of_local = top_of_local_;  // the rank's j-th op (issue order) -> template op
  top_of_local.resize(nops);
  ops_.resize(base + nops);
  local_.resize(base + nops);
  std::vector<std::uint32_t> fill(count.begin(), count.end() - 1);
  std::vector<std::uint32_t> calls(roles.size(), 0);  // per role
  const auto& colls = g_.collectives();
  for (std::uint32_t j = 0; j < nops; ++j) {
    const Op& op = ops[rank_ops_.id(slot, j)];
    const TemplateOp t(base + fill[op.stream]++);
    top_of_local[j] = t.value();
    local_[t] = j;
    OpTemplate& top = ops_[t];
    top.stream = op.stream;
    top.compute = op.type == OpType::compute;
    top.on_compute_stream = static_cast<int>(op.stream) == compute_stream_;
    top.payload = op.payload;
    if (!top.compute) {
      const GroupId grp = colls[op.payload].group;
      std::uint32_t role = 0;
      while (roles[role] != grp) ++role;  // the roles are this rank's groups
      top.role = static_cast<std::uint16_t>(role);
      top.dim = colls[op.payload].dim;
      top.ordinal = calls[role]++;
    }
  }
  // Dependencies and successors in template order (successors sorted, as they are pushed in order).
  auto& nsucc = nsucc_;
  nsucc.assign(nops + 1, 0);
  for (std::uint32_t t = base; t < base + nops; ++t) {
    ops_[TemplateOp(t)].dep_begin = static_cast<std::uint32_t>(deps_.size());
    for (OpId d : g_.deps(rank_ops_.id(slot, local_[TemplateOp(t)]))) {
      const std::uint32_t dt = top_of_local[rank_ops_.position(slot, d)];
      deps_.push_back(TemplateOp(dt));
      ++nsucc[dt - base + 1];
    }
  }
  for (std::uint32_t i = 0; i < nops; ++i) nsucc[i + 1] += nsucc[i];
  const auto succ_base = static_cast<std::uint32_t>(succ_.size());
  succ_.resize(succ_base + nsucc[nops]);
  for (std::uint32_t i = 0; i < nops; ++i) ops_[TemplateOp(base + i)].succ_begin = succ_base + nsucc[i];
  for (std::uint32_t t = base; t < base + nops; ++t) {
    const std::uint32_t e = t + 1 < base + nops ? ops_[TemplateOp(t + 1)].dep_begin : static_cast<std::uint32_t>(deps_.size());
    for (std::uint32_t d = ops_[TemplateOp(t)].dep_begin; d < e; ++d)
      succ_[succ_base + nsucc[deps_[d].value() - base]++] = TemplateOp(t);
  }
}

}  // namespace inflect::sim
