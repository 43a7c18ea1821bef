#include "inflect/workload/model.hpp"

namespace inflect::workload {

// Two families, told apart by the MLP kind because the presets we model pair them this way:
//  - gelu  = GPT-2/3 as Megatron builds it: LayerNorm (weight + bias), biases on every linear
//            layer, learned absolute position embeddings (seq_len x hidden).
//  - swiglu = Llama: RMSNorm (weight only), no linear biases, rotary positions (no parameters).
namespace {

bool gpt_style(const ModelSpec& m) { return m.mlp == MlpKind::gelu; }

double norm_params(const ModelSpec& m) {
  double h = static_cast<double>(m.hidden);
  return gpt_style(m) ? 2 * h : h;
}

}  // namespace

double ModelSpec::layer_params() const {
  const double h = static_cast<double>(hidden);
  const double kv_width = static_cast<double>(kv_heads) * static_cast<double>(head_dim());
  const double f = static_cast<double>(ffn_hidden);
  const double qkv_out = h + 2 * kv_width;  // Q is h wide, K and V kv_heads*head_dim each (GQA)

  double p = h * qkv_out + h * h;                             // QKV and attention output projection
  p += (mlp == MlpKind::swiglu ? 3.0 : 2.0) * h * f;           // gate+up+down, or fc1+fc2
  p += 2 * norm_params(*this);                                 // pre-attention and pre-MLP norms
  if (gpt_style(*this)) p += qkv_out + h + f + h;              // biases of qkv, proj, fc1, fc2
  return p;
}

double ModelSpec::expert_params() const {
  const double h = static_cast<double>(hidden);
  const double f = static_cast<double>(moe.expert_ffn_hidden);
  double p = (mlp == MlpKind::swiglu ? 3.0 : 2.0) * h * f;
  if (gpt_style(*this)) p += f + h;  // fc1 and fc2 biases
  return p;
}

double ModelSpec::layer_params(int layer) const {
  if (!moe_layer(layer)) return layer_params();
  const double h = static_cast<double>(hidden);
  const double f = static_cast<double>(ffn_hidden);
  double dense_mlp = (mlp == MlpKind::swiglu ? 3.0 : 2.0) * h * f;
  if (gpt_style(*this)) dense_mlp += f + h;
  const double router = h * moe.experts;
  return layer_params() - dense_mlp + router + (moe.experts + moe.shared_experts) * expert_params();
}

double ModelSpec::routed_expert_params(int layer) const { return moe_layer(layer) ? moe.experts * expert_params() : 0.0; }

double ModelSpec::active_layer_params(int layer) const {
  if (!moe_layer(layer)) return layer_params();
  return layer_params(layer) - (moe.experts - moe.top_k) * expert_params();
}

double ModelSpec::all_layer_params() const {
  double p = 0;
  for (int l = 0; l < layers; ++l) p += layer_params(l);
  return p;
}

double ModelSpec::active_all_layer_params() const {
  double p = 0;
  for (int l = 0; l < layers; ++l) p += active_layer_params(l);
  return p;
}

double ModelSpec::embedding_params() const {
  const double h = static_cast<double>(hidden);
  double p = static_cast<double>(vocab) * h;                   // token embedding
  if (!tied_embeddings) p += static_cast<double>(vocab) * h;   // separate output head
  if (gpt_style(*this)) p += static_cast<double>(seq_len) * h; // learned position embedding
  return p;
}

double ModelSpec::final_norm_params() const { return norm_params(*this); }

double ModelSpec::params() const { return all_layer_params() + embedding_params() + final_norm_params(); }

double ModelSpec::active_params() const { return active_all_layer_params() + embedding_params() + final_norm_params(); }

}  // namespace inflect::workload
