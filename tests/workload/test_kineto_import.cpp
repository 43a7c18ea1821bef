// PyTorch profiler (Kineto) trace import (src/workload/kineto_*.cpp, docs/traces.md "Kineto").
#include <doctest/doctest.h>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "inflect/core/error.hpp"
#include "inflect/workload/graph_json.hpp"
#include "inflect/workload/trace_import.hpp"

using namespace inflect::workload;
using inflect::core::Error;
using inflect::core::ErrorKind;
namespace fs = std::filesystem;

namespace {

const std::string kData = std::string(INFLECT_SOURCE_DIR) + "/tests/data/kineto/";

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::int64_t tally(const NodeTally& t, const std::string& prefix) {
  std::int64_t n = 0;
  for (const auto& [k, v] : t.counts)
    if (k.rfind(prefix, 0) == 0) n += v;
  return n;
}

// The error an import of `text` gives (empty if none).
std::string import_error(const std::string& text, TraceImportOptions o = {}) {
  try {
    (void)import_trace_text(TraceFormat::kineto, "t.json", text, o);
  } catch (const Error& e) {
    CHECK(e.kind() == ErrorKind::input);
    return e.what();
  }
  return {};
}

// A one-event trace around `event` (a JSON object), rank 0 of one.
std::string one_event(const std::string& event) {
  return R"({"distributedInfo": {"rank": 0, "world_size": 1}, "traceEvents": [)" + event + "]}";
}

std::string replace(std::string s, const std::string& from, const std::string& to) {
  for (std::size_t at = s.find(from); at != std::string::npos; at = s.find(from, at + to.size())) s.replace(at, from.size(), to);
  return s;
}

struct TempDir {
  static inline int made = 0;  // each its own folder, even two alive at once
  fs::path path = fs::temp_directory_path() / ("inflect_kineto_" + std::to_string(::getpid()) + "_" + std::to_string(++made));
  TempDir() {
    fs::remove_all(path);
    fs::create_directories(path);
  }
  ~TempDir() { fs::remove_all(path); }
  void write(const std::string& name, const std::string& text) const { std::ofstream(path / name) << text; }
};

double recorded_us(const ExecutionGraph& g, OpId id) {
  const auto& k = g.kernels()[g.op(id).payload];
  REQUIRE(k.recorded.has_value());
  return static_cast<double>(k.recorded->count_ps()) / 1e6;
}

}  // namespace

