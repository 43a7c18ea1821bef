#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <string>

#include "inflect/core/error.hpp"
#include "inflect/io/model_loader.hpp"
#include "inflect/io/yaml_reader.hpp"
#include "workload/workload_fixtures.hpp"

using inflect::core::Error;
using inflect::core::ErrorKind;
using inflect::io::load_yaml_string;
using inflect::io::model_preset;
using inflect::io::model_preset_names;
using inflect::io::parse_model;
using inflect::workload::MlpKind;
using inflect::workload::ModelSpec;

namespace {

ModelSpec parse(const std::string& yaml) { return parse_model(load_yaml_string(yaml, "exp.yaml")); }

void expect_error(const std::string& yaml, const std::string& fragment) {
  try {
    parse(yaml);
    FAIL("accepted: " << yaml);
  } catch (const Error& e) {
    CHECK(e.kind() == ErrorKind::input);
    std::string full = inflect::core::format_error(e);
    CHECK_MESSAGE(full.find(fragment) != std::string::npos, full);
  }
}

bool same_shape(const ModelSpec& a, const ModelSpec& b) {
  return a.layers == b.layers && a.hidden == b.hidden && a.heads == b.heads && a.kv_heads == b.kv_heads &&
         a.ffn_hidden == b.ffn_hidden && a.mlp == b.mlp && a.vocab == b.vocab && a.seq_len == b.seq_len &&
         a.tied_embeddings == b.tied_embeddings;
}

}  // namespace

TEST_CASE("model presets: the eighteen bundled shapes, sorted, each loadable") {
  // gpt3-175b, three Llama 3 sizes, the ten GPT sizes of Narayanan et al. 2021 Table 1, and four
  // mixtures of experts (Mixtral 8x7B and 8x22B, DeepSeek-V3, a ZAYA1-like model).
  auto names = model_preset_names();
  CHECK(names.size() == 18);
  CHECK(std::is_sorted(names.begin(), names.end()));
  for (const auto& n : names) {
    ModelSpec m = model_preset(n);
    CHECK(m.name == n);
    CHECK_FALSE(m.source.empty());
  }
}

TEST_CASE("presets match the shapes the workload tests work with") {
  CHECK(same_shape(model_preset("gpt3-175b"), fixtures::gpt3_175b()));
  CHECK(same_shape(model_preset("llama3-8b"), fixtures::llama3_8b()));
  CHECK(same_shape(model_preset("llama3-70b"), fixtures::llama3_70b()));
  CHECK(same_shape(model_preset("llama3-405b"), fixtures::llama3_405b()));
}

TEST_CASE("Narayanan et al. 2021 sizes reproduce the paper's parameter counts") {
  // The paper prints billions to one decimal (e.g. 1.7, 18.4, 1008.0); our count of the same
  // structure (12lh^2 + 13lh + (V + s)h + 2h) must round to it: within 0.05B.
  constexpr double kPrintedHalfDigit = 0.05e9;
  struct Row { const char* name; double billions; };
  for (Row r : {Row{"gpt-1.7b", 1.7}, Row{"gpt-3.6b", 3.6}, Row{"gpt-7.5b", 7.5}, Row{"gpt-18b", 18.4},
                Row{"gpt-39b", 39.1}, Row{"gpt-76b", 76.1}, Row{"gpt-145b", 145.6}, Row{"gpt-310b", 310.1},
                Row{"gpt-530b", 529.6}, Row{"gpt-1t", 1008.0}}) {
    double p = model_preset(r.name).params();
    CHECK_MESSAGE(std::abs(p - r.billions * 1e9) <= kPrintedHalfDigit, r.name << " has " << p);
  }
}

TEST_CASE("unknown preset suggests the nearest name") {
  try {
    model_preset("llama-8b");
    FAIL("accepted an unknown preset");
  } catch (const Error& e) {
    CHECK(e.kind() == ErrorKind::input);
    CHECK(e.message().find("did you mean 'llama3-8b'") != std::string::npos);
  }
  expect_error("preset: gpt3-175\n", "exp.yaml:1:9: preset: 'gpt3-175' is not a model preset (did you mean 'gpt3-175b'?)");
}

TEST_CASE("preset plus overrides") {
  // mcore's GPT 177B is gpt3-175b with a 131072 vocabulary and 4096-token sequences.
  ModelSpec m = parse("preset: gpt3-175b\nvocab: 131072\nseq_len: 4096\nname: gpt-177b\n");
  CHECK(m.vocab == 131072);
  CHECK(m.seq_len == 4096);
  CHECK(m.layers == 96);
  CHECK(m.name == "gpt-177b");
}

TEST_CASE("inline model with documented defaults") {
  // kv_heads defaults to heads (MHA); GELU ffn to 4*hidden = 8192.
  ModelSpec m = parse("layers: 24\nhidden: 2048\nheads: 16\nmlp: gelu\nvocab: 131072\nseq_len: 4096\n");
  CHECK(m.kv_heads == 16);
  CHECK(m.ffn_hidden == 8192);
  CHECK(m.mlp == MlpKind::gelu);
  CHECK_FALSE(m.tied_embeddings);
}

