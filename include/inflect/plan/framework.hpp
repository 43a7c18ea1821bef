#pragma once
// Training frameworks and the defaults each takes from its public source (docs/frameworks.md).
// `training.framework:` names one; every key it governs can still be set in the experiment, which
// wins. A framework only sets defaults: it adds no mechanism of its own.
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace inflect::plan {

enum class Framework : unsigned char { none, megatron_lm_2021, megatron_core, nemo, torchtitan, llm_foundry, megatron_deepspeed };

/// "none", "megatron-lm-2021", "megatron-core", "nemo", "torchtitan", "llm-foundry", "megatron-deepspeed".
std::string_view framework_name(Framework f);
std::optional<Framework> framework_from_name(std::string_view name);
std::vector<std::string> framework_names();

/// One key a framework sets: the experiment key, its value as YAML text, and where the value
/// comes from in the framework's public source.
struct FrameworkDefault {
  std::string_view key;
  std::string_view value;
  std::string_view source;
};

/// The keys `f` sets, in the option table's spelling (training.attention, parallel.*, ...).
/// Empty for Framework::none.
const std::vector<FrameworkDefault>& framework_defaults(Framework f);

/// The value `f` gives `key`, or nullopt when it leaves the key to its own default.
std::optional<std::string_view> framework_default(Framework f, std::string_view key);

}  // namespace inflect::plan
