#pragma once
// Decoder-only transformer descriptions (GPT and Llama styles, dense or mixture-of-experts), loaded from
// workloads/models/*.yaml presets or written inline in an experiment (docs/models.md).
//
// The MLP kind also selects the family's other structure: gelu = GPT as Megatron builds it
// (LayerNorm with bias, biases on every linear layer, learned position embeddings); swiglu =
// Llama (RMSNorm, no biases, rotary positions).
#include <cstdint>
#include <string>

namespace inflect::workload {

enum class MlpKind : unsigned char { gelu, swiglu };

/// Mixture-of-experts MLP (GShard/Switch routing as Megatron-Core and DeepSeek run it): each MoE
/// layer's MLP is `experts` routed experts, of which a router picks `top_k` per token, plus
/// `shared_experts` every token uses; the first `first_dense_layers` layers keep a dense MLP of
/// ffn_hidden. Experts have the model's MLP kind with width expert_ffn_hidden.
struct MoeSpec {
  int experts = 0;  // 0 = a dense model
  int top_k = 0;
  std::int64_t expert_ffn_hidden = 0;
  int shared_experts = 0;
  int first_dense_layers = 0;
  /// Tokens an expert accepts, as a multiple of the balanced load; 0 = dropless (no cap).
  double capacity_factor = 0;
  /// Tokens routed to the busiest expert rank over the mean (1 = perfectly balanced routing).
  double imbalance = 1;
};

struct ModelSpec {
  std::string name;
  int layers = 0;
  std::int64_t hidden = 0;
  int heads = 0;
  int kv_heads = 0;            // = heads for multi-head attention; fewer for GQA
  std::int64_t ffn_hidden = 0; // MLP inner size (per expert gate/up for swiglu)
  MlpKind mlp = MlpKind::gelu;
  std::int64_t vocab = 0;
  std::int64_t seq_len = 0;    // default sequence length; training.seq_len overrides
  bool tied_embeddings = false;
  MoeSpec moe;
  std::string source;          // where the shape comes from

  bool is_moe() const { return moe.experts > 0; }
  /// Does layer `layer` (0-based) have a mixture-of-experts MLP?
  bool moe_layer(int layer) const { return is_moe() && layer >= moe.first_dense_layers; }
  /// Parameters of one expert: an MLP of expert_ffn_hidden (with biases for gelu).
  double expert_params() const;
  /// Parameters of layer `layer`: attention, norms, and its dense MLP or router + all experts.
  double layer_params(int layer) const;
  /// The routed experts' share of layer_params(layer) (0 on dense layers): what EP shards.
  double routed_expert_params(int layer) const;
  /// Parameters of layer `layer` that one token uses: the router, top_k and the shared experts.
  double active_layer_params(int layer) const;
  /// Parameters of every layer together, and those one token uses.
  double all_layer_params() const;
  double active_all_layer_params() const;

  std::int64_t head_dim() const { return hidden / heads; }
  /// Parameters of one transformer layer: QKV h*(h + 2*kv_heads*head_dim), output projection h^2,
  /// MLP 2*h*ffn (gelu) or 3*h*ffn (swiglu), two norms, and for gelu the linear-layer biases.
  /// For GPT with ffn = 4h and kv_heads = heads this is exactly 12h^2 + 13h. (A dense layer.)
  double layer_params() const;
  /// Token embedding V*h, plus an untied output head V*h, plus (gelu/GPT) the learned position
  /// embedding seq_len*h.
  double embedding_params() const;
  /// The final norm before the output head: 2h (LayerNorm) or h (RMSNorm).
  double final_norm_params() const;
  /// Total trainable parameters: every layer + embedding_params() + final_norm_params().
  double params() const;
  /// Parameters one token uses (= params() for a dense model).
  double active_params() const;
};

}  // namespace inflect::workload