// tests/data/kineto/handmade_rank0.json: rank 0 of a 2-rank data-parallel job. ProfilerStep#1
// (1000-1100 us) is replayed: ProfilerStep#2 follows it, so it is complete. Host thread 100:
//   launch GEMM 1010+5, launch add 1020+4, cudaEventRecord 1025 (stream 7), cudaStreamWaitEvent
//   1027 (stream 20 waits for it), launch all-reduce 1030+5, launch fill 1060+5,
//   cudaStreamSynchronize(stream 20) 1080+17, launch the optimizer 1098+2.
// GPU: stream 7: GEMM 1016+30, add 1046+10, fill 1066+8, optimizer 1100+6; stream 20: all-reduce
// 1056+40.
// Time starts when the GPU starts the step (the GEMM, 1016): the GEMM's launch ended before, a
// delay of 0; then to each launch's end, 1024-1016 = 8, 1035-1024 = 11, 1065-1035 = 30; to the
// synchronize's start 1080-1065 = 15; from its end to the optimizer's launch's end 1100-1097 = 3,
// after the all-reduce (what the synchronize waited for). The event recorded at 1025 captures the
// add (the last op launched on stream 7 before it), so the all-reduce waits for the add.
// Recorded step: the GPU's span, 1016 to 1106 = 90 us.
TEST_CASE("kineto: a hand-written step, op by op") {
  const auto t = import_trace(TraceFormat::kineto, kData + "handmade_rank0.json", {});
  const ExecutionGraph& g = t.graph;
  CHECK(t.summary.format == TraceFormat::kineto);
  CHECK(t.summary.ranks == 2);
  CHECK(t.summary.rank_files == 1);
  CHECK(t.summary.nodes == 26);
  CHECK(t.summary.replicated_ranks == 1);  // rank 1 copies rank 0: its only group spans the job
  REQUIRE(t.summary.recorded_step.has_value());
  CHECK(t.summary.recorded_step->value() == doctest::Approx(90e-6));
  REQUIRE(g.kept_ranks().size() == 1);
  REQUIRE(g.replicas().size() == 1);
  CHECK(g.replicas()[0].rank == 1);
  CHECK(g.op_count() == 22);
  // Rank 0's ops in time order: host delays (key: the call's start) and GPU activities (their start).
  REQUIRE(g.ops().size() == 11);
  auto stream = [&](OpId i) { return g.stream_names()[g.op(i).stream]; };
  auto name = [&](OpId i) {
    return g.op(i).type == OpType::compute ? g.kernels()[g.op(i).payload].name : g.collectives()[g.op(i).payload].name;
  };
  auto deps = [&](OpId i) { return std::vector<OpId>(g.deps(i).begin(), g.deps(i).end()); };
  // 0 host 0 us (launch GEMM), 1 GEMM, 2 host 8 us (launch add), 3 host 11 us (launch all-reduce),
  // 4 add, 5 all-reduce, 6 host 30 us (launch fill), 7 fill, 8 host 15 us (to the synchronize),
  // 9 host 3 us (launch optimizer), 10 optimizer
  // stream 7 runs the most kernel time: it is "compute"
  const std::vector<std::string> streams = {"host", "compute", "host", "host", "compute", "stream 20",
                                            "host", "compute", "host", "host", "compute"};
  for (OpId i = 0; i < 11; ++i) CHECK(stream(i) == streams[i]);
  CHECK(recorded_us(g, 0) == 0);
  CHECK(name(1) == "cutlass_80_tensorop_bf16_s16816gemm_64x64_nn");  // CUTLASS's kernel, from its template argument
  CHECK(recorded_us(g, 1) == 30);
  CHECK(deps(1) == std::vector<OpId>{0});
  CHECK(recorded_us(g, 2) == 8);
  CHECK(deps(2) == std::vector<OpId>{0});
  CHECK(recorded_us(g, 3) == 11);
  CHECK(name(4) == "at::native::vectorized_elementwise_kernel");
  CHECK(recorded_us(g, 4) == 10);
  CHECK(deps(4) == std::vector<OpId>{1, 2});  // after the GEMM on its stream, and after its launch
  REQUIRE(g.op(5).type == OpType::collective);
  const Collective& ar = g.collectives()[g.op(5).payload];
  CHECK(ar.kind == CollectiveKind::all_reduce);
  CHECK(ar.bytes.value() == 1048576.0 * 2);  // In msg nelems x BFloat16's 2 bytes
  CHECK(ar.dim == ParallelDim::dp);
  CHECK(ar.name == "ncclDevKernel_AllReduce_Sum_bf16_RING_LL");
  CHECK(g.groups()[ar.group].members == std::vector<RankId>{0, 1});
  CHECK(deps(5) == std::vector<OpId>{4, 3});  // the add the waited-for event captured, and its launch
  CHECK(recorded_us(g, 6) == 30);
  CHECK(recorded_us(g, 7) == 8);
  CHECK(deps(7) == std::vector<OpId>{4, 6});
  CHECK(recorded_us(g, 8) == 15);
  CHECK(recorded_us(g, 9) == 3);
  CHECK(deps(9) == std::vector<OpId>{8, 5});  // after the synchronize, which waited for the all-reduce
  CHECK(name(10) == "at::native::multi_tensor_apply_kernel");
  CHECK(recorded_us(g, 10) == 6);
  CHECK(deps(10) == std::vector<OpId>{7, 9});
  // The GEMM's shapes are known (64x128 by 128x256 in BF16): its cost is attached, its time recorded.
  const auto& gemm = g.kernels()[g.op(1).payload];
  CHECK(gemm.cost.cls == inflect::core::KernelClass::gemm);
  CHECK(gemm.cost.m == 64);
  CHECK(gemm.cost.n == 256);
  CHECK(gemm.cost.k == 128);
  CHECK(gemm.cost.flops.value() == 2.0 * 64 * 256 * 128);
  // Every event is accounted for: 5 GPU activities (4 compute + 1 all-reduce) replayed, the rest
  // counted with what became of them; 6 host delays are ops that no event is.
  CHECK(tally(t.summary.compute, "recorded duration") == 4);
  CHECK(tally(t.summary.compute, "host:") == 6);
  CHECK(tally(t.summary.communication, "all_reduce") == 1);
  CHECK(tally(t.summary.other, "GPU activities outside") == 1);
  CHECK(tally(t.summary.other, "replayed step: ProfilerStep#1") == 1);
  CHECK(tally(t.summary.other, "python_function") == 1);
  CHECK(tally(t.summary.other, "rank 1 (no file): replicated from rank 0") == 1);
}

