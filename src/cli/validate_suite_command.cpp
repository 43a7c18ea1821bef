// `inflect validate-suite`: every published run in a folder against its prediction, and the MAPE
// per framework, precision and device (docs/validation.md).
#include <fmt/format.h>

#include <cmath>
#include <cstdio>
#include <nlohmann/json.hpp>

#include "cli/commands.hpp"
#include "inflect/core/error.hpp"
#include "inflect/io/validation_suite.hpp"

namespace inflect::cli {

int cmd_validate_suite(const ValidateSuiteArgs& a) {
  if (a.gate_percent && !(*a.gate_percent >= 0 && std::isfinite(*a.gate_percent)))
    throw core::Error(core::ErrorKind::input, fmt::format("--gate {}: expected a percentage >= 0", *a.gate_percent));
  const auto files = io::validation_case_files(a.dir);
  const auto results = io::run_validation_suite(files, {a.jobs, a.fidelity});
  const io::SuiteSummary summary = io::summarize(results);
  std::vector<const io::CaseResult*> outside;
  if (a.gate_percent) outside = io::outside_gate(results, *a.gate_percent / 100);

  if (a.json) {
    nlohmann::ordered_json j = io::suite_json(results, summary);
    j["fidelity"] = std::string(plan::fidelity_name(a.fidelity));
    if (a.gate_percent) {
      nlohmann::ordered_json g = nlohmann::ordered_json::object();
      g["percent"] = *a.gate_percent;
      nlohmann::ordered_json ids = nlohmann::ordered_json::array();
      for (const auto* r : outside) ids.push_back(r->c.case_id);
      g["outside"] = std::move(ids);
      j["gate"] = std::move(g);
    }
    std::printf("%s\n", j.dump(2).c_str());
  } else {
    std::printf("validation suite: %zu cases in %s (%s fidelity; a case whose memory does not fit is simulated anyway)\n\n",
                results.size(), a.dir.c_str(), std::string(plan::fidelity_name(a.fidelity)).c_str());
    std::printf("%s", io::format_suite(results, summary).c_str());
    if (a.gate_percent) {
      std::string ids;
      for (const auto* r : outside) ids += fmt::format("{}{}", ids.empty() ? "" : ", ", r->c.case_id);
      std::printf("\ngate +-%g%%: %s\n", *a.gate_percent,
                  outside.empty() ? "every case inside" : fmt::format("{} of {} cases outside: {}", outside.size(), results.size(), ids).c_str());
    }
  }
  return outside.empty() ? kExitOk : kExitNotSimulated;  // the gate failed: 3, as README.md "Exit codes" says
}

}  // namespace inflect::cli
