#include "inflect/plan/diloco.hpp"

#include <cmath>

#include "inflect/core/precision.hpp"

namespace inflect::plan {

int diloco_workers(const Experiment& e) { return e.training.diloco ? e.training.diloco->workers : 1; }

int worker_dp(const Experiment& e, int dp) { return dp / diloco_workers(e); }

const char* compression_name(OuterCompression c) {
  switch (c) {
    case OuterCompression::none: return "none";
    case OuterCompression::fp16: return "fp16";
    case OuterCompression::bf16: return "bf16";
    case OuterCompression::int8: return "int8";
    case OuterCompression::topk: return "topk";
  }
  return "?";
}

std::optional<OuterCompression> compression_from_name(std::string_view name) {
  for (OuterCompression c : {OuterCompression::none, OuterCompression::fp16, OuterCompression::bf16, OuterCompression::int8,
                             OuterCompression::topk})
    if (name == compression_name(c)) return c;
  return std::nullopt;
}

OuterCollective outer_collective(const DilocoSpec& d, double params) {
  OuterCollective o;
  const double k = d.workers;
  switch (d.compression) {
    case OuterCompression::none: o.payload = 4 * params; break;
    case OuterCompression::fp16:
    case OuterCompression::bf16: o.payload = 2 * params; break;
    case OuterCompression::int8: o.payload = params + kInt8ChunksPerRank * k * kInt8TableBytes; break;
    case OuterCompression::topk:
      o.kind = workload::CollectiveKind::all_gather;
      o.payload = std::ceil(d.topk_fraction * params) * kTopkEntryBytes;
      o.bytes = k * o.payload;
      o.sent = (k - 1) * o.payload;
      return o;
  }
  o.bytes = o.payload;
  o.sent = 2 * (k - 1) / k * o.payload;
  return o;
}

double optimizer_shard_params(const Experiment& e, int dp, const StageMemory& st) {
  const ParallelPlan& p = e.parallel;
  if (p.zero < 1) return st.params;
  const int wdp = worker_dp(e, dp);
  const int dp_group_size = shard_groups(p, wdp).size;
  const int edp_group_size = wdp * p.cp / p.ep;
  const double experts = p.ep > 1 ? st.expert_params : 0.0;
  return (st.params - experts) / dp_group_size + experts / edp_group_size;
}

double worker_share_params(const Experiment& e, int dp, const StageMemory& st) {
  const ParallelPlan& p = e.parallel;
  const double ranks = static_cast<double>(worker_dp(e, dp)) * p.cp;
  const double experts = p.ep > 1 ? st.expert_params : 0.0;
  return (st.params - experts) / ranks + experts / (ranks / p.ep);
}

double dp_sent_across_workers(double share_bytes, int workers) {
  const double k = workers;
  return 2 * (k - 1) / k * share_bytes;
}

namespace {
workload::KernelSpec memory_kernel(const char* name, double bytes, double flops) {
  core::KernelCost c;
  c.cls = core::KernelClass::memory;
  c.precision = core::Precision::fp32;
  c.bytes = core::Bytes(bytes);
  c.flops = core::Flops(flops);
  return {name, c};
}
}  // namespace

workload::KernelSpec pseudo_gradient_kernel(double params) {
  return memory_kernel("diloco_pseudo_gradient", 12 * params, params);
}

workload::KernelSpec outer_update_kernel(double params, core::Precision precision) {
  // Nesterov: m = mu*m + g; p -= lr*(g + mu*m): about 5 operations per element.
  const double bytes = 24 + (core::stored_as_fp32(precision) ? 0 : 2);
  return memory_kernel("diloco_outer_nesterov", bytes * params, 5 * params);
}

}  // namespace inflect::plan
