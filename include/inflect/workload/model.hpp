#pragma once
// Dense decoder-only transformer descriptions (GPT and Llama styles), loaded from
// workloads/models/*.yaml presets or written inline in an experiment.
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
  /// Parameters of one transformer layer (attention + MLP + norms).
  double layer_params() const;
  /// Embedding (+ untied output head) parameters.
  double embedding_params() const;
  /// Total trainable parameters.
  double params() const;
};

}  // namespace inflect::workload
