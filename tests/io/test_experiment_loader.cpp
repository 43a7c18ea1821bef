// The experiment loader on valid files: defaults come from the option table, derived values are
// derived, overrides override; and the option table itself is consistent with plan::Experiment.
#include <doctest/doctest.h>

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <string>

#include "inflect/core/error.hpp"
#include "inflect/io/device_catalog.hpp"
#include "inflect/io/experiment_loader.hpp"
#include "inflect/io/options.hpp"

namespace {

namespace fs = std::filesystem;
using inflect::io::load_yaml_string;
using inflect::io::parse_experiment;

inflect::plan::Experiment parse(const std::string& yaml) {
  inflect::io::set_project_root(INFLECT_SOURCE_DIR);
  return parse_experiment(load_yaml_string(yaml, "test.yaml"), INFLECT_SOURCE_DIR);
}

std::string failure(const std::string& yaml) {
  try {
    (void)parse(yaml);
  } catch (const inflect::core::Error& e) {
    return inflect::core::format_error(e);
  }
  return "<no error>";
}

const char* kGpt3 = R"(
name: gpt3-175b-a100
cluster:
  topology: topologies/dgx-a100.yaml
  nodes: 128
model:
  preset: gpt3-175b
training:
  seq_len: 2048
  global_batch: 1536
  micro_batch: 1
  precision: bf16
parallel:
  tp: 8
  pp: 16
  dp: 8
  cp: 1
  sequence_parallel: true
  schedule: 1f1b
  zero: 1
  recompute: full
  order: [tp, cp, pp, dp]
  grad_bucket: 80MB
  overlap_grad_reduce: true
validation:
  anything: [goes, here]
)";

}  // namespace

TEST_CASE("experiment: the documented example loads with every field") {
  auto e = parse(kGpt3);
  CHECK(e.name == "gpt3-175b-a100");
  CHECK(e.file == "test.yaml");
  CHECK(e.cluster.nodes == 128);
  CHECK(e.cluster.devices() == 128 * e.cluster.topology.devices_per_node);
  CHECK(e.cluster.device.name == e.cluster.topology.device);
  REQUIRE(e.workload.model.has_value());
  CHECK(e.workload.model->layers == 96);
  CHECK(e.workload.trace_file.empty());
  CHECK(e.training.seq_len == 2048);
  CHECK(e.training.global_batch == 1536);
  CHECK(e.training.micro_batch == 1);
  CHECK(e.training.precision == inflect::core::Precision::bf16);
  CHECK(e.parallel.tp == 8);
  CHECK(e.parallel.pp == 16);
  CHECK(e.parallel.dp == 8);
  CHECK(e.parallel.cp == 1);
  CHECK(e.parallel.sequence_parallel);
  CHECK(e.parallel.schedule == inflect::plan::Schedule::one_f_one_b);
  CHECK(e.parallel.zero == 1);
  CHECK(e.parallel.recompute == inflect::plan::Recompute::full);
  CHECK(e.parallel.order == std::vector<inflect::plan::Dim>{inflect::plan::Dim::tp, inflect::plan::Dim::cp,
                                                            inflect::plan::Dim::pp, inflect::plan::Dim::dp});
  CHECK(e.parallel.grad_bucket_bytes.value() == doctest::Approx(80e6));
  CHECK(e.parallel.overlap_grad_reduce);
}