// Without CUPTI's cuda_sync record, the cudaStreamWaitEvent at 1027 does not say which stream it
// waits for: the launch after it (the all-reduce) waits for every other stream's work launched
// before 1027, which is the add on stream 7 again.
TEST_CASE("kineto: a stream wait without its cuda_sync record waits for the other streams") {
  std::string text = slurp(kData + "handmade_rank0.json");
  const std::string record = R"("cuda_sync_kind": "Stream Wait Event")";
  REQUIRE(text.find(record) != std::string::npos);
  text = replace(text, R"("cat": "cuda_sync", "name": "Stream Wait Event")", R"("cat": "cuda_sync_dropped", "name": "Stream Wait Event")");
  const auto t = import_trace_text(TraceFormat::kineto, "t.json", text, {});
  const ExecutionGraph& g = t.graph;
  REQUIRE(g.op(5).type == OpType::collective);
  CHECK(std::vector<OpId>(g.deps(5).begin(), g.deps(5).end()) == std::vector<OpId>{3, 4});
  CHECK(tally(t.summary.other, "stream waits without their cuda_sync record") == 1);
  CHECK(tally(t.summary.other, "cuda_sync_dropped: ignored") == 1);
}

TEST_CASE("kineto: --retime re-times exactly the GEMMs with shapes") {
  TraceImportOptions retime;
  retime.retime = true;
  const auto a = import_trace(TraceFormat::kineto, kData + "handmade_rank0.json", {});
  const auto b = import_trace(TraceFormat::kineto, kData + "handmade_rank0.json", retime);
  REQUIRE(a.graph.ops().size() == b.graph.ops().size());
  int changed = 0;
  for (OpId i = 0; i < a.graph.ops().size(); ++i) {
    if (a.graph.op(i).type != OpType::compute) continue;
    const auto &ka = a.graph.kernels()[a.graph.op(i).payload], &kb = b.graph.kernels()[b.graph.op(i).payload];
    if (ka.recorded == kb.recorded) continue;
    ++changed;
    CHECK(ka.cost.cls == inflect::core::KernelClass::gemm);
    CHECK_FALSE(kb.recorded.has_value());  // timed by the device model
    CHECK(kb.cost.precision == inflect::core::Precision::bf16);  // from "Input type"
  }
  CHECK(changed == 1);
  CHECK(tally(b.summary.compute, "re-timed: GEMM") == 1);
  CHECK(tally(b.summary.compute, "recorded: not launched by a GEMM or attention op") == 3);
}

// A flash-attention forward with GQA (16 query heads, 8 key/value heads), causal by its Concrete
// Inputs: 4*b*h*s_q*s_k*d/2 = 4*2*16*1024*1024*128/2 = 8,589,934,592 FLOPs; bytes read Q, K, V and
// write O: 2*(2*16*1024*128*2 B) + 2*(2*8*1024*128*2 B) = 16,777,216 + 8,388,608 = 25,165,824.
TEST_CASE("kineto: --retime re-times flash attention from its op's shapes") {
  const std::string trace = one_event(
      R"J({"ph": "X", "cat": "cpu_op", "name": "aten::_scaled_dot_product_flash_attention", "pid": 1, "tid": 1, "ts": 10,
          "dur": 20, "args": {"External id": 5, "Input Dims": [[2, 16, 1024, 128], [2, 8, 1024, 128], [2, 8, 1024, 128], [], [],
          [], []], "Input type": ["c10::BFloat16", "c10::BFloat16", "c10::BFloat16", "Scalar", "Scalar", "Scalar", ""],
          "Concrete Inputs": ["", "", "", "0.", "True", "False", ""]}},
         {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1, "ts": 12, "dur": 4,
          "args": {"External id": 5, "correlation": 9}},
         {"ph": "X", "cat": "kernel", "name": "void pytorch_flash::flash_fwd_kernel<Flash_fwd_kernel_traits<128>>(Flash_fwd_params)",
          "pid": 0, "tid": 7, "ts": 17, "dur": 300, "args": {"External id": 5, "stream": 7, "correlation": 9, "device": 0}})J");
  TraceImportOptions retime;
  retime.retime = true;
  const auto t = import_trace_text(TraceFormat::kineto, "attn.json", trace, retime);
  const ExecutionGraph& g = t.graph;
  REQUIRE(g.ops().size() == 2);  // the launch's delay, the kernel
  const Kernel& k = g.kernels()[g.op(1).payload];
  CHECK(k.name == "pytorch_flash::flash_fwd_kernel");
  CHECK_FALSE(k.recorded.has_value());
  CHECK(k.cost.cls == inflect::core::KernelClass::attention);
  CHECK(k.cost.precision == inflect::core::Precision::bf16);
  CHECK(k.cost.flops.value() == 8589934592.0);
  CHECK(k.cost.bytes.value() == 25165824.0);
  CHECK(tally(t.summary.compute, "re-timed: attention") == 1);
  // Without is_causal in the Concrete Inputs the kernel keeps its recorded 300 us.
  const auto u = import_trace_text(TraceFormat::kineto, "attn.json", replace(trace, R"("0.", "True")", R"("0.", "")"), retime);
  CHECK(u.graph.kernels()[u.graph.op(1).payload].recorded == inflect::core::Time::ps(300'000'000));
  CHECK(tally(u.summary.compute, "recorded: the attention op's is_causal is not in its Concrete Inputs") == 1);
}

