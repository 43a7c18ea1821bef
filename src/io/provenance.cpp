#include "inflect/io/provenance.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "inflect/core/content_hash.hpp"
#include "inflect/core/precision.hpp"
#include "inflect/io/device_catalog.hpp"
#include "inflect/plan/diloco.hpp"
#include "inflect/plan/framework.hpp"
#include "inflect/plan/schedule.hpp"
#include "inflect_version.hpp"
#include "io/embedded.hpp"

namespace inflect::io {

namespace fs = std::filesystem;

namespace {

thread_local InputRecorder* current = nullptr;

// Relative to the working directory when under it, so that the same checkout gives the same
// report wherever it lies (goldens, baselines); lexically normal ("a/../b" is "b").
std::string recorded_path(const std::string& path) {
  fs::path p = fs::path(path).lexically_normal();
  if (p.is_absolute()) {
    std::error_code ec;
    const fs::path cwd = fs::current_path(ec);
    if (!ec) {
      const fs::path rel = p.lexically_relative(cwd);
      if (!rel.empty() && *rel.begin() != "..") p = rel;
    }
  }
  return p.generic_string();
}

std::string yes_no(bool b) { return b ? "true" : "false"; }
std::string num(double v) { return fmt::format("{}", v); }

}  // namespace

std::string_view inflect_version() { return INFLECT_GIT_DESCRIBE; }

InputRecorder::InputRecorder() : outer_(current) { current = this; }

InputRecorder::~InputRecorder() {
  current = outer_;
  if (outer_)
    for (auto& f : files_) outer_->add(std::move(f));
}

void InputRecorder::add(analysis::InputFile f) {
  const bool seen = std::any_of(files_.begin(), files_.end(), [&](const analysis::InputFile& g) { return g.path == f.path; });
  if (!seen) files_.push_back(std::move(f));
}

void note_input(std::string_view role, const std::string& path, std::string_view text) {
  if (current) current->add({std::string(role), recorded_path(path), core::content_hash(text)});
}

std::vector<std::pair<std::string, std::string>> effective_config(const plan::Experiment& e) {
  std::vector<std::pair<std::string, std::string>> out;
  auto put = [&](std::string key, std::string value) { out.emplace_back(std::move(key), std::move(value)); };
  if (const auto& m = e.workload.model) {
    put("model.name", m->name);
    put("model.layers", num(m->layers));
    put("model.hidden", num(static_cast<double>(m->hidden)));
    put("model.heads", num(m->heads));
    put("model.kv_heads", num(m->kv_heads));
    put("model.ffn_hidden", num(static_cast<double>(m->ffn_hidden)));
    put("model.mlp", m->mlp == workload::MlpKind::swiglu ? "swiglu" : "gelu");
    put("model.vocab", num(static_cast<double>(m->vocab)));
    put("model.tied_embeddings", yes_no(m->tied_embeddings));
    if (m->is_moe()) {
      put("model.moe.experts", num(m->moe.experts));
      put("model.moe.top_k", num(m->moe.top_k));
      put("model.moe.expert_ffn_hidden", num(static_cast<double>(m->moe.expert_ffn_hidden)));
      put("model.moe.shared_experts", num(m->moe.shared_experts));
      put("model.moe.first_dense_layers", num(m->moe.first_dense_layers));
      put("model.moe.capacity_factor", num(m->moe.capacity_factor));
      put("model.moe.imbalance", num(m->moe.imbalance));
    }
  } else {
    const auto f = e.workload.trace_format;
    put(f == workload::TraceFormat::chakra   ? "workload.chakra"
        : f == workload::TraceFormat::kineto ? "workload.kineto"
                                             : "workload.trace",
        recorded_path(e.workload.trace_file));
    put("workload.retime", e.workload.retime ? "true" : "false");
  }
  const auto& c = e.cluster;
  put("cluster.topology", c.topology.name);
  put("cluster.device", c.device.name);
  put("cluster.nodes", num(c.nodes));
  put("cluster.power_cap_w", num(c.power_cap()));
  put("cluster.inlet_c", num(c.inlet()));
  if (c.thermal.any()) put("cluster.thermal.spread", num(c.thermal.spread));
  if (c.variability.any()) {
    put("cluster.variability.gpu_speed_spread", num(c.variability.gpu_speed_spread));
    put("cluster.variability.kernel_jitter", num(c.variability.kernel_jitter));
    put("cluster.variability.seed", num(static_cast<double>(c.variability.seed)));
  }
  const auto& t = e.training;
  put("training.seq_len", num(static_cast<double>(t.seq_len)));
  put("training.global_batch", num(static_cast<double>(t.global_batch)));
  put("training.micro_batch", num(static_cast<double>(t.micro_batch)));
  put("training.precision", std::string(core::to_string(t.precision)));
  if (t.precision == core::Precision::fp8) {
    put("training.fp8.attention", yes_no(t.fp8.attention));
    put("training.fp8.output_head", yes_no(t.fp8.output_head));
  }
  put("training.framework", std::string(plan::framework_name(t.framework)));
  put("training.optimizer.master_weights", num(t.optimizer.master));
  put("training.optimizer.moments", num(t.optimizer.moment));
  put("training.optimizer.gradients", num(t.optimizer.gradient));
  put("training.steps", num(t.steps));
  put("training.attention", t.attention == "unfused" ? t.attention : c.device.attention);
  if (const auto& d = t.diloco) {
    put("training.diloco.sync_every", num(d->sync_every));
    put("training.diloco.workers", num(d->workers));
    put("training.diloco.compression", plan::compression_name(d->compression));
    if (d->compression == plan::OuterCompression::topk) put("training.diloco.topk_fraction", num(d->topk_fraction));
    put("training.diloco.fragments", num(d->fragments));
    put("training.diloco.token_multiplier", num(d->token_multiplier));
  }
  const auto& p = e.parallel;
  put("parallel.tp", num(p.tp));
  put("parallel.pp", num(p.pp));
  put("parallel.dp", num(p.dp));
  put("parallel.cp", num(p.cp));
  put("parallel.ep", num(p.ep));
  put("parallel.sequence_parallel", yes_no(p.sequence_parallel));
  put("parallel.tp_comm_overlap", yes_no(p.tp_comm_overlap));
  put("parallel.schedule", plan::schedule_name(p.schedule));
  put("parallel.virtual_stages", num(p.virtual_stages));
  if (!p.layers_per_stage.empty()) {
    put("parallel.layers_per_stage", fmt::format("{}", fmt::join(p.layers_per_stage, ",")));
  }
  put("parallel.zero", num(p.zero));
  put("parallel.reshard_after_forward", yes_no(p.reshard_after_forward));
  put("parallel.shard_group", num(p.shard_group));
  put("parallel.recompute", workload::recompute_name(p.recompute));
  put("parallel.grad_bucket_bytes", num(p.grad_bucket_bytes.value()));
  put("parallel.overlap_grad_reduce", yes_no(p.overlap_grad_reduce));
  put("parallel.moe_shared_expert_overlap", yes_no(p.moe_shared_expert_overlap));
  put("parallel.pp_scatter_gather", yes_no(p.pp_scatter_gather));
  put("parallel.overlap_param_gather", yes_no(p.overlap_param_gather));
  put("parallel.selective_recompute",
      p.selective_recompute == plan::SelectiveRecompute::attention ? "attention" : "every_other_matmul");
  put("parallel.embedding_in_pipeline_split", yes_no(p.embedding_in_pipeline_split));
  put("parallel.cp_comm", p.cp_comm == plan::CpComm::p2p ? "p2p" : "all_gather");
  return out;
}

analysis::Provenance provenance_of(const plan::Experiment& e, const std::vector<analysis::InputFile>& inputs) {
  analysis::Provenance p;
  p.inflect_version = std::string(inflect_version());
  p.inputs = inputs;
  // A catalog device compiled into the binary is read from no file; its embedded text stands in.
  // (device_origin differs from the spec's file only for those.)
  const auto& d = e.cluster.device;
  if (!d.name.empty() && device_origin(d) != d.file)
    p.inputs.push_back({"device", "built-in:" + device_origin(d), core::content_hash(device_yaml_text(d))});
  p.effective = effective_config(e);
  return p;
}

}  // namespace inflect::io

namespace inflect::io {

std::optional<std::string> current_hash(const analysis::InputFile& f) {
  constexpr std::string_view kBuiltIn = "built-in:";
  if (f.path.starts_with(kBuiltIn)) {
    const fs::path p(f.path.substr(kBuiltIn.size()));
    const std::string dir = p.parent_path().generic_string(), name = p.filename().string();
    const auto* files = dir == "calibration/devices" ? &embedded::catalog_devices()
                        : dir == "workloads/models"  ? &embedded::catalog_models()
                                                     : nullptr;
    if (files)
      for (const auto& [file, text] : *files)
        if (file == name) return core::content_hash(text);
    return std::nullopt;
  }
  try {
    std::ifstream in(f.path, std::ios::binary);
    if (!in) return std::nullopt;
    std::stringstream ss;
    ss << in.rdbuf();
    return core::content_hash(ss.str());
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

}  // namespace inflect::io