TEST_CASE("experiment: left-out keys take the option table's defaults") {
  auto e = parse(R"(
cluster: {topology: topologies/dgx-a100.yaml, nodes: 2}
model: {preset: llama3-8b}
training: {global_batch: 64}
)");
  // name defaults to the file name without its extension
  CHECK(e.name == "test");
  // seq_len defaults to the model's
  REQUIRE(e.workload.model.has_value());
  CHECK(e.training.seq_len == e.workload.model->seq_len);
  CHECK(e.training.micro_batch == 1);
  CHECK(e.training.precision == inflect::core::Precision::bf16);
  CHECK(e.parallel.tp == 1);
  CHECK(e.parallel.pp == 1);
  CHECK(e.parallel.cp == 1);
  // dp = devices / (tp*pp*cp) = 2 nodes * 8 / 1 = 16
  CHECK(e.parallel.dp == 2 * e.cluster.topology.devices_per_node);
  CHECK_FALSE(e.parallel.sequence_parallel);
  CHECK(e.parallel.schedule == inflect::plan::Schedule::one_f_one_b);
  CHECK(e.parallel.zero == 0);
  CHECK(e.parallel.recompute == inflect::plan::Recompute::none);
  CHECK(e.parallel.grad_bucket_bytes.value() == doctest::Approx(80e6));
  CHECK(e.parallel.overlap_grad_reduce);
  // The table's defaults and the struct's agree, so code that builds an Experiment by hand gets
  // the same plan as a file that leaves the keys out.
  inflect::plan::ParallelPlan def;
  CHECK(e.parallel.order == def.order);
  CHECK(e.parallel.grad_bucket_bytes.value() == doctest::Approx(def.grad_bucket_bytes.value()));
  CHECK(e.parallel.overlap_grad_reduce == def.overlap_grad_reduce);
  CHECK(e.parallel.zero == def.zero);
  CHECK(e.parallel.recompute == def.recompute);
  CHECK(e.parallel.sequence_parallel == def.sequence_parallel);
}

TEST_CASE("experiment: cluster.variability is off unless given, and reads every key") {
  auto off = parse(R"(
cluster: {topology: topologies/dgx-h100.yaml, nodes: 2}
model: {preset: llama3-8b}
training: {global_batch: 64}
)");
  CHECK_FALSE(off.cluster.variability.any());
  auto e = parse(R"(
cluster:
  topology: topologies/dgx-h100.yaml
  nodes: 2
  variability:
    gpu_speed_spread: 0.02
    kernel_jitter: 0.01
    seed: 7
    slow: [{device: 9, time_factor: 1.1}, {local_rank: 3, time_factor: 0.95}]
model: {preset: llama3-8b}
training: {global_batch: 64}
)");
  const auto& v = e.cluster.variability;
  CHECK(v.any());
  CHECK(v.gpu_speed_spread == 0.02);
  CHECK(v.kernel_jitter == 0.01);
  CHECK(v.seed == 7);
  REQUIRE(v.slow.size() == 2);
  CHECK(v.slow[0].device == 9);
  CHECK(v.slow[0].time_factor == 1.1);
  CHECK(v.slow[1].local_rank == 3);
  CHECK(v.slow[1].device == -1);
  // A seed alone turns nothing on: every figure is 0 unless given (docs/variability.md).
  auto seed_only = parse(R"(
cluster: {topology: topologies/dgx-h100.yaml, nodes: 2, variability: {seed: 3}}
model: {preset: llama3-8b}
training: {global_batch: 64}
)");
  CHECK_FALSE(seed_only.cluster.variability.any());
}

TEST_CASE("experiment: training.diloco is absent unless given, and reads every key") {
  auto off = parse(R"(
cluster: {topology: topologies/dgx-h100.yaml, nodes: 2}
model: {preset: llama3-8b}
training: {global_batch: 64}
)");
  CHECK_FALSE(off.training.diloco.has_value());
  auto e = parse(R"(
cluster: {topology: topologies/dgx-h100.yaml, nodes: 2}
model: {preset: llama3-8b}
training:
  global_batch: 64
  diloco: {sync_every: 100, workers: 2, compression: topk, topk_fraction: 0.05, fragments: 4, token_multiplier: 1.2}
)");
  REQUIRE(e.training.diloco.has_value());
  const auto& d = *e.training.diloco;
  CHECK(d.sync_every == 100);
  CHECK(d.workers == 2);
  CHECK(d.compression == inflect::plan::OuterCompression::topk);
  CHECK(d.topk_fraction == 0.05);
  CHECK(d.fragments == 4);
  CHECK(d.token_multiplier == 1.2);
  CHECK(d.token_multiplier_given);
  // Defaults: no compression, one fragment (blocking), a multiplier of 1 that was not given.
  auto plain = parse(R"(
cluster: {topology: topologies/dgx-h100.yaml, nodes: 2}
model: {preset: llama3-8b}
training: {global_batch: 64, diloco: {sync_every: 10, workers: 16}}
)");
  CHECK(plain.training.diloco->compression == inflect::plan::OuterCompression::none);
  CHECK(plain.training.diloco->fragments == 1);
  CHECK(plain.training.diloco->token_multiplier == 1);
  CHECK_FALSE(plain.training.diloco->token_multiplier_given);
}

