#include "inflect/plan/framework.hpp"

#include <array>
#include <utility>

namespace inflect::plan {

namespace {

constexpr std::array<std::pair<Framework, std::string_view>, 7> kNames{{
    {Framework::none, "none"},
    {Framework::megatron_lm_2021, "megatron-lm-2021"},
    {Framework::megatron_core, "megatron-core"},
    {Framework::nemo, "nemo"},
    {Framework::torchtitan, "torchtitan"},
    {Framework::llm_foundry, "llm-foundry"},
    {Framework::megatron_deepspeed, "megatron-deepspeed"},
}};

// Each value is what the framework's public source does by default, or what its published
// recipes set; the source says which. docs/frameworks.md prints this table.
const std::vector<FrameworkDefault> kMegatronLm2021{
    {"training.attention", "unfused",
     "megatron/model/transformer.py ParallelAttention (Megatron-LM v2.x-v3.0, 2021-22): baddbmm Q K^T, "
     "FusedScaleMaskSoftmax, attention dropout, bmm with V; no flash attention before 2022-23"},
    {"parallel.pp_scatter_gather", "true",
     "megatron/arguments.py: scatter_gather_tensors_in_pipeline defaults on (--no-scatter-gather-tensors-in-pipeline "
     "turns it off); megatron/p2p_communication.py split_tensor_into_1d_equal_chunks / gather_split_1d_tensor, "
     "used when sequence parallelism is off"},
    {"training.optimizer.gradients", "fp32",
     "megatron/arguments.py: with --bf16, accumulate_allreduce_grads_in_fp32 is forced on"},
};

const std::vector<FrameworkDefault> kMegatronCore{
    {"training.attention", "cudnn-2024",
     "Megatron-Core with --transformer-impl transformer_engine (its default): TE's DotProductAttention, which "
     "on Hopper runs cuDNN's fused attention (NVTE_FUSED_ATTN); the device's cudnn-2024 curve where it has one"},
    {"parallel.overlap_param_gather", "true",
     "Megatron-LM README 'Performance Benchmarking' (MCore r0.8 runs use the distributed optimizer with "
     "--overlap-grad-reduce --overlap-param-gather); megatron/core/distributed/param_and_grad_buffer.py"},
    {"training.optimizer.gradients", "fp32",
     "megatron/training/arguments.py: with --bf16, accumulate_allreduce_grads_in_fp32 is forced on "
     "(DistributedDataParallelConfig.grad_reduce_in_fp32)"},
};

const std::vector<FrameworkDefault> kNemo{
    {"training.attention", "cudnn-2024",
     "NeMo over Megatron-Core and Transformer Engine: cuDNN fused attention on Hopper (the device's cudnn-2024 curve "
     "where it has one)"},
    {"parallel.overlap_param_gather", "true",
     "NeMo 2 recipes (nemo/collections/llm/recipes/*): MegatronStrategy with DistributedDataParallelConfig("
     "overlap_grad_reduce=True, overlap_param_gather=True)"},
    {"training.optimizer.master_weights", "remainder",
     "NeMo's distributed_fused_adam (nemo/core/optim/distributed_adam.py over Apex DistributedFusedAdam): with "
     "BF16 parameters it stores only the 16-bit remainders of the FP32 master (store_param_remainders=True)"},
    {"training.optimizer.gradients", "fp32",
     "NeMo MegatronMixedPrecision(precision='bf16-mixed'): grad_reduce_in_fp32=True"},
};

const std::vector<FrameworkDefault> kTorchtitan{
    {"parallel.zero", "3",
     "torchtitan: FSDP2 (fully_shard) over the data-parallel shard dimension by default "
     "(parallelism.data_parallel_shard_degree = -1)"},
    {"parallel.selective_recompute", "every_other_matmul",
     "torchtitan/models/llama3/infra/parallelize.py (activation_checkpoint.mode selective, selective_ac_option "
     "'op'): saves the ops of _save_list (sdpa, reductions) and every second matmul; everything else is recomputed"},
    {"parallel.cp_comm", "all_gather",
     "torchtitan: experimental.context_parallel_rotate_method = 'allgather' (the default; 'alltoall' is the "
     "alternative), over torch.distributed.tensor.experimental.context_parallel"},
    {"training.optimizer.gradients", "fp32",
     "torchtitan: FSDP2 MixedPrecisionPolicy(param_dtype=bfloat16, reduce_dtype=float32) "
     "(training.mixed_precision_reduce = 'float32')"},
};

const std::vector<FrameworkDefault> kLlmFoundry{
    {"training.attention", "fa2",
     "llm-foundry MPT configs: attn_config.attn_impl: flash (the flash-attn 2 package); the device's fa2 curve where it "
     "has one"},
    {"parallel.zero", "3",
     "llm-foundry scripts/train/yamls: fsdp_config sharding_strategy FULL_SHARD (PyTorch FSDP1)"},
    {"training.optimizer.gradients", "fp32",
     "llm-foundry fsdp_config mixed_precision: DEFAULT (Composer: param bf16, reduce fp32, buffers fp32)"},
};

const std::vector<FrameworkDefault> kMegatronDeepspeed{
    {"training.attention", "unfused",
     "Megatron-DeepSpeed megatron/model/transformer.py (2021-22, MT-NLG and BLOOM): Megatron's CoreAttention "
     "with the fused scale-mask-softmax kernel; no flash attention"},
    {"parallel.embedding_in_pipeline_split", "true",
     "bigscience-workshop/bigscience train/tr11-176B-ml/tr11-176B-ml.slurm: --pp-partition-method "
     "'type:transformer|embedding' (DeepSpeed PipelineModule counts the embedding layers)"},
    {"parallel.zero", "1", "BLOOM and MT-NLG ran DeepSpeed ZeRO stage 1 with pipeline parallelism"},
    {"training.optimizer.gradients", "fp32",
     "DeepSpeed bf16 optimizer: gradients accumulated and reduced in FP32 (fp32 grad accumulation)"},
};

const std::vector<FrameworkDefault> kNone{};

}  // namespace

std::string_view framework_name(Framework f) {
  for (const auto& [fw, name] : kNames)
    if (fw == f) return name;
  return "?";
}

std::optional<Framework> framework_from_name(std::string_view name) {
  for (const auto& [fw, n] : kNames)
    if (n == name) return fw;
  return std::nullopt;
}

std::vector<std::string> framework_names() {
  std::vector<std::string> out;
  for (const auto& [fw, n] : kNames) out.emplace_back(n);
  return out;
}

const std::vector<FrameworkDefault>& framework_defaults(Framework f) {
  switch (f) {
    case Framework::none: return kNone;
    case Framework::megatron_lm_2021: return kMegatronLm2021;
    case Framework::megatron_core: return kMegatronCore;
    case Framework::nemo: return kNemo;
    case Framework::torchtitan: return kTorchtitan;
    case Framework::llm_foundry: return kLlmFoundry;
    case Framework::megatron_deepspeed: return kMegatronDeepspeed;
  }
  return kNone;
}

std::optional<std::string_view> framework_default(Framework f, std::string_view key) {
  for (const auto& d : framework_defaults(f))
    if (d.key == key) return d.value;
  return std::nullopt;
}

}  // namespace inflect::plan