TEST_CASE("kineto: an import is deterministic") {
  const auto a = import_trace(TraceFormat::kineto, kData + "handmade_rank0.json", {});
  const auto b = import_trace(TraceFormat::kineto, kData + "handmade_rank0.json", {});
  CHECK(graph_to_json(a.graph) == graph_to_json(b.graph));
  const auto c = import_trace(TraceFormat::kineto, kData + "hta_event_sync_multi_stream.json.gz", {});
  const auto d = import_trace(TraceFormat::kineto, kData + "hta_event_sync_multi_stream.json.gz", {});
  CHECK(graph_to_json(c.graph) == graph_to_json(d.graph));
}

// HTA's tests/data/critical_path traces (gzip, read through zlib). Counts from
//   python3 -c "import json,gzip,sys; e=json.load(gzip.open(sys.argv[1]))['traceEvents']; print(len(e),
//     sum(x.get('cat') in ('kernel','gpu_memcpy','gpu_memset') for x in e))" FILE
// hta_event_sync: 92 events, 5 GPU activities, launched by 5 calls, one step (ProfilerStep#100).
TEST_CASE("kineto: HTA's event-synchronization traces") {
  const auto t = import_trace(TraceFormat::kineto, kData + "hta_event_sync.json.gz", {});
  CHECK(t.summary.nodes == 92);
  CHECK(t.summary.ranks == 1);
  CHECK(tally(t.summary.compute, "recorded") == 5);
  CHECK(t.summary.communication.total() == 0);
  // 5 launches (one a synchronous copy to pageable memory) and a cudaStreamSynchronize before the
  // last launch: 6 host ops. The 5 calls after the last launch (cudaEventRecord,
  // cudaEventSynchronize, cudaEventQuery, cudaEventElapsedTime, cudaDeviceSynchronize) cannot
  // delay the GPU's work and are not replayed.
  CHECK(t.graph.op_count() == 5 + 6);
  CHECK(tally(t.summary.other, "cuda_sync of a non-blocking call") == 1);
  CHECK(tally(t.summary.other, "host calls: synchronizations") == 1);
  CHECK(tally(t.summary.other, "host calls after the last launch") == 5);
  CHECK(tally(t.summary.other, "replayed step: ProfilerStep#100") == 1);
  // the single-step trace's step: its GPU span, from the fill kernel's start to the spin kernel's end
  REQUIRE(t.summary.recorded_step.has_value());
  CHECK(t.summary.recorded_step->value() == doctest::Approx((1707417525512408.0 - 1707417525512145.0) * 1e-6));
  // hta_event_sync_multi_stream: 149 events, 6 GPU activities, no step annotation; one
  // cudaStreamWaitEvent between two streams.
  const auto m = import_trace(TraceFormat::kineto, kData + "hta_event_sync_multi_stream.json.gz", {});
  CHECK(m.summary.nodes == 149);
  CHECK(tally(m.summary.compute, "recorded") == 6);
  CHECK(tally(m.summary.other, "replayed: the whole trace") == 1);
  CHECK(tally(m.summary.other, "stream waits (cudaStreamWaitEvent)") == 1);
}