TEST_CASE("experiment: derived dp, gpipe, selective, custom order, bucket 0") {
  auto e = parse(R"(
cluster: {topology: topologies/dgx-a100.yaml, nodes: 4}
model: {preset: gpt3-175b}
training: {global_batch: 32, micro_batch: 2}
parallel: {tp: 4, pp: 8, schedule: gpipe, recompute: selective, order: [tp, pp, cp, dp], grad_bucket: 0,
           overlap_grad_reduce: false}
)");
  // 4 nodes * 8 = 32 devices; tp*pp*cp = 32 -> dp 1
  CHECK(e.parallel.dp == 1);
  CHECK(e.parallel.schedule == inflect::plan::Schedule::gpipe);
  CHECK(e.parallel.recompute == inflect::plan::Recompute::selective);
  CHECK(e.parallel.order[1] == inflect::plan::Dim::pp);
  CHECK(e.parallel.grad_bucket_bytes.value() == 0);
  CHECK_FALSE(e.parallel.overlap_grad_reduce);
}

TEST_CASE("experiment: preset plus overrides reaches the plan checks") {
  // 96 layers of the preset are divisible by pp=6; with 48 layers overridden pp=5 is not, and the
  // message names the overridden count.
  CHECK_NOTHROW(parse(R"(
cluster: {topology: topologies/dgx-a100.yaml, nodes: 6}
model: {preset: gpt3-175b}
training: {global_batch: 8}
parallel: {tp: 8, pp: 6}
)"));
  std::string msg = failure(R"(
cluster: {topology: topologies/dgx-a100.yaml, nodes: 5}
model: {preset: gpt3-175b, layers: 48}
training: {global_batch: 8}
parallel: {tp: 8, pp: 5}
)");
  CHECK(msg.find("pp=5 does not divide the 48 layers") != std::string::npos);
  CHECK(msg.find("test.yaml:5:") == 0);  // the line of parallel: (pp is on it)
}

TEST_CASE("experiment: a plan problem is reported at the line of its key, else of its section") {
  // plan::validate finds the problem; the loader points at the key it names. sequence_parallel
  // with seq_len/cp = 2047 on tp 8 (a rule the compiler alone used to check, unlocated): line 11,
  // where sequence_parallel is written, column 22 (its value).
  const char* yaml = R"(name: located
cluster:
  topology: topologies/dgx-a100.yaml
  nodes: 1
model:
  preset: gpt-1.7b
training:
  seq_len: 2047
  global_batch: 8
parallel:
  sequence_parallel: true
  tp: 8
)";
  try {
    (void)parse(yaml);
    FAIL("loaded a plan whose sequence does not split over tp");
  } catch (const inflect::core::Error& e) {
    CHECK(e.where().line == 11);
    CHECK(e.where().column == 22);
    CHECK(e.where().key_path == "parallel.sequence_parallel");
    CHECK(e.message() == "sequence parallelism needs seq_len/cp (2047) divisible by tp (8)");
  }
  // tp*pp*cp = 3 does not divide 8 devices: the problem's key is the parallel section itself (dp is
  // derived), so it points at the section's map, which starts on line 4 with pp.
  const std::string msg = failure(R"(
cluster: {topology: topologies/dgx-a100.yaml, nodes: 1}
model: {preset: gpt-1.7b}
parallel:
  pp: 3
training: {global_batch: 8}
)");
  CHECK(msg.find("test.yaml:5:") == 0);
  CHECK(msg.find("does not divide the cluster's 8 devices (1 nodes * 8 per node), so dp cannot be derived") != std::string::npos);
  // With the degrees given as a mesh, parallel.tp was not read: a tp problem points at the nearest
  // section written, parallel (line 5).
  const std::string mesh = failure(R"(
cluster: {topology: topologies/dgx-a100.yaml, nodes: 1}
model: {preset: gpt-1.7b}
training: {global_batch: 8}
parallel:
  mesh: ["tp 16"]
)");
  CHECK(mesh.find("test.yaml:6:") == 0);
  CHECK(mesh.find("tp=16 exceeds the 8 devices") != std::string::npos);
}

