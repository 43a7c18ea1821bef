#include "inflect/search/estimate.hpp"

#include <algorithm>
#include <cmath>

#include "inflect/plan/memory.hpp"
#include "inflect/plan/placement.hpp"
#include "inflect/workload/layer_costs.hpp"

namespace inflect::search {

namespace {

enum Group : unsigned { kTp, kDp, kEdp, kEp, kPp, kCpRing, kMirror, kCp };

/// Compute of `t` seconds overlapped by communication of `c` seconds on the same device: the
/// kernels run 1/(1+ci) slower while data moves (the engine's interference rule), and the step
/// waits for whichever ends last.
double overlapped(double t, double c, double ci) {
  if (c >= t * (1 + ci)) return c;
  return t + ci * c;
}

}  // namespace

struct Estimator::LayerTimes {
  double attn_f = 0, mlp_f = 0, attn_b = 0, mlp_b = 0, attn_w = 0, mlp_w = 0;
  double core_f = 0, core_b = 0;  // the attention core (attention-class kernels)
  double selective_f = 0;         // what selective recompute re-runs (parallel.selective_recompute)
  double moe_f = 0, moe_b = 0, moe_w = 0;  // an MoE layer's MLP block (router, experts, combine)
  double embed_f = 0, embed_b = 0, head_f = 0, head_b = 0;
  double tp_bytes = 0, cp_kv_bytes = 0, ep_bytes = 0, pp_bytes = 0;
};

Estimator::Estimator(const plan::Experiment& base, std::shared_ptr<const net::Topology> topology)
    : e_(base), topo_(std::move(topology)), compute_(base.cluster.device), power_(base.cluster.device) {
  tuning_ = net::CollectiveTuning::of(base.cluster.topology);
}

double Estimator::kernel_s(const core::KernelCost& k) const {
  const double cap = e_.cluster.power_cap();
  if (cap >= power_.board().value()) return compute_.duration(k).seconds();  // the calibrated clock
  const hw::KernelPower p = power_.profile(k, compute_);  // p.t_cal is that duration
  return p.t_cal.value() * power_.time_scale(p, power_.level_under(p, core::Watts(cap)));
}

double Estimator::seconds_of(const std::vector<workload::KernelSpec>& ks, int which) const {
  // which: 0 = every kernel, 1 = weight-gradient kernels only, 2 = attention-class kernels only.
  double s = 0;
  for (const auto& k : ks) {
    if (which == 1 && !k.weight_gradient) continue;
    if (which == 2 && !k.attention_core) continue;
    s += kernel_s(k.cost);
  }
  return s;
}

Estimator::~Estimator() = default;

const Estimator::LayerTimes& Estimator::layer_times(const Candidate& c) {
  const std::uint64_t key = static_cast<std::uint64_t>(c.tp) | (static_cast<std::uint64_t>(c.sequence_parallel) << 7) |
                            (static_cast<std::uint64_t>(c.cp) << 8) | (static_cast<std::uint64_t>(c.ep) << 24) |
                            (static_cast<std::uint64_t>(c.micro_batch) << 40);
  auto& slot = layers_[key];
  if (slot) return *slot;
  slot = std::make_unique<LayerTimes>();
  LayerTimes& t = *slot;
  const auto& m = *e_.workload.model;
  const workload::ShardShape s = plan::shard_shape(e_);
  const workload::LayerKernels lk = workload::transformer_layer(m, s);
  t.attn_f = seconds_of(lk.attn_fwd);
  t.mlp_f = seconds_of(lk.mlp_fwd);
  t.attn_b = seconds_of(lk.attn_bwd);
  t.mlp_b = seconds_of(lk.mlp_bwd);
  t.attn_w = seconds_of(lk.attn_bwd, 1);
  t.mlp_w = seconds_of(lk.mlp_bwd, 1);
  t.core_f = seconds_of(lk.attn_fwd, 2);
  t.core_b = seconds_of(lk.attn_bwd, 2);
  if (c.cp > 1 && e_.parallel.cp_comm == plan::CpComm::p2p) {  // each ring step's merge or accumulation
    t.attn_f += c.cp * seconds_of(lk.cp_step_fwd);
    t.attn_b += c.cp * seconds_of(lk.cp_step_bwd);
  }
  t.selective_f = e_.parallel.selective_recompute == plan::SelectiveRecompute::every_other_matmul
                      ? seconds_of(workload::every_other_matmul_recompute(m, lk))
                      : t.core_f;
  t.tp_bytes = lk.tp_boundary_bytes.value();
  t.cp_kv_bytes = lk.cp_kv_bytes.value();
  if (m.is_moe()) {
    const workload::MoeKernels mk = workload::moe_mlp(m, s);
    t.moe_f = seconds_of(mk.pre_fwd) + seconds_of(mk.experts_fwd) + seconds_of(mk.post_fwd);
    t.moe_b = seconds_of(mk.pre_bwd) + seconds_of(mk.experts_bwd) + seconds_of(mk.post_bwd);
    t.moe_w = seconds_of(mk.pre_bwd, 1) + seconds_of(mk.experts_bwd, 1) + seconds_of(mk.post_bwd, 1);
    t.ep_bytes = mk.dispatch_bytes.value();
  }
  t.embed_f = seconds_of(workload::embedding_fwd(m, s));
  t.embed_b = seconds_of(workload::embedding_bwd(m, s));
  t.head_f = seconds_of(workload::head_fwd(m, s));
  t.head_b = seconds_of(workload::head_bwd(m, s));
  const double tokens = static_cast<double>(c.micro_batch * e_.training.seq_len / c.cp);
  t.pp_bytes = tokens * static_cast<double>(m.hidden) * core::bytes_per_element(core::activation_precision(e_.training.precision)) /
               (c.sequence_parallel ? c.tp : 1);
  // Megatron-LM's scatter/gather: 1/tp of the message per rank (the receivers' NVLink all-gather
  // is left out of the estimate).
  if (e_.parallel.pp_scatter_gather && c.tp > 1 && !c.sequence_parallel) t.pp_bytes /= c.tp;
  return t;
}

double Estimator::collective_s(net::CollectiveOp op, int group, const Candidate& c, double bytes) {
  if (bytes <= 0) return 0;
  const std::uint64_t outer = static_cast<std::uint64_t>(group) | (static_cast<std::uint64_t>(op) << 3) |
                              (static_cast<std::uint64_t>(c.tp) << 6) | (static_cast<std::uint64_t>(c.cp) << 13) |
                              (static_cast<std::uint64_t>(c.pp) << 29) | (static_cast<std::uint64_t>(c.ep) << 45);
  auto it = collectives_.find(outer);
  if (it == collectives_.end()) {
    const plan::Mesh mesh(e_.parallel, c.dp);
    std::vector<workload::RankId> ranks;
    switch (static_cast<Group>(group)) {
      case kTp: ranks = mesh.group(0, plan::Dim::tp); break;
      case kDp: ranks = mesh.group2(0, plan::Dim::dp, plan::Dim::cp); break;
      case kEdp:
        for (int d = 0; d < c.dp; d += c.ep)
          for (int cp = 0; cp < c.cp; ++cp) ranks.push_back(mesh.rank(plan::Coords{0, cp, 0, d}));
        break;
      case kEp:
        for (int d = 0; d < c.ep; ++d) ranks.push_back(mesh.rank(plan::Coords{0, 0, 0, d}));
        break;
      case kPp: ranks = {0, mesh.rank(plan::Coords{0, 0, 1, 0})}; break;
      case kCpRing: ranks = {0, mesh.rank(plan::Coords{0, 1, 0, 0})}; break;
      case kMirror: ranks = {0, mesh.rank(plan::Coords{0, 0, c.pp - 1, 0})}; break;  // DualPipe's two copies
      case kCp: ranks = mesh.group(0, plan::Dim::cp); break;
    }
    const std::vector<net::DeviceId> members(ranks.begin(), ranks.end());
    it = collectives_.emplace(outer, net::collective_cost_model(op, members, *topo_, tuning_)).first;
  }
  return it->second.time(core::Bytes(bytes)).value();
}

Estimate Estimator::estimate(const Candidate& c, bool even_if_over_memory) {
  using net::CollectiveOp;
  apply(c, e_);
  const auto& m = *e_.workload.model;
  const plan::ScheduleShape shape = plan::schedule_shape(e_, c.dp);
  const std::uint64_t skey = static_cast<std::uint64_t>(c.schedule) | (static_cast<std::uint64_t>(shape.stages) << 4) |
                             (static_cast<std::uint64_t>(shape.virtual_stages) << 24) |
                             (static_cast<std::uint64_t>(shape.micro_batches) << 32);
  auto sit = schedules_.find(skey);
  if (sit == schedules_.end()) sit = schedules_.emplace(skey, plan::schedule_facts(c.schedule, shape)).first;
  const plan::MemoryEstimate mem = plan::estimate_memory(e_, c.dp, sit->second);
  Estimate out;
  out.fits = mem.fits();
  out.memory_peak_bytes = mem.peak.value();
  out.memory_peak_stage = mem.peak_stage;
  if (!out.fits && !even_if_over_memory) return out;

  const LayerTimes& t = layer_times(c);
  const double ci = e_.cluster.device.comm_interference;
  const double bpe = core::bytes_per_element(core::activation_precision(e_.training.precision));
  const double gbytes = plan::grad_bytes_per_param(e_.training);
  const int p = c.pp;
  const bool dual = c.schedule == plan::Schedule::dualpipe || c.schedule == plan::Schedule::dualpipev;
  const double mbs = static_cast<double>(e_.training.global_batch / (static_cast<std::int64_t>(c.dp) * c.micro_batch));

  // Per-layer communication on the critical path of each micro-batch.
  double tp_layer_f = 0, tp_layer_b = 0;
  if (c.tp > 1) {
    const double one = c.sequence_parallel ? collective_s(CollectiveOp::all_gather, kTp, c, t.tp_bytes) +
                                                 collective_s(CollectiveOp::reduce_scatter, kTp, c, t.tp_bytes)
                                           : collective_s(CollectiveOp::all_reduce, kTp, c, t.tp_bytes);
    tp_layer_f = tp_layer_b = 2 * one;  // attention and MLP blocks
  }
  double cp_layer_f = 0, cp_layer_b = 0;
  if (c.cp > 1 && e_.parallel.cp_comm == plan::CpComm::all_gather) {
    // K and V gathered before the attention (forward and again in backward), their gradients
    // reduce-scattered after it: all on the critical path.
    const double ag = collective_s(CollectiveOp::all_gather, kCp, c, t.cp_kv_bytes * c.cp);
    cp_layer_f = ag;
    cp_layer_b = ag + collective_s(CollectiveOp::reduce_scatter, kCp, c, t.cp_kv_bytes * c.cp);
  } else if (c.cp > 1) {
    const double hop_f = collective_s(CollectiveOp::send_recv, kCpRing, c, t.cp_kv_bytes);
    const double hop_b = collective_s(CollectiveOp::send_recv, kCpRing, c, 2 * t.cp_kv_bytes);
    cp_layer_f = (c.cp - 1) * std::max(0.0, hop_f - t.core_f / c.cp);
    cp_layer_b = (c.cp - 1) * std::max(0.0, hop_b - t.core_b / c.cp);
  }
  double ep_layer = 0;  // dispatch + combine, each way
  if (m.is_moe() && c.ep > 1) ep_layer = 2 * collective_s(CollectiveOp::all_to_all, kEp, c, t.ep_bytes);

  // ZeRO-3 gathers each layer one layer ahead (and again before its backward) and reduce-
  // scatters its gradients as soon as its backward is done: the dense part over dp*cp, with EP
  // the rank's routed experts over the expert-data-parallel group (dp*cp/ep ranks; nothing when
  // that is one rank), one after the other on the compiler's gather and dp streams.
  const bool zero3 = c.zero >= 3;
  const double edp = static_cast<double>(c.dp) * c.cp / c.ep;
  auto layer_comm = [&](CollectiveOp op, bool moe, double per_param) {
    const plan::LayerShard held = plan::layer_shard(m, moe ? m.moe.first_dense_layers : 0, c.tp, c.ep);
    double s = collective_s(op, kDp, c, held.dense * per_param);
    if (held.experts > 0 && edp > 1) s += collective_s(op, kEdp, c, held.experts * per_param);
    return s;
  };
  auto layer_gather = [&](bool moe) { return layer_comm(CollectiveOp::all_gather, moe, bpe); };
  auto layer_scatter = [&](bool moe) { return layer_comm(CollectiveOp::reduce_scatter, moe, gbytes); };

  struct Part {
    double compute = 0, tp = 0, cp = 0, ep = 0, dp = 0;
    double total() const { return compute + tp + cp + ep + dp; }
    Part& add(const Part& o, double times) {
      compute += times * o.compute;
      tp += times * o.tp;
      cp += times * o.cp;
      ep += times * o.ep;
      dp += times * o.dp;
      return *this;
    }
  };
  auto layer = [&](bool moe, Part& f, Part& b, double& w) {
    const double mlp_f = moe ? t.moe_f : t.mlp_f, mlp_b = moe ? t.moe_b : t.mlp_b;
    const double lf = t.attn_f + mlp_f, lb = t.attn_b + mlp_b;
    // Full recomputation re-runs the layer's forward (its communication too) before its backward;
    // selective, the attention core.
    const double rc = c.recompute == plan::Recompute::full ? lf : c.recompute == plan::Recompute::selective ? t.selective_f : 0.0;
    double cf = lf, cb = lb + rc;
    if (zero3) {
      const double ag = layer_gather(moe);
      // Without resharding after forward the backward needs no second gather; without overlap
      // the reduce-scatters wait for the end of the step (counted with the DP exposure below).
      const double back = (e_.parallel.reshard_after_forward ? ag : 0.0) + (e_.parallel.overlap_grad_reduce ? layer_scatter(moe) : 0.0);
      const double fz = overlapped(cf, ag, ci), bz = overlapped(cb, back, ci);
      // The part beyond the kernels' own time: interference while overlapped, or the wait.
      f.dp += fz - cf;
      b.dp += bz - cb;
    }
    f.compute += cf;
    b.compute += cb;
    f.tp += tp_layer_f;
    b.tp += tp_layer_b + (c.recompute == plan::Recompute::full ? tp_layer_f : 0);
    f.cp += cp_layer_f;
    b.cp += cp_layer_b + (c.recompute == plan::Recompute::full ? cp_layer_f : 0);
    if (moe) {
      f.ep += ep_layer;
      b.ep += ep_layer + (c.recompute == plan::Recompute::full ? ep_layer : 0);
    }
    w += t.attn_w + (moe ? t.moe_w : t.mlp_w);
  };

  // Per micro-batch and stage; the stage with the most work sets the pace (one-chunk layers
  // per stage; multi-chunk layouts hold the same number of layers per rank).
  const int per_stage = m.layers / p;
  Part best_f, best_b, sum_f, sum_b;  // the critical stage's, and the mean over stages
  double mean_w = 0;
  const bool v_shape = c.schedule == plan::Schedule::dualpipev, two_way = c.schedule == plan::Schedule::dualpipe;
  // One dense and one MoE layer, each worked out once.
  Part dense_f, dense_b, moe_f, moe_b;
  double dense_w = 0, moe_w = 0;
  layer(false, dense_f, dense_b, dense_w);
  if (m.is_moe()) layer(true, moe_f, moe_b, moe_w);
  for (int s = 0; s < p; ++s) {
    Part f, b;
    double w = 0;
    int moe_layers = 0;
    if (m.is_moe()) {
      const int lo = s * per_stage, hi = lo + per_stage;
      moe_layers = std::max(0, hi - std::max(lo, m.moe.first_dense_layers));
    }
    const int dense_layers = per_stage - moe_layers;
    f.add(moe_f, moe_layers).add(dense_f, dense_layers);
    b.add(moe_b, moe_layers).add(dense_b, dense_layers);
    w += moe_layers * moe_w + dense_layers * dense_w;
    // Where routes start and end: the embedding on the first chunk, the head on the last.
    double ends_f = 0, ends_b = 0;
    if (p == 1 || (v_shape && s == 0)) {
      ends_f = t.embed_f + t.head_f;
      ends_b = t.embed_b + t.head_b;
    } else if (two_way && (s == 0 || s == p - 1)) {
      ends_f = (t.embed_f + t.head_f) / 2;
      ends_b = (t.embed_b + t.head_b) / 2;
    } else if (!v_shape && s == 0) {
      ends_f = t.embed_f;
      ends_b = t.embed_b;
    } else if (!v_shape && s == p - 1) {
      ends_f = t.head_f;
      ends_b = t.head_b;
    }
    f.compute += ends_f;
    b.compute += ends_b;
    sum_f.add(f, 1.0 / p);
    sum_b.add(b, 1.0 / p);
    mean_w += w / p;
    if (s == 0 || f.total() + b.total() > best_f.total() + best_b.total()) {
      best_f = f;
      best_b = b;
    }
  }
  // DualPipe runs the forward of one micro-batch paired with the backward of another through
  // its main phase; the compiler weaves the two block by block, so a collective of one overlaps
  // the other's next block — but each chain still waits for its own collectives, and both share
  // one TP (and one EP) stream, so about half of the pair's communication is hidden. The warm-up
  // and cool-down steps (about 2p of the m) run alone.
  if (dual) {
    const double paired = std::max(0.0, 1.0 - 2.0 * p / mbs);
    for (Part* x : {&best_f, &best_b, &sum_f, &sum_b}) {
      x->tp *= 1 - paired / 2;
      x->ep *= 1 - paired / 2;
    }
  }
  const double bc = best_b.total();

  // The pipeline: m micro-batches at the critical stage's pace, plus the schedule's bubble and
  // the activations' send/recv on the fill and drain path. The bubble is the other stages'
  // fill and drain, so it is taken at the mean stage's pace (the critical stage, heavier by the
  // embedding or the head, already sets the m steps).
  const double fm = sum_f.total(), bm = sum_b.total(), wm = mean_w;
  double bubble = 0;
  switch (c.schedule) {
    case plan::Schedule::one_f_one_b:
    case plan::Schedule::gpipe:
    case plan::Schedule::custom: bubble = (p - 1) * (fm + bm); break;  // (the search never proposes custom)
    case plan::Schedule::interleaved: bubble = (p - 1) * (fm + bm) / c.virtual_stages; break;
    case plan::Schedule::zero_bubble: bubble = (p - 1) * std::max(0.0, fm + bm - 2 * wm); break;
    case plan::Schedule::dualpipe:
    case plan::Schedule::dualpipev: bubble = std::max(0.0, (p / 2.0 - 1) * (fm + 2 * bm - 3 * wm)); break;
  }
  // In DualPipe(V) the heaviest ranks are those at the route ends (embedding and head), which
  // start the schedule: no fill to wait for, and their extra work per micro-batch over the mean
  // stage lets the others catch up, so their own idle shrinks by it. (In 1F1B the heavy last
  // stage waits for the whole fill whatever its work.)
  if (dual)
    bubble = std::max(0.0, bubble - mbs * (best_f.total() + bc - fm - bm));
  // Send/recv of activations and their gradients: 1F1B and zero-bubble wait for them only on
  // the fill and drain path (in the steady state a transfer runs while the other phase computes).
  // Interleaved 1F1B runs a micro-batch's chunks back to back across the ranks, so its forward
  // and backward wait on every chunk hand-over of the steady state as well (V-1 per micro-batch
  // and direction); DualPipe's paired steps each wait on the one transfer that feeds them.
  const double hop = p > 1 ? collective_s(CollectiveOp::send_recv, kPp, c, t.pp_bytes) : 0;
  double p2p = 2 * (p - 1) * hop;
  if (c.schedule == plan::Schedule::interleaved) p2p += 2 * mbs * (c.virtual_stages - 1) * hop;
  if (dual) p2p = 2 * mbs * hop;

  // Data parallelism: each stage reduces its gradients in buckets through its last backward;
  // stage s finishes that backward about s backward-steps before stage 0 (the drain), which is
  // slack for its reduction.
  double dp_exposed = 0, interference = 0, after_optimizer = 0, most_shard_params = 0, mirror = 0;
  const bool reduce = c.dp * c.cp > 1;
  for (int s = 0; s < p; ++s) {
    const auto& st = mem.stages[static_cast<std::size_t>(s)];
    const double dense = st.params - st.expert_params, experts = st.expert_params;
    // (With ep = 1 the expert-data-parallel group is dp*cp itself.)
    const double shard_params = c.zero >= 1 ? dense / (static_cast<double>(c.dp) * c.cp) + experts / edp : st.params;
    most_shard_params = std::max(most_shard_params, shard_params);
    // DualPipe: the two copies of each stage sum their gradients before the update (the compiler's
    // pp_ar_dualpipe_copies), on the optimizer's shards.
    if (c.schedule == plan::Schedule::dualpipe) mirror = std::max(mirror, collective_s(CollectiveOp::all_reduce, kMirror, c, shard_params * gbytes));
    if (!reduce || (s > 0 && s < p - 1)) continue;  // first and last stages bound the rest
    const auto op = c.zero >= 1 ? CollectiveOp::reduce_scatter : CollectiveOp::all_reduce;
    double exposed = 0;
    if (zero3) {
      // Per-layer reduce-scatters overlap the backward; the stage's last layer's is exposed. Without
      // overlap every layer's waits for the end of the schedule.
      const bool moe_stage = m.moe_layer(s * per_stage);
      exposed = e_.parallel.overlap_grad_reduce ? layer_scatter(moe_stage) : per_stage * layer_scatter(moe_stage);
    } else {
      // The compiler fills each bucket with the dense and the routed experts' gradients as the
      // layers finish and reduces its two parts over their groups one after the other: n buckets
      // of d (dense, over dp*cp) + d_exp (experts, over dp*cp/ep; nothing when that is one rank).
      const double dense_bytes = (c.ep > 1 ? dense : st.params) * gbytes;
      const double expert_bytes = c.ep > 1 ? experts * gbytes : 0.0;
      const double bucket = e_.parallel.grad_bucket_bytes.value();
      const double n = bucket > 0 ? std::max(1.0, std::ceil((dense_bytes + expert_bytes) / bucket)) : 1.0;
      const double d = collective_s(op, kDp, c, dense_bytes / n);
      const double d_exp = expert_bytes > 0 && edp > 1 ? collective_s(op, kEdp, c, expert_bytes / n) : 0;
      const double total = n * (d + d_exp);
      // The buckets fill while the last backward runs (b seconds). A rank that holds k chunks
      // (interleaved: V; DualPipe(V): 2) finishes their last backwards at different times: the
      // last micro-batch's backward must cross `early` chunk-steps of other ranks between its
      // first and its last chunk here (interleaved (V-1)*p, DualPipeV the whole V 2(p-1),
      // DualPipe p-1 of one direction), so the reduction of the earlier chunks overlaps them,
      // and only the last chunk's share must fit in that chunk's own backward.
      const int k = c.schedule == plan::Schedule::interleaved ? c.virtual_stages
                    : dual                                          ? 2
                                                                    : 1;
      const double early = c.schedule == plan::Schedule::interleaved ? (c.virtual_stages - 1) * p
                           : c.schedule == plan::Schedule::dualpipev ? 2.0 * (p - 1)
                           : c.schedule == plan::Schedule::dualpipe  ? p - 1.0
                                                                     : 0.0;
      const double chunk_b = bc / k;
      const double last_chunk = std::max(0.0, total / k - chunk_b * (1 - 1 / n));
      const double window = bc * (1 - 1 / n);
      if (!e_.parallel.overlap_grad_reduce) exposed = total;
      else if (c.zero == 2) exposed = std::max(d + d_exp, mbs * total - mbs * bc * (1 - 1 / n));
      else if (k == 1) exposed = std::max(d + d_exp, total - window);
      else exposed = std::max({d + d_exp, last_chunk, total - early * chunk_b - chunk_b * (1 - 1 / n)});
      if (e_.parallel.overlap_grad_reduce) interference = std::max(interference, ci * std::min(total - exposed, bc));
    }
    const double slack = dual ? 0.0 : s * bc;
    dp_exposed = std::max(dp_exposed, exposed - slack);
    if ((c.zero == 1 || c.zero == 2) && !e_.parallel.overlap_param_gather)  // else under the next forward
      after_optimizer = std::max(after_optimizer, collective_s(CollectiveOp::all_gather, kDp, c, dense * bpe) +
                                                      (c.ep > 1 && edp > 1 ? collective_s(CollectiveOp::all_gather, kEdp, c, experts * bpe) : 0));
  }

  // The optimizer's time grows with the parameters it updates: the largest stage's bounds the step.
  double optimizer = kernel_s(workload::optimizer_step(most_shard_params, e_.training.precision, e_.training.optimizer).cost);
  // FP8 recipes: the per-step FP8 copies of the largest stage's linear weights, as the compiler
  // casts them (plan::StageMemory::layer_params).
  double most_layer_params = 0;
  for (const plan::StageMemory& st : mem.stages) most_layer_params = std::max(most_layer_params, st.layer_params);
  for (const auto& k : workload::fp8_weight_casts(most_layer_params, e_.training.precision)) optimizer += kernel_s(k.cost);
  out.compute_s = mbs * (best_f.compute + best_b.compute) + optimizer + interference;
  out.tp_s = mbs * (best_f.tp + best_b.tp);
  out.cp_s = mbs * (best_f.cp + best_b.cp);
  out.ep_s = mbs * (best_f.ep + best_b.ep);
  out.dp_s = mbs * (best_f.dp + best_b.dp) + std::max(0.0, dp_exposed) + after_optimizer;
  out.pp_s = p2p + mirror;
  out.bubble_s = bubble;
  out.step_s = out.compute_s + out.tp_s + out.cp_s + out.ep_s + out.dp_s + out.pp_s + out.bubble_s;
  return out;
}

}  // namespace inflect::search
