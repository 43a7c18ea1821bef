// training.framework: a framework sets the defaults of the keys it governs, from its public
// source (plan/framework.cpp); a key the experiment writes always wins. docs/frameworks.md's table
// is this test's output.
#include <doctest/doctest.h>

#include <fmt/format.h>

#include <string>

#include "doc_block.hpp"
#include "inflect/io/experiment_loader.hpp"
#include "inflect/io/options.hpp"
#include "inflect/plan/framework.hpp"

namespace {

inflect::plan::Experiment parse(const std::string& extra_training, const std::string& extra_parallel = "") {
  inflect::io::set_project_root(INFLECT_SOURCE_DIR);
  const std::string yaml = "name: fw\ncluster: {topology: topologies/dgx-a100.yaml, nodes: 4}\nmodel: {preset: gpt3-175b, layers: 8}\n"
                           "training:\n  global_batch: 32\n" +
                           extra_training + "parallel:\n  tp: 8\n  pp: 4\n" + extra_parallel;
  return inflect::io::parse_experiment(inflect::io::load_yaml_string(yaml, "fw.yaml"), INFLECT_SOURCE_DIR);
}

}  // namespace

TEST_CASE("a framework's defaults apply, and a key the experiment writes wins") {
  using inflect::plan::Framework;
  const auto none = parse("");
  CHECK(none.training.framework == Framework::none);
  CHECK(none.training.attention == "default");
  CHECK_FALSE(none.parallel.pp_scatter_gather);
  CHECK(none.training.optimizer.master == 4);

  const auto lm = parse("  framework: megatron-lm-2021\n");
  CHECK(lm.training.attention == "unfused");
  CHECK(lm.parallel.pp_scatter_gather);
  CHECK_FALSE(lm.parallel.overlap_param_gather);
  const auto lm_flash = parse("  framework: megatron-lm-2021\n  attention: default\n", "  pp_scatter_gather: false\n");
  CHECK(lm_flash.training.attention == "default");
  CHECK_FALSE(lm_flash.parallel.pp_scatter_gather);

  const auto nemo = parse("  framework: nemo\n", "  zero: 1\n");
  CHECK(nemo.parallel.overlap_param_gather);
  CHECK(nemo.training.optimizer.master == 2);  // 16-bit remainders
  CHECK(nemo.training.optimizer.remainder);
  const auto nemo32 = parse("  framework: nemo\n  optimizer: {master_weights: fp32}\n", "  zero: 1\n");
  CHECK(nemo32.training.optimizer.master == 4);

  const auto titan = parse("  framework: torchtitan\n");
  CHECK(titan.parallel.zero == 3);
  CHECK(titan.parallel.selective_recompute == inflect::plan::SelectiveRecompute::every_other_matmul);
  CHECK(parse("  framework: torchtitan\n", "  zero: 1\n").parallel.zero == 1);

  // Megatron-DeepSpeed: 8 layers + embedding + head over 4 stages: 2, 3, 2, 1 (unless given).
  const auto mds = parse("  framework: megatron-deepspeed\n");
  CHECK(mds.parallel.layers_per_stage == std::vector<int>{2, 3, 2, 1});
  CHECK(parse("  framework: megatron-deepspeed\n", "  layers_per_stage: [2, 2, 2, 2]\n").parallel.layers_per_stage ==
        std::vector<int>{2, 2, 2, 2});

  // Gradients: fp32 unless said; bf16 halves them.
  CHECK(parse("  optimizer: {gradients: bf16}\n").training.optimizer.gradient == 2);
  CHECK(parse("  precision: fp16\n").training.optimizer.gradient == 2);
}

TEST_CASE("every framework default names a key of the option table and parses as it") {
  for (const std::string& name : inflect::plan::framework_names()) {
    const auto f = *inflect::plan::framework_from_name(name);
    for (const auto& d : inflect::plan::framework_defaults(f)) {
      INFO(name, " ", d.key);
      CHECK(inflect::io::find_option(d.key) != nullptr);
      CHECK_FALSE(d.source.empty());
    }
    if (f == inflect::plan::Framework::megatron_deepspeed) continue;  // its default split needs pp | layers+2: covered above
    (void)parse(fmt::format("  framework: {}\n", name));  // every value goes through the key's checks
  }
}

TEST_CASE("docs/frameworks.md lists each framework's defaults as the code has them") {
  std::string table = "| framework | key | value | source |\n|---|---|---|---|\n";
  for (const std::string& name : inflect::plan::framework_names()) {
    const auto f = *inflect::plan::framework_from_name(name);
    for (const auto& d : inflect::plan::framework_defaults(f))
      table += fmt::format("| {} | `{}` | `{}` | {} |\n", name, d.key, d.value, d.source);
  }
  inflect::test::check_doc_block(std::string(INFLECT_SOURCE_DIR) + "/docs/frameworks.md", "framework-defaults", table);
}