// hta_mi250_rocm: a ROCm 6.2 trace on an MI250 (HIP calls under cuda_runtime), 220 events, 16 GPU
// activities (14 kernels, 2 copies), two ProfilerStep#1 annotations (one on the GPU, ignored) and a
// ProfilerStep#2: step 1 is replayed. hipMemcpyWithStream returns when its copy is done.
TEST_CASE("kineto: HTA's ROCm trace") {
  const auto t = import_trace(TraceFormat::kineto, kData + "hta_mi250_rocm.json.gz", {});
  CHECK(t.summary.nodes == 220);
  CHECK(tally(t.summary.compute, "recorded duration") == 14);
  CHECK(tally(t.summary.compute, "recorded: copies") == 2);
  CHECK(tally(t.summary.other, "host calls: synchronous copies") == 2);
  CHECK(tally(t.summary.other, "replayed step: ProfilerStep#1") == 1);
  CHECK(tally(t.summary.other, "gpu_user_annotation: ignored") == 2);
}

// workloads/traces/kineto/hta_ddp_rank0.json.gz (HTA's nccl_parser_config trace): rank 0 of a
// 2-rank DDP job, 40,573 events; its ProfilerStep#5 (of 4-6) launches 893 kernels, 320 copies, 38
// memsets, 5 all-reduces and 2 broadcasts (DDP's buffers), by
//   python3 -c "import json,gzip,sys,collections as C
//   e=json.load(gzip.open(sys.argv[1]))['traceEvents']
//   s=[x for x in e if x.get('name')=='ProfilerStep#5'][0]; rt={x['args']['correlation']:x['ts'] for x in e if
//   x.get('cat')=='cuda_runtime'}
//   g=[x for x in e if x.get('cat') in('kernel','gpu_memcpy','gpu_memset') and s['ts']<=rt[x['args']['correlation']]<s['ts']+s['dur']]
//   print(len(e), C.Counter(x['cat'] if not x['name'].startswith('nccl') else x['args']['Collective name'] for x in g))" FILE
// Rank 1 has no file: its one process group spans the job, so it is rank 0's copy.
TEST_CASE("kineto: a real DDP trace with NCCL metadata") {
  const auto t = import_trace(TraceFormat::kineto, std::string(INFLECT_SOURCE_DIR) + "/workloads/traces/kineto/hta_ddp_rank0.json.gz", {});
  CHECK(t.summary.nodes == 40573);
  CHECK(t.summary.ranks == 2);
  CHECK(t.summary.replicated_ranks == 1);
  CHECK(tally(t.summary.compute, "recorded duration") == 893);
  CHECK(tally(t.summary.compute, "recorded: copies") == 320);
  CHECK(tally(t.summary.compute, "recorded: memsets") == 38);
  CHECK(tally(t.summary.communication, "all_reduce (NCCL ran RING/LL") == 5);
  CHECK(tally(t.summary.communication, "broadcast (NCCL ran RING/LL") == 2);
  CHECK(tally(t.summary.other, "replayed step: ProfilerStep#5") == 1);
  CHECK(t.graph.kept_ranks().size() == 1);
  // The collectives as PyTorch recorded them: Float gradient buckets on the default group.
  bool found = false;
  for (const auto& c : t.graph.collectives())
    if (c.kind == CollectiveKind::all_reduce && c.bytes.value() == 2049000.0 * 4) found = true;  // In msg nelems x 4 B
  CHECK(found);
}

