#include "inflect/plan/memory.hpp"

#include "inflect/plan/schedule.hpp"
#include "inflect/workload/layer_costs.hpp"

namespace inflect::plan {

workload::ShardShape shard_shape(const Experiment& e) {
  workload::ShardShape s;
  s.tp = e.parallel.tp;
  s.sequence_parallel = e.parallel.sequence_parallel;
  s.cp = e.parallel.cp;
  s.micro_batch = e.training.micro_batch;
  s.seq_len = e.training.seq_len;
  s.precision = e.training.precision;
  return s;
}

double grad_bytes_per_param(core::Precision p) { return p == core::Precision::fp16 ? 2.0 : 4.0; }

std::vector<int> layers_per_stage(const workload::ModelSpec& m, int pp) {
  return std::vector<int>(static_cast<std::size_t>(pp), m.layers / pp);
}

MemoryEstimate estimate_memory(const Experiment& e, int dp) {
  const auto& m = *e.workload.model;
  const auto& p = e.parallel;
  const double bpe = core::bytes_per_element(e.training.precision);
  const std::int64_t micro_batches = e.training.global_batch / (static_cast<std::int64_t>(dp) * e.training.micro_batch);
  const core::Bytes per_layer = workload::activation_bytes_per_layer(m, shard_shape(e), p.recompute);
  const double tokens_local = static_cast<double>(e.training.micro_batch * e.training.seq_len / p.cp);
  const auto layers = layers_per_stage(m, p.pp);
  const double embed = static_cast<double>(m.vocab * m.hidden);

  MemoryEstimate out;
  out.capacity = e.cluster.device.hbm_capacity;
  for (int s = 0; s < p.pp; ++s) {
    StageMemory st;
    st.stage = s;
    double params = layers[static_cast<std::size_t>(s)] * m.layer_params();
    if (s == 0) params += embed;
    if (s == p.pp - 1 && (!m.tied_embeddings || p.pp > 1)) params += embed;  // output head (a tied copy lives here too)
    params /= p.tp;
    st.params = params;
    st.weights = core::Bytes(params * bpe);
    st.gradients = core::Bytes(params * grad_bytes_per_param(e.training.precision));
    double opt = params * 12;
    if (p.zero >= 1) opt /= static_cast<double>(dp) * p.cp;
    st.optimizer = core::Bytes(opt);
    const int in_flight = in_flight_micro_batches(p.schedule, s, p.pp, static_cast<int>(micro_batches));
    double act = per_layer.value() * layers[static_cast<std::size_t>(s)] * in_flight;
    if (s == p.pp - 1) act += tokens_local * static_cast<double>(m.vocab) / p.tp * 4;  // fp32 logits for the loss
    if (s == 0) act += tokens_local * static_cast<double>(m.hidden) * bpe / (p.sequence_parallel ? p.tp : 1);
    st.activations = core::Bytes(act);
    const double act_msg = tokens_local * static_cast<double>(m.hidden) * bpe / (p.sequence_parallel ? p.tp : 1);
    st.buffers = core::Bytes(std::min(p.grad_bucket_bytes.value(), params * grad_bytes_per_param(e.training.precision)) +
                             (p.pp > 1 ? 2 * act_msg : 0));
    if (st.total() > out.peak) {
      out.peak = st.total();
      out.peak_stage = s;
    }
    out.stages.push_back(st);
  }
  return out;
}

}  // namespace inflect::plan