TEST_CASE("bad model maps are input errors that name the key") {
  expect_error("layers: 24\nhidden: 2048\nheads: 15\nmlp: gelu\nvocab: 10\nseq_len: 8\n", "heads: 15 does not divide hidden = 2048");
  expect_error("preset: llama3-8b\nkv_heads: 5\n", "kv_heads: 5 must divide heads = 32");
  expect_error("preset: llama3-8b\nhidden: 0\n", "hidden");
  expect_error("preset: llama3-8b\nlayer: 4\n", "unknown key 'layer' (did you mean 'layers'?)");
  expect_error("preset: llama3-8b\nmlp: relu\n", "'relu' is not allowed");
  expect_error("layers: 2\nhidden: 64\nheads: 4\nmlp: swiglu\nvocab: 10\nseq_len: 8\n", "ffn_hidden");
  expect_error("hidden: 64\nheads: 4\nmlp: gelu\nvocab: 10\nseq_len: 8\n", "missing required key 'layers'");
  expect_error("layers: many\nhidden: 64\nheads: 4\nmlp: gelu\nvocab: 10\nseq_len: 8\n", "layers");
}

TEST_CASE("validation experiments restate their cases.yaml entry faithfully") {
  // For each workloads/validation/*.yaml that restates a case of cases.yaml (the Selene and
  // Megatron-Core H100 runs; the other cases cite their own sources): nodes x 8 = GPUs = tp*pp*dp;
  // the global batch, sequence length, layers and hidden match; the model map parses. Every
  // case of cases.yaml must have its file (the count at the end).
  namespace fs = std::filesystem;
  auto cases = inflect::io::load_yaml_file(std::string(INFLECT_SOURCE_DIR) + "/tests/data/training/cases.yaml");
  int checked = 0;
  for (const auto& entry : fs::directory_iterator(std::string(INFLECT_SOURCE_DIR) + "/workloads/validation")) {
    if (entry.path().extension() != ".yaml") continue;
    auto doc = inflect::io::load_yaml_file(entry.path().string());
    const YAML::Node& y = doc.raw();
    std::string id = y["validation"]["case_id"].as<std::string>();
    CHECK(entry.path().stem().string() == id);
    YAML::Node c;
    bool found = false;  // (a default YAML::Node is a defined null, so `c` itself cannot say)
    for (YAML::Node cand : cases.raw()["cases"])
      if (cand["id"].as<std::string>() == id) {
        c.reset(cand);
        found = true;
      }
    if (!found) continue;
    const int gpus = c["hardware"]["gpu_count"].as<int>();
    const auto& p = y["parallel"];
    CHECK_MESSAGE(y["cluster"]["nodes"].as<int>() * c["hardware"]["gpus_per_node"].as<int>() == gpus, id);
    CHECK_MESSAGE(p["tp"].as<int>() * p["pp"].as<int>() * p["dp"].as<int>() * p["cp"].as<int>() == gpus, id);
    CHECK_MESSAGE(y["training"]["global_batch"].as<long>() == c["batch"]["global_batch_size"].as<long>(), id);
    CHECK_MESSAGE(y["training"]["seq_len"].as<long>() == c["model"]["seq_len"].as<long>(), id);
    CHECK_MESSAGE(y["validation"]["published_tflops_per_gpu"].as<double>() == c["measured"]["tflops_per_gpu"].as<double>(), id);
    ModelSpec m = parse_model(doc.child("model"));
    CHECK_MESSAGE(m.layers == c["model"]["layers"].as<int>(), id);
    CHECK_MESSAGE(m.hidden == c["model"]["hidden"].as<long>(), id);
    CHECK_MESSAGE(m.vocab == c["model"]["vocab"].as<long>(), id);
    ++checked;
  }
  CHECK(checked == static_cast<int>(cases.raw()["cases"].size()));
}

TEST_CASE("MoE presets reproduce their published total and active parameter counts") {
  // Published to two or three digits: Mixtral 8x7B 46.7B / 12.9B (Jiang et al. 2024), 8x22B
  // 141B / 39B (Mistral), DeepSeek-V3 671B / 37B (its attention is approximated, see the preset:
  // within 1% total and 5% active), ZAYA1 8.3B / 760M (the ZAYA1-like preset is sized to them).
  struct Row { const char* name; double total, active, tol_total, tol_active; };
  for (Row r : {Row{"mixtral-8x7b", 46.7e9, 12.9e9, 0.05e9, 0.05e9}, Row{"mixtral-8x22b", 141e9, 39e9, 0.5e9, 0.5e9},
                Row{"deepseek-v3", 671e9, 37e9, 6.7e9, 1.85e9}, Row{"zaya1-like", 8.3e9, 0.76e9, 0.05e9, 0.005e9}}) {
    ModelSpec m = model_preset(r.name);
    CHECK(m.is_moe());
    CHECK_MESSAGE(std::abs(m.params() - r.total) <= r.tol_total, r.name << " has " << m.params());
    CHECK_MESSAGE(std::abs(m.active_params() - r.active) <= r.tol_active, r.name << " has " << m.active_params() << " active");
  }
}

TEST_CASE("model.moe: required keys, overrides over a preset, and bad values") {
  ModelSpec m = parse("preset: mixtral-8x7b\nmoe: {top_k: 1, imbalance: 1.25}\n");
  CHECK(m.moe.experts == 8);
  CHECK(m.moe.top_k == 1);
  CHECK(m.moe.imbalance == 1.25);
  expect_error("preset: llama3-8b\nmoe: {experts: 8}\n", "missing required key 'top_k'");
  expect_error("preset: mixtral-8x7b\nmoe: {top_k: 9}\n", "top_k: 9 exceeds the 8 experts");
  expect_error("preset: mixtral-8x7b\nmoe: {capacity_factor: 0.5}\n", "must be 0 (dropless) or at least 1");
  expect_error("preset: mixtral-8x7b\nmoe: {imbalance: 0.9}\n", "must be at least 1");
  expect_error("preset: mixtral-8x7b\nmoe: {expert: 8}\n", "unknown key 'expert'");
}