TEST_CASE("kineto: malformed traces are located errors") {
  const std::string good = slurp(kData + "handmade_rank0.json");
  CHECK(import_error(good).empty());
  CHECK(import_error(good.substr(0, good.size() / 2)).find("t.json: not valid JSON (truncated?)") == 0);
  CHECK(import_error(R"({"schemaVersion": 1})").find("no 'traceEvents' array") != std::string::npos);
  CHECK(import_error("[1, 2]").find("not a Kineto trace") != std::string::npos);
  CHECK(import_error(one_event(R"({"name": "k", "ts": 1, "dur": 2})")).find("t.json: event 0 'k': no 'ph'") == 0);
  CHECK(import_error(one_event(R"({"ph": "X", "name": "k", "dur": 2})")).find("event 0 'k': a complete event (ph X) without 'ts'") !=
        std::string::npos);
  CHECK(import_error(one_event(R"({"ph": "X", "name": "k", "ts": 2})")).find("without 'dur'") != std::string::npos);
  CHECK(import_error(one_event(R"({"ph": "X", "name": "k", "ts": 2, "dur": -1})")).find("'dur' is negative") != std::string::npos);
  CHECK(import_error(one_event(R"({"ph": "X", "name": "k", "ts": 2, "dur": 1e12})")).find("past the bound") != std::string::npos);
  CHECK(import_error(one_event(R"({"ph": "X", "name": "k", "ts": -5.5, "dur": 1})")).find("'ts' is -5.5, not a time") !=
        std::string::npos);
  CHECK(import_error(one_event("3")).find("event 0 is not an object") != std::string::npos);
  // collective metadata
  const std::string nelems = R"("In msg nelems": 1048576)";
  CHECK(import_error(replace(good, nelems, R"("In msg nelems": 1e18)")).find("'In msg nelems' is 1e+18, not an integer in") !=
        std::string::npos);
  const std::string bf16 = R"("dtype": "BFloat16")";
  const std::string bad_dtype = import_error(replace(good, bf16, R"("dtype": "Quaternion")"));
  CHECK(bad_dtype.find("t.json: event 15 'ncclDevKernel_AllReduce_Sum_bf16_RING_LL") == 0);
  CHECK(bad_dtype.find("unknown dtype 'Quaternion'") != std::string::npos);
  CHECK(import_error(replace(good, R"("Collective name": "allreduce")", R"("Collective nom": "allreduce")"))
            .find("an NCCL kernel without collective metadata") != std::string::npos);
  CHECK(import_error(replace(good, R"("Process Group Ranks": "[0, 1]")", R"("Process Group Ranks": "[0, 3]")"))
            .find("process group holds rank 3, past the job's 2 ranks") != std::string::npos);
  CHECK(import_error(replace(good, R"("Collective name": "allreduce")", R"("Collective name": "gather")"))
            .find("collective 'gather' is not one inflect models (NCCL has no gather or scatter") != std::string::npos);
  // a truncated rank list falls back on start + stride
  const std::string truncated = replace(replace(good, R"("Process Group Ranks": "[0, 1]")", R"("Process Group Ranks": "[0, ...]")"),
                                        R"("Group size": 2,)", R"("Group size": 2, "Global rank start": 0, "Global rank stride": 1,)");
  CHECK(import_error(truncated).empty());
  // ... or on distributedInfo.pg_config's entry of the same Process Group Name
  const std::string cut = replace(good, R"("Process Group Ranks": "[0, 1]")", R"("Process Group Ranks": "[0, ...]")");
  CHECK(import_error(cut).empty());
  CHECK(import_error(replace(cut, R"("Process Group Name": "0")", R"("Process Group Name": "9")"))
            .find("without its process group's ranks") != std::string::npos);
}

