#include "inflect/io/options.hpp"

#include <fmt/format.h>

#include "inflect/core/error.hpp"
#include "inflect/core/strings.hpp"

namespace inflect::io {

std::string_view OptionSpec::parent() const {
  auto dot = key.rfind('.');
  return dot == std::string_view::npos ? std::string_view{} : key.substr(0, dot);
}

std::string_view OptionSpec::leaf() const {
  auto dot = key.rfind('.');
  return dot == std::string_view::npos ? key : key.substr(dot + 1);
}

namespace {

// Ranges are generous sanity bounds: they reject typos (tp: 80000) before any arithmetic can
// overflow, not plans that are merely unusual.
constexpr std::int64_t kMaxDegree = 1 << 16;
constexpr std::int64_t kMaxNodes = 1 << 20;
constexpr std::int64_t kMaxTokens = std::int64_t{1} << 32;
constexpr std::int64_t kMaxBatch = std::int64_t{1} << 32;

OptionSpec section(std::string_view key, DefaultKind d, std::string_view description) {
  OptionSpec o;
  o.key = key;
  o.type = OptionType::section;
  o.default_kind = d;
  o.description = description;
  return o;
}

OptionSpec opt(std::string_view key, OptionType type, std::string_view unit, DefaultKind d,
               std::string_view default_value, std::string_view description) {
  OptionSpec o;
  o.key = key;
  o.type = type;
  o.unit = unit;
  o.default_kind = d;
  o.default_value = default_value;
  o.description = description;
  return o;
}

OptionSpec integer(std::string_view key, std::string_view unit, DefaultKind d, std::string_view default_value,
                   std::int64_t lo, std::int64_t hi, std::string_view description) {
  OptionSpec o = opt(key, OptionType::integer, unit, d, default_value, description);
  o.min = lo;
  o.max = hi;
  return o;
}

OptionSpec number(std::string_view key, std::string_view unit, DefaultKind d, std::string_view default_value,
                  std::int64_t lo, std::int64_t hi, std::string_view description) {
  OptionSpec o = integer(key, unit, d, default_value, lo, hi, description);
  o.type = OptionType::number;
  return o;
}

OptionSpec choice(std::string_view key, std::vector<std::string> allowed, std::string_view default_value,
                  std::string_view description) {
  OptionSpec o = opt(key, OptionType::choice, "", DefaultKind::value, default_value, description);
  o.allowed = std::move(allowed);
  return o;
}

std::vector<OptionSpec> build() {
  using D = DefaultKind;
  using T = OptionType;
  std::vector<OptionSpec> t;
  t.push_back(opt("name", T::string, "", D::derived, "the file name without .yaml",
                  "Name of the experiment, echoed in the report."));

  t.push_back(section("cluster", D::required, "The hardware: a topology file, its node count, the device."));
  t.push_back(opt("cluster.topology", T::path, "", D::derived, "the first site's, with cluster.sites; else required",
                  "Topology YAML (topologies/*.yaml), relative to this file, else the current "
                  "directory, else the project root. Required unless cluster.sites is given."));
  t.push_back(integer("cluster.nodes", "nodes", D::value, "1", 1, kMaxNodes,
                      "Number of nodes; devices = nodes * the topology's devices_per_node. With "
                      "cluster.sites: the sites' nodes summed (given too, it must equal that)."));
  OptionSpec sites = opt("cluster.sites", T::list, "", D::none, "",
                  "A geo-distributed cluster (docs/geo.md): its sites in node order, each `{name: N, "
                  "topology: FILE, nodes: K}`: a data centre or a building, its own scale-out fabric "
                  "(the file's scale_out) over K nodes of the cluster's device and node fabric. Two or "
                  "more sites need cluster.wan.");
  sites.allowed = {"{name: N, topology: FILE, nodes: K}"};
  t.push_back(sites);
  OptionSpec wan = opt("cluster.wan", T::list, "", D::none, "",
                  "The links between sites (docs/geo.md), each `{between: [A, B], bandwidth: 400Gb/s "
                  "(per circuit, per direction) | oversubscription: X (of the smaller site's NICs), "
                  "circuits: N (default 1), latency: 5ms (one way) | distance: 1000km (fiber at 4.9 "
                  "us/km) with detour: F (default 1), loss: P (default 0), transport: ideal | {kind: "
                  "tcp | rdma, window: 4MiB, streams: 16, segment: 1448B}}`. Transfers between sites "
                  "route over the least-latency chain of links and share them max-min.");
  wan.allowed = {"{between: [A, B], bandwidth | oversubscription, latency | distance, transport, ...}"};
  t.push_back(wan);
  t.push_back(opt("cluster.device", T::string, "", D::derived, "the topology's device",
                  "Device catalog name (`inflect devices`; with `--catalog DIR`, DIR's devices too) "
                  "overriding the topology's device."));
  t.push_back(opt("cluster.device_file", T::path, "", D::none, "",
                  "A device YAML of your own (the schema of calibration/devices/*.yaml, docs/devices.md), "
                  "relative to this file, else the current directory, else the project root: read and "
                  "checked as the catalog's devices are, it becomes the cluster's device, and the "
                  "topology's device may name it. With cluster.device, both must name the same device."));
  t.push_back(number("cluster.power_cap_w", "W", D::derived, "the device's board_power", 1, 100000,
                     "Power limit every device holds (nvidia-smi -pl); between the device's "
                     "min_power_cap and its board_power, e.g. `500W`; a bare `500` is read as watts "
                     "(the key's name carries the unit). Kernels that would draw more run at a lower "
                     "clock (docs/power.md)."));
  t.push_back(opt("cluster.thermal", T::map, "", D::none, "",
                  "Devices that are not thermally identical: `spread: F` scales every device's "
                  "thermal resistance by 1 + F*u, u uniform in [-1, 1] drawn per device from "
                  "`seed: N`; `hot: [{local_rank: K, resistance_scale: X}, ...]` scales device K of "
                  "every node (or `device: D`, one global device) by X; `nodes: [{node: N, inlet_c: C}, "
                  "...]` gives node N its own inlet temperature. Devices then differ, so "
                  "the symmetric fidelity runs as full."));
  t.push_back(opt("cluster.variability", T::map, "", D::none, "",
                  "Devices that do not run at one speed (docs/variability.md): `gpu_speed_spread: S` "
                  "scales every kernel time of each device by exp(S*z), z standard normal drawn per "
                  "device from `seed: N` (default 1); `kernel_jitter: J` each kernel by exp(J*z') drawn "
                  "per rank and op; `slow: [{device: D, time_factor: X}, ...]` (or `local_rank: K`, "
                  "every node) slows named devices. Off unless set; recommended from published "
                  "spreads: `{gpu_speed_spread: 0.02, seed: 1}`. Kernel jitter runs symmetric "
                  "fidelity as full."));
  t.push_back(number("cluster.inlet_c", "degC", D::derived, "the topology's cooling.inlet_c", -50, 100,
                     "Inlet air or coolant temperature of every node (the thermal model's ambient)."));
  t.push_back(choice("cluster.collective_algorithm",
                     {"auto", "ring", "tree", "nvls", "nvls_tree", "pat", "direct", "pairwise", "p2p"}, "auto",
                     "Run every collective with this algorithm (docs/collectives.md), as NCCL_ALGO does; `auto`: "
                     "the collective library's choice by size and group. Overrides the topology's "
                     "`collectives.algorithm`; a group the algorithm cannot serve is an input error (broadcast "
                     "and reduce run on rings only, as in NCCL)."));
  t.push_back(choice("cluster.cross_site_collectives", {"auto", "flat", "hierarchical"}, "auto",
                     "How a collective over several sites runs (docs/geo.md): `hierarchical` reduce-scatters "
                     "inside each site, all-reduces across sites between members of equal position and "
                     "all-gathers inside (Nemotron-4 340B across two data centres; Megatron-Core's "
                     "hierarchical groups), where every site holds the same number (>= 2) of the group's "
                     "members, else flat; `flat` runs the library's algorithm over the whole group (rings "
                     "laid out site by site); `auto`: as hierarchical (chosen by the structure, not by an "
                     "uncontended estimate, which flipped with the WAN's length)."));
  t.push_back(choice("cluster.collective_protocol", {"auto", "ll", "ll128", "simple"}, "auto",
                     "Run every collective with this protocol; `auto`: the library's choice. Overrides the "
                     "topology's `collectives.protocol`."));

  t.push_back(opt("model", T::map, "", D::none, "",
                  "The transformer: `preset: NAME` (workloads/models/), optionally with fields "
                  "that override it, or all fields inline. Exactly one of model and workload.trace."));

  t.push_back(section("training", D::value, "Batch and precision of one training step."));
  t.push_back(integer("training.seq_len", "tokens", D::derived, "the model's seq_len", 1, kMaxTokens,
                      "Sequence length of every sample."));
  t.push_back(integer("training.global_batch", "sequences", D::required, "", 1, kMaxBatch,
                      "Sequences per optimizer step, over all data-parallel ranks (required with model)."));
  t.push_back(integer("training.micro_batch", "sequences", D::value, "1", 1, kMaxBatch,
                      "Sequences per micro-batch on one data-parallel rank."));
  t.push_back(choice("training.precision", {"fp32", "tf32", "bf16", "fp16", "fp8"}, "bf16",
                     "Compute precision of the GEMMs; the device must support it."));
  t.push_back(choice("training.framework",
                     {"none", "megatron-lm-2021", "megatron-core", "nemo", "torchtitan", "llm-foundry", "megatron-deepspeed"},
                     "none",
                     "The training framework whose defaults the keys it governs take (docs/frameworks.md lists each "
                     "framework's values and their sources); a key written in the experiment always wins. `none`: "
                     "every key its own default."));
  t.push_back(opt("training.attention", T::string, "", D::value, "default",
                  "The attention kernel the model runs: `default`, the device's default fused kernel; one of the "
                  "device's attention implementations (docs/devices.md, e.g. `fa2`, `cudnn-2024`, `fa3`, `sdpa-2026` "
                  "on an H100), each with its own measured forward and backward curve (a device without it is an "
                  "error listing the ones it has); or `unfused`, separate Q K^T, softmax, dropout and context "
                  "kernels that write the s x s scores to HBM, as Megatron-LM ran before flash attention. "
                  "Framework-governed."));
  t.push_back(section("training.optimizer", D::value,
                      "Precisions of the optimizer's state and of the main gradients (framework-governed)."));
  t.push_back(choice("training.optimizer.master_weights", {"fp32", "remainder", "none"}, "fp32",
                     "The master copy of the weights: `fp32` (4 B/param), `remainder` (the 16-bit remainders that "
                     "complete the BF16 weights to FP32, 2 B/param: Apex DistributedFusedAdam under NeMo), `none` "
                     "(the optimizer updates the 16-bit weights). fp32/tf32 training: the weights are the master."));
  t.push_back(choice("training.optimizer.moments", {"fp32", "bf16"}, "fp32", "Adam's two moments: 4 or 2 B/param each."));
  {
    OptionSpec g = choice("training.optimizer.gradients", {"fp32", "bf16", "fp16"}, "fp32 (fp16 when precision is fp16)",
                          "The main gradients, accumulated over micro-batches and reduced over data parallelism in "
                          "this precision.");
    g.default_kind = D::derived;
    t.push_back(g);
  }
  t.push_back(section("training.fp8", D::value,
                      "With precision fp8: what runs in FP8 beyond the linear layers' GEMMs (which always do, "
                      "with Transformer Engine's cast kernels; everything else stays BF16). docs/precision.md."));
  t.push_back(opt("training.fp8.attention", T::boolean, "", D::value, "false",
                  "The attention core in FP8 (Transformer Engine's fp8_dpa, Megatron's "
                  "--fp8-dot-product-attention); off by default, as there."));
  t.push_back(opt("training.fp8.output_head", T::boolean, "", D::value, "false",
                  "The output (vocabulary) projection in FP8; off by default: Megatron-Core's output_layer "
                  "is not a TE module and torchtitan leaves `output` out of its FP8 conversion."));
  t.push_back(integer("training.steps", "steps", D::value, "1", 1, 10000,
                      "Consecutive steps to simulate, for the thermal state (a warm start): step 1 "
                      "starts every device at its idle temperature; each later step at the "
                      "temperature the previous step's average power settles at, still throttling if "
                      "it ended that step throttling. The report is the last step's; `steps` lists "
                      "every step's time, peak temperature and power."));

  t.push_back(section("training.diloco", D::none,
                      "Low-communication training, DiLoCo-style (docs/low-communication.md): the data-parallel ranks "
                      "form `workers` that each train on their own for `sync_every` inner steps, reducing gradients "
                      "only among their own ranks, then all-reduce the change of their parameters across workers. The "
                      "report's step figures are then the mean step of such a period, and `diloco` in report.json "
                      "holds the simulated inner and sync steps. Absent: synchronous training."));
  t.push_back(integer("training.diloco.sync_every", "steps", D::required, "", 1, 1000000,
                      "H, inner steps per outer synchronisation (DiLoCo's H; INTELLECT-1 ran 100). Required with "
                      "training.diloco."));
  t.push_back(integer("training.diloco.workers", "workers", D::required, "", 1, kMaxNodes * 64,
                      "K, the DiLoCo workers (replicas): dp is split into K contiguous groups of dp/K ranks (each with "
                      "its cp ranks), so that with the placement a worker fills whole nodes. Must divide dp and be at "
                      "least 2 (one worker is synchronous training). ZeRO sharding, hybrid shard groups and expert "
                      "parallelism lie inside a worker. Required with training.diloco."));
  t.push_back(choice("training.diloco.compression", {"none", "fp16", "bf16", "int8", "topk"}, "none",
                     "What the outer all-reduce sends per parameter of the pseudo-gradient: `none` fp32 (4 B); `fp16`, "
                     "`bf16` 2 B; `int8` 1 B plus a 1 KiB table of 256 fp32 bin means per ring chunk (prime's "
                     "all-reduce, as INTELLECT-1 ran it); `topk` the largest `topk_fraction` of the elements as fp32 "
                     "value + int32 index (8 B each), all-gathered since the ranks' indices differ."));
  t.push_back(number("training.diloco.topk_fraction", "fraction", D::none, "", 0, 1,
                     "With compression topk (and only then; required there): the fraction of the pseudo-gradient's "
                     "elements each rank sends, in (0, 1]."));
  t.push_back(integer("training.diloco.fragments", "fragments", D::value, "1", 1, 65536,
                      "F: 1 = the outer all-reduce of all parameters blocks the step that ends a period (classic "
                      "DiLoCo); F > 1 = Streaming DiLoCo (Douillard et al. 2025): the parameters sync in F fragments "
                      "of whole layers at F different steps of the period, each fragment's all-reduce overlapped "
                      "with that step. At most sync_every and the layers of the smallest pipeline stage."));
  t.push_back(number("training.diloco.token_multiplier", "factor", D::value, "1", 0, 1000,
                     "M: how many times the tokens of synchronous training DiLoCo needs for the same loss, as you "
                     "measured or read it (inflect does not model loss). Scales only time_to_target_ratio; the default "
                     "1 assumes parity, and the report says so."));

  t.push_back(section("parallel", D::value, "The parallelism plan; every degree defaults to 1."));
  t.push_back(integer("parallel.tp", "ranks", D::value, "1", 1, kMaxDegree,
                      "Tensor-parallel degree; must divide heads and kv_heads and fit in one node."));
  t.push_back(integer("parallel.pp", "ranks", D::value, "1", 1, kMaxDegree,
                      "Pipeline-parallel degree (stages); must divide the layers."));
  t.push_back(integer("parallel.dp", "ranks", D::derived, "devices / (tp * pp * cp)", 1, kMaxNodes * 64,
                      "Data-parallel degree; tp * pp * cp * dp must equal the devices."));
  t.push_back(integer("parallel.cp", "ranks", D::value, "1", 1, kMaxDegree,
                      "Context-parallel degree (ring attention); must divide seq_len."));
  t.push_back(integer("parallel.ep", "ranks", D::value, "1", 1, kMaxDegree,
                      "Expert-parallel degree for MoE models, folded inside data parallelism "
                      "(Megatron-Core): groups of ep data-parallel ranks split the routed experts "
                      "and exchange tokens by all-to-all; must divide dp and model.moe.experts."));
  t.push_back(opt("parallel.sequence_parallel", T::boolean, "", D::value, "false",
                  "Megatron sequence parallelism: shard norms and dropout over the TP group "
                  "(reduce-scatter + all-gather instead of all-reduce)."));
  t.push_back(opt("parallel.tp_comm_overlap", T::boolean, "", D::value, "false",
                  "Transformer Engine's TP communication overlap (Megatron's --tp-comm-overlap; "
                  "needs sequence_parallel): each all-gather becomes a ring exchange of the tp "
                  "shards pipelined with tp row slices of the GEMM that reads it (QKV, FC1; in "
                  "backward the first input-gradient GEMM), each forward reduce-scatter 4 pieces "
                  "(TE's default) behind row slices of the GEMM that writes it (output projection, "
                  "FC2), slices timed at their own shape; in backward the input gradient's "
                  "reduce-scatter runs beside the weight-gradient GEMM. MoE MLP blocks and "
                  "context-parallel attention keep their collectives in line. Memory adds TE's 10 "
                  "userbuffers of s*b/cp x h. Not searched (docs/plans.md)."));
  t.push_back(choice("parallel.schedule", {"1f1b", "interleaved", "zero-bubble", "dualpipe", "dualpipev", "gpipe", "custom"}, "1f1b",
                     "Pipeline schedule: 1f1b (Megatron), interleaved (virtual pipeline; needs "
                     "virtual_stages >= 2 and micro-batches divisible by pp), zero-bubble (ZB-H1: "
                     "backward split into input and weight gradients), dualpipe (DeepSeek-V3: two "
                     "directions, parameters held twice; pp and micro-batches even, micro-batches "
                     ">= 2*pp), dualpipev (DualPipe cut in half: a V over 2*pp chunks), gpipe, custom "
                     "(the steps of parallel.custom_schedule)."));
  OptionSpec custom = opt("parallel.custom_schedule", T::list, "", D::none, "",
                          "With schedule: custom, the steps of each pipeline rank in order, one string per "
                          "rank (pp of them): F<m> forward and B<m> backward of micro-batch m, or I<m> "
                          "and W<m> for the input and weight gradients split as zero-bubble does, e.g. "
                          "[\"F0 F1 B0 F2 B1 B2\", \"F0 B0 F1 B1 F2 B2\"]. One model chunk per rank, or with "
                          "virtual_stages V the interleaved layout, each step suffixed .v for the rank's v-th "
                          "chunk (F0.1); checked by replaying it (every step once, in dependency order, no "
                          "deadlock).");
  custom.allowed = {"\"F0 F1 B0 ...\""};
  t.push_back(custom);
  t.push_back(integer("parallel.virtual_stages", "chunks", D::value, "1", 1, 64,
                      "Model chunks per pipeline rank for the interleaved schedule (Megatron's "
                      "virtual pipeline size) or a custom one; layers must divide into pp * "
                      "virtual_stages chunks."));
  t.push_back(integer("parallel.pipeline_lookahead", "micro-batches", D::value, "0", 0, 1024,
                      "1f1b only: forwards every pipeline stage but the last runs ahead of 1F1B's warm-up "
                      "(p - s - 1 on stage s), so that activations sent over a slow boundary, a WAN between "
                      "sites (docs/geo.md), are in flight while the stage keeps computing instead of waiting "
                      "a round trip per micro-batch; the schedule stays synchronous (no stale weights), and "
                      "each extra micro-batch in flight holds its activations (counted in memory)."));
  OptionSpec lps = opt("parallel.layers_per_stage", T::list, "layers", D::derived, "layers / pp each",
                       "An uneven split of the transformer layers over the pipeline ranks, first stage "
                       "first: pp positive integers summing to the model's layers (e.g. [9, 8, 8, 7] to "
                       "lighten a slow or hot stage). One model chunk per rank: 1f1b, gpipe, zero-bubble, "
                       "or custom without virtual stages.");
  lps.allowed = {"N"};
  t.push_back(lps);
  t.push_back(integer("parallel.zero", "", D::value, "0", 0, 3,
                      "ZeRO stage: 0 = all-reduce of gradients; 1 = optimizer states sharded "
                      "(Megatron's distributed optimizer: reduce-scatter of gradients, all-gather of "
                      "parameters after the step); 2 = gradients sharded too (reduce-scatter every "
                      "micro-batch); 3 = parameters sharded too (all-gathered per layer, one layer "
                      "ahead, in forward and again in backward). With ep > 1 the routed experts "
                      "shard over the expert-data-parallel group (dp*cp/ep ranks), the rest over dp*cp."));
  t.push_back(opt("parallel.fsdp", T::boolean, "", D::value, "false",
                  "PyTorch FSDP: the same as zero: 3."));
  t.push_back(opt("parallel.reshard_after_forward", T::boolean, "", D::value, "true",
                  "ZeRO-3/FSDP: free gathered parameters after each layer's forward and gather them "
                  "again for backward; false keeps them (FSDP's SHARD_GRAD_OP: more memory, one "
                  "gather)."));
  t.push_back(integer("parallel.shard_group", "ranks", D::value, "0", 0, kMaxNodes * 64,
                      "Hybrid sharding (HSDP): shard within groups of this many data-parallel ranks, "
                      "replicate across groups (an all-reduce of the gradient shards between "
                      "replicas); 0 = shard over all of dp*cp. Needs zero >= 1."));
  t.push_back(choice("parallel.recompute", {"none", "selective", "full"}, "none",
                     "Activation recomputation: selective recomputes attention's core, full whole layers."));
  OptionSpec mesh = opt("parallel.mesh", T::list, "", D::none, "",
                        "The plan's degrees as a device mesh, outermost dimension first (the last "
                        "varies fastest, as in torch's init_device_mesh): e.g. [dp 16, pp 8, ep 8 in dp, "
                        "tp 8]. Sets tp, cp, pp, dp, ep and the placement order at once, so none of "
                        "those keys may be given with it; a dimension left out has size 1; ep is "
                        "folded inside dp (\"ep N in dp\", or plain \"ep N\").");
  mesh.allowed = {"tp N", "cp N", "pp N", "dp N", "ep N [in dp]"};
  t.push_back(mesh);
  OptionSpec order = opt("parallel.order", T::list, "", D::value, "[tp, cp, pp, dp]",
                         "Placement of ranks on devices, innermost first: each of tp, cp, pp, dp "
                         "exactly once. The default keeps TP peers inside a node.");
  order.allowed = {"tp", "cp", "pp", "dp"};
  t.push_back(order);
  t.push_back(opt("parallel.grad_bucket", T::size, "bytes", D::value, "80MB",
                  "Gradient bucket for data-parallel reduction overlapped with backward; 0 = one "
                  "bucket per pipeline stage, after backward."));
  t.push_back(opt("parallel.pp_scatter_gather", T::boolean, "", D::value, "false",
                  "Megatron-LM's scatter/gather of pipeline sends: without sequence parallelism each TP rank "
                  "sends 1/tp of the activation and the receiving ranks all-gather it over TP. Framework-governed."));
  t.push_back(opt("parallel.overlap_param_gather", T::boolean, "", D::value, "false",
                  "With zero 1 or 2: the parameter all-gather after the optimizer runs per layer under the "
                  "next step's first forward micro-batch (Megatron-Core's --overlap-param-gather). "
                  "Framework-governed."));
  t.push_back(choice("parallel.selective_recompute", {"attention", "every_other_matmul"}, "attention",
                     "What recompute: selective re-runs: Megatron's attention core, or torchtitan's op-level "
                     "policy (every other matmul of the layer and the element-wise kernels; the attention kernel "
                     "is saved). Framework-governed."));
  t.push_back(choice("parallel.cp_comm", {"p2p", "all_gather"}, "p2p",
                     "How context-parallel ranks exchange K and V: `p2p`, a ring whose hops overlap the attention's "
                     "blocks (Transformer Engine's default cp_comm_type); `all_gather`, K and V gathered before the "
                     "attention and their gradients reduce-scattered after it, on the critical path (Llama 3; "
                     "torchtitan's default rotation). Framework-governed."));
  t.push_back(opt("parallel.embedding_in_pipeline_split", T::boolean, "", D::value, "false",
                  "Count the embedding and the output head as one layer each when splitting the layers evenly "
                  "over pipeline stages (Megatron-DeepSpeed's 'type:transformer|embedding' partition): the "
                  "first and last stages get a layer fewer. Framework-governed."));
  t.push_back(opt("parallel.overlap_grad_reduce", T::boolean, "", D::value, "true",
                  "Overlap the data-parallel gradient reduction with backward."));
  t.push_back(opt("parallel.moe_shared_expert_overlap", T::boolean, "", D::value, "false",
                  "MoE: compute the shared experts while the EP all-to-all dispatches the routed "
                  "tokens (and their backward while the combine gradient returns), as "
                  "Megatron-Core's moe_shared_expert_overlap."));

  t.push_back(section("workload", D::none, "A recorded workload to replay instead of a model (docs/traces.md): exactly one of "
                                            "trace, chakra and kineto."));
  t.push_back(opt("workload.trace", T::path, "", D::none, "",
                  "Execution-graph JSON (docs/execution-graph.md), relative to this file, else the "
                  "current directory, else the project root."));
  t.push_back(opt("workload.chakra", T::path, "", D::none, "",
                  "MLCommons Chakra execution traces: a directory of one file per rank (NAME.RANK.et, "
                  "protobuf, or NAME.RANK.json, chakra_jsonizer's output), or one such file (docs/traces.md)."));
  t.push_back(opt("workload.kineto", T::path, "", D::none, "",
                  "PyTorch profiler (Kineto) Chrome-trace JSON: one file, or a directory of one per rank "
                  "(docs/traces.md)."));
  t.push_back(opt("workload.retime", T::boolean, "", D::value, "false",
                  "Time the trace's compute nodes from their FLOPs, bytes and shapes on this cluster's "
                  "device instead of their recorded durations, where the trace has them (`--retime`); the "
                  "report counts how each node was treated."));

  t.push_back(opt("validation", T::map, "", D::none, "",
                  "Free-form map for validation tests (expected figures); the loader ignores it."));
  return t;
}

}  // namespace

const std::vector<OptionSpec>& experiment_options() {
  static const std::vector<OptionSpec> table = build();
  return table;
}

const OptionSpec* find_option(std::string_view key) {
  for (const auto& o : experiment_options())
    if (o.key == key) return &o;
  return nullptr;
}

const OptionSpec& option(std::string_view key) {
  const OptionSpec* o = find_option(key);
  core::check_invariant(o != nullptr, "every key the loader reads is in the option table");
  return *o;
}

std::vector<const OptionSpec*> options_under(std::string_view section) {
  std::vector<const OptionSpec*> out;
  for (const auto& o : experiment_options())
    if (o.parent() == section) out.push_back(&o);
  return out;
}

std::string describe_type(const OptionSpec& o) {
  switch (o.type) {
    case OptionType::section: return "section";
    case OptionType::map: return "map";
    case OptionType::string: return "string";
    case OptionType::path: return "path";
    case OptionType::integer:
      return fmt::format("integer {}..{}", o.min, o.max);
    case OptionType::number:
      return fmt::format("number in [{}, {}]", o.min, o.max);
    case OptionType::boolean: return "true | false";
    case OptionType::size: return "size";
    case OptionType::choice: return core::join(o.allowed, " | ");
    case OptionType::list: return fmt::format("list of {}", core::join(o.allowed, " | "));
  }
  return "?";
}

namespace {
std::string default_text(const OptionSpec& o) {
  switch (o.default_kind) {
    case DefaultKind::value: return o.type == OptionType::section ? "" : fmt::format("`{}`", o.default_value);
    case DefaultKind::derived: return std::string(o.default_value);
    case DefaultKind::required: return "required";
    case DefaultKind::none: return "";
  }
  return "";
}
}  // namespace

std::string options_markdown() {
  // A '|' inside a cell would end it; Markdown tables take it escaped.
  auto cell = [](std::string_view s) {
    std::string out;
    for (char c : s) {
      if (c == '|') out += '\\';
      out += c;
    }
    return out;
  };
  std::string out = "| key | type | unit | default | description |\n|---|---|---|---|---|\n";
  for (const auto& o : experiment_options())
    out += fmt::format("| `{}` | {} | {} | {} | {} |\n", o.key, cell(describe_type(o)), o.unit, cell(default_text(o)),
                       cell(o.description));
  return out;
}

}  // namespace inflect::io