TEST_CASE("experiment: a trace replay needs no model, training or model checks") {
  fs::path dir = fs::temp_directory_path() / ("inflect_test_experiment_trace-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  { std::ofstream(dir / "graph.json") << "{}"; }
  { std::ofstream(dir / "exp.yaml") << "cluster: {topology: topologies/dgx-a100.yaml, nodes: 1}\n"
                                        "workload: {trace: graph.json}\nparallel: {tp: 8}\n"; }
  inflect::io::set_project_root(INFLECT_SOURCE_DIR);
  auto e = inflect::io::load_experiment((dir / "exp.yaml").string());
  CHECK_FALSE(e.workload.model.has_value());
  // resolved next to the experiment first
  CHECK(fs::equivalent(e.workload.trace_file, dir / "graph.json"));
  CHECK(e.parallel.dp == e.cluster.topology.devices_per_node / 8);
  CHECK(e.training.global_batch == 0);
  fs::remove_all(dir);
}

TEST_CASE("experiment: cluster.device overrides the topology's device") {
  std::string yaml = std::string(kGpt3);
  yaml.replace(yaml.find("  nodes: 128"), 12, "  nodes: 128\n  device: a100-sxm-80g");
  auto e = parse(yaml);
  CHECK(e.cluster.device.name == "a100-sxm-80g");
  // an unknown name is an input error at cluster.device with the line of the key
  yaml.replace(yaml.find("device: a100-sxm-80g"), 20, "device: nosuch-gpu");
  std::string msg = failure(yaml);
  CHECK(msg.find("test.yaml:6:") == 0);
  CHECK(msg.find("cluster.device") != std::string::npos);
  CHECK(msg.find("nosuch-gpu") != std::string::npos);
}

TEST_CASE("experiment: training.attention selects one of the device's attention implementations") {
  std::string yaml = std::string(kGpt3);
  yaml.replace(yaml.find("  nodes: 128"), 12, "  nodes: 128\n  device: h100-sxm");
  // Left out: the device's default, and the Experiment keeps the key empty (a later default, e.g.
  // per framework, can fill it).
  auto e = parse(yaml);
  CHECK(e.training.attention == "default");
  CHECK(e.cluster.device.attention == "sdpa-2026");
  yaml.replace(yaml.find("  precision: bf16"), 17, "  precision: bf16\n  attention: fa2");
  e = parse(yaml);
  CHECK(e.training.attention == "fa2");
  CHECK(e.cluster.device.attention == "fa2");
  CHECK(e.cluster.device.attention_efficiency.points.size() ==
        inflect::io::find_device("h100-sxm").with_attention("fa2").attention_efficiency.points.size());
  // A name the device lacks: at the key, listing what it has.
  yaml.replace(yaml.find("attention: fa2"), 14, "attention: fa1");
  const std::string msg = failure(yaml);
  INFO(msg);
  CHECK(msg.find("test.yaml:14:14: training.attention: device 'h100-sxm' has no attention implementation 'fa1'") == 0);
  CHECK(msg.find("it has: sdpa-2026, fa3, cudnn-2024, fa2") != std::string::npos);
}

TEST_CASE("experiment: paths resolve next to the file, then the current directory, then the root") {
  inflect::io::set_project_root("/nonexistent-root");
  auto paths = inflect::io::search_paths("topologies/x.yaml", "/a/b");
  REQUIRE(paths.size() == 3);
  CHECK(paths[0] == "/a/b/topologies/x.yaml");
  CHECK(paths[1] == "topologies/x.yaml");
  CHECK(paths[2] == "/nonexistent-root/topologies/x.yaml");
  CHECK(inflect::io::search_paths("/abs/x.yaml", "/a/b") == std::vector<std::string>{"/abs/x.yaml"});
  inflect::io::set_project_root(INFLECT_SOURCE_DIR);
  CHECK(inflect::io::project_root() == INFLECT_SOURCE_DIR);
  CHECK(inflect::io::find_input_file("topologies/dgx-a100.yaml", "/nonexistent-dir").has_value());
  CHECK_FALSE(inflect::io::find_input_file("topologies/no-such.yaml", "/nonexistent-dir").has_value());
}

TEST_CASE("experiment: unknown keys suggest from the option table and list it") {
  std::string msg = failure(R"(
cluster: {topology: topologies/dgx-a100.yaml, nodes: 128}
model: {preset: gpt3-175b}
training: {global_batch: 1536}
parallel: {tp: 8, pp: 16, recompte: full}
)");
  CHECK(msg.find("unknown key 'recompte' (did you mean 'recompute'?)") != std::string::npos);
  for (const auto* o : inflect::io::options_under("parallel"))
    CHECK_MESSAGE(msg.find(std::string(o->leaf())) != std::string::npos, o->key);
}

TEST_CASE("options: the table is well formed") {
  const auto& table = inflect::io::experiment_options();
  std::set<std::string> keys;
  for (const auto& o : table) {
    INFO(o.key);
    CHECK(keys.insert(std::string(o.key)).second);          // declared once
    CHECK_FALSE(o.description.empty());                     // documented
    if (!o.parent().empty()) CHECK(keys.count(std::string(o.parent())) == 1);  // section first
    if (o.type == inflect::io::OptionType::choice || o.type == inflect::io::OptionType::list)
      CHECK_FALSE(o.allowed.empty());
    if (o.default_kind == inflect::io::DefaultKind::value && o.type != inflect::io::OptionType::section)
      CHECK_FALSE(o.default_value.empty());
    if (o.type == inflect::io::OptionType::integer) CHECK(o.min <= o.max);
  }
  for (const char* k : {"name", "cluster.topology", "cluster.nodes", "cluster.device", "model", "training.seq_len",
                        "training.global_batch", "training.micro_batch", "training.precision", "parallel.tp",
                        "parallel.pp", "parallel.dp", "parallel.cp", "parallel.sequence_parallel", "parallel.schedule",
                        "parallel.zero", "parallel.recompute", "parallel.order", "parallel.grad_bucket",
                        "parallel.overlap_grad_reduce", "workload.trace", "validation"})
    CHECK_MESSAGE(inflect::io::find_option(k) != nullptr, k);
  CHECK(inflect::io::find_option("parallel.nope") == nullptr);
}

TEST_CASE("options: docs/experiment.md holds the current table") {
  // The docs list the table verbatim; regenerate with options_markdown() when a key changes.
  std::ifstream in(std::string(INFLECT_SOURCE_DIR) + "/docs/experiment.md");
  REQUIRE(in);
  std::string doc((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const std::string want = inflect::io::options_markdown();
  if (doc.find(want) == std::string::npos && std::getenv("INFLECT_UPDATE_DOCS")) {
    // The table runs from its header line to the first line that is not a table row.
    const std::size_t b = doc.find("| key | type | unit | default | description |");
    REQUIRE(b != std::string::npos);
    std::size_t e = b;
    while (e < doc.size() && doc[e] == '|') e = doc.find('\n', e) + 1;
    doc.replace(b, e - b, want.back() == '\n' ? want : want + "\n");
    std::ofstream(std::string(INFLECT_SOURCE_DIR) + "/docs/experiment.md", std::ios::binary) << doc;
    MESSAGE("rewrote the option table of docs/experiment.md");
    return;
  }
  INFO("docs/experiment.md's option table differs from io::options_markdown(); INFLECT_UPDATE_DOCS=1 rewrites it");
  CHECK(doc.find(want) != std::string::npos);
}
