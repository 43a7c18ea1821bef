#pragma once
// Model shapes for the workload tests, written out here because the workload layer cannot read
// the YAML presets (io does; tests/io/test_model_loader.cpp checks the presets match these).
#include "inflect/workload/model.hpp"

namespace fixtures {

inline inflect::workload::ModelSpec gpt3_175b() {
  inflect::workload::ModelSpec m;
  m.name = "gpt3-175b";
  m.layers = 96;
  m.hidden = 12288;
  m.heads = 96;
  m.kv_heads = 96;
  m.ffn_hidden = 4 * 12288;
  m.mlp = inflect::workload::MlpKind::gelu;
  m.vocab = 51200;
  m.seq_len = 2048;
  m.tied_embeddings = true;
  return m;
}

inline inflect::workload::ModelSpec llama(int layers, std::int64_t hidden, int heads, std::int64_t ffn) {
  inflect::workload::ModelSpec m;
  m.layers = layers;
  m.hidden = hidden;
  m.heads = heads;
  m.kv_heads = 8;
  m.ffn_hidden = ffn;
  m.mlp = inflect::workload::MlpKind::swiglu;
  m.vocab = 128256;
  m.seq_len = 8192;
  m.tied_embeddings = false;
  return m;
}

inline inflect::workload::ModelSpec llama3_8b() { return llama(32, 4096, 32, 14336); }
inline inflect::workload::ModelSpec llama3_70b() { return llama(80, 8192, 64, 28672); }
inline inflect::workload::ModelSpec llama3_405b() { return llama(126, 16384, 128, 53248); }

}  // namespace fixtures
