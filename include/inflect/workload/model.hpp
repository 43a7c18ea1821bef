#pragma once
// Dense decoder-only transformer descriptions (GPT and Llama styles), loaded from
// workloads/models/*.yaml presets or written inline in an experiment (docs/models.md).
//
// The MLP kind also selects the family's other structure: gelu = GPT as Megatron builds it
// (LayerNorm with bias, biases on every linear layer, learned position embeddings); swiglu =
// Llama (RMSNorm, no biases, rotary positions).
#include <cstdint>
#include <string>

namespace inflect::workload {

enum class MlpKind : unsigned char { gelu, swiglu };

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
  std::string source;          // where the shape comes from

  std::int64_t head_dim() const { return hidden / heads; }
  /// Parameters of one transformer layer: QKV h*(h + 2*kv_heads*head_dim), output projection h^2,
  /// MLP 2*h*ffn (gelu) or 3*h*ffn (swiglu), two norms, and for gelu the linear-layer biases.
  /// For GPT with ffn = 4h and kv_heads = heads this is exactly 12h^2 + 13h.
  double layer_params() const;
  /// Token embedding V*h, plus an untied output head V*h, plus (gelu/GPT) the learned position
  /// embedding seq_len*h.
  double embedding_params() const;
  /// The final norm before the output head: 2h (LayerNorm) or h (RMSNorm).
  double final_norm_params() const;
  /// Total trainable parameters: layers*layer_params() + embedding_params() + final_norm_params().
  double params() const;
};

}  // namespace inflect::workload