TEST_CASE("kineto: files of a directory, their ranks, and missing ranks") {
  const std::string rank0 = slurp(kData + "handmade_rank0.json");
  const std::string rank1 = replace(rank0, R"("rank": 0, "world_size": 2)", R"("rank": 1, "world_size": 2)");
  {
    TempDir d;
    d.write("rank-0.json", rank0);
    d.write("rank-1.pt.trace.json", rank1);
    d.write("notes.txt", "not a trace");
    CHECK(trace_files(TraceFormat::kineto, d.path.string()).size() == 2);
    const auto t = import_trace(TraceFormat::kineto, d.path.string(), {});
    CHECK(t.summary.rank_files == 2);
    CHECK(t.summary.replicated_ranks == 0);
    CHECK(t.graph.op_count() == 22);
    CHECK(t.graph.kept_ranks().size() == 1);  // rank 1 runs what rank 0 does
    CHECK(tally(t.summary.communication, "all_reduce") == 2);
  }
  auto error_of = [](const TempDir& d) {
    try {
      (void)import_trace(TraceFormat::kineto, d.path.string(), {});
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  {
    TempDir d;
    d.write("a.json", rank0);
    d.write("b.json", rank0);
    CHECK(error_of(d).find("a.json and " + (d.path / "b.json").string() + " both claim rank 0") != std::string::npos);
  }
  {
    TempDir d;
    d.write("a.json", rank0);
    d.write("b.json", replace(rank1, R"("distributedInfo": {"backend": "nccl", "rank": 1,)", R"("distributedInfo": {"backend": "nccl",)"));
    CHECK(error_of(d).find("b.json: no distributedInfo.rank, and 2 files were given") != std::string::npos);
  }
  {
    // The ranks disagree on the all-reduce's sequence number: not the same step.
    TempDir d;
    d.write("a.json", rank0);
    d.write("b.json", replace(rank1, R"("Seq": 7)", R"("Seq": 8)"));
    const std::string e = error_of(d);
    CHECK(e.find("ranks 0 and 1 disagree on their collective #1 on process group [0, 1]") != std::string::npos);
    CHECK(e.find("Seq 7") != std::string::npos);
    CHECK(e.find("Seq 8") != std::string::npos);
  }
  {
    // The ranks must replay the same step: rank 1's steps are 5 and 6, rank 0's 1 and 2.
    TempDir d;
    d.write("a.json", rank0);
    d.write("b.json", replace(replace(rank1, "ProfilerStep#1", "ProfilerStep#5"), "ProfilerStep#2", "ProfilerStep#6"));
    CHECK(error_of(d).find("the files' ProfilerStep annotations share no complete step") != std::string::npos);
    TempDir e;
    e.write("a.json", rank0);
    e.write("b.json", replace(replace(rank1, "ProfilerStep#1", "Step 1"), "ProfilerStep#2", "Step 2"));
    CHECK(error_of(e).find("some files have ProfilerStep annotations and some do not") != std::string::npos);
  }
  {
    // One file of a 4,096-rank data-parallel job (the group's list truncated, as PyTorch writes a
    // long one): 4,095 ranks replicated, each running rank 0's 11 ops.
    const std::string big =
        replace(replace(replace(rank0, R"("world_size": 2)", R"("world_size": 4096)"), R"("[0, 1]")", R"("[0, ...]")"),
                R"("Group size": 2,)", R"("Group size": 4096, "Global rank start": 0, "Global rank stride": 1,)");
    const auto t = import_trace_text(TraceFormat::kineto, "big.json", big, {});
    CHECK(t.summary.replicated_ranks == 4095);
    CHECK(t.graph.op_count() == 11 * 4096);
    CHECK(t.graph.kept_ranks().size() == 1);
    CHECK(tally(t.summary.other, "ranks 1-4095 (no file): replicated from rank 0") == 4095);
  }
  {
    // World of 4 and a group of two: what ranks 2 and 3 run is unknown.
    TempDir d;
    d.write("a.json", replace(rank0, R"("world_size": 2)", R"("world_size": 4)"));
    CHECK(error_of(d).find("ranks 1-3 of 4 have no trace file, and rank 0") != std::string::npos);
  }
  {
    // Two of three ranks, different from each other: which one rank 2 copies is unknown.
    TempDir d;
    const std::string world3 = replace(replace(rank0, R"("world_size": 2)", R"("world_size": 3)"), R"("[0, 1]")", R"("[0, 1, 2]")");
    d.write("a.json", replace(world3, R"("Group size": 2)", R"("Group size": 3)"));
    d.write("b.json", replace(replace(replace(world3, R"("rank": 0,)", R"("rank": 1,)"), R"("Group size": 2)", R"("Group size": 3)"),
                              R"("dur": 30)", R"("dur": 31)"));
    CHECK(error_of(d).find("rank 2 of 3 has no trace file, and the present ranks are not copies of one another (ranks 0, 1 differ)") !=
          std::string::npos);
  }
  {
    TempDir d;
    CHECK_THROWS_AS((void)trace_files(TraceFormat::kineto, d.path.string()), Error);
  }
  {
    // A gzip file cut short: zlib's error, not the JSON parser's.
    TempDir d;
    const std::string gz = slurp(kData + "hta_event_sync.json.gz");
    d.write("cut.json.gz", gz.substr(0, gz.size() / 2));
    try {
      (void)import_trace(TraceFormat::kineto, (d.path / "cut.json.gz").string(), {});
      FAIL("expected an error");
    } catch (const Error& e) {
      CHECK(e.kind() == ErrorKind::io);
      CHECK(std::string(e.what()).find("cannot read trace '" + (d.path / "cut.json.gz").string() + "'") != std::string::npos);
    }
  }
}
