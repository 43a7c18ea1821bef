#pragma once
// The `inflect` subcommands. Each returns the process exit code: 0 success, 2 bad input (any
// core::Error of kind input or io, printed as "inflect: error: file:line:col: key: message").
#include <string>

namespace inflect::cli {

struct RunArgs {
  std::string experiment;
  std::string out_dir = "out";
  bool out_given = false;
  bool json = false;
  std::string fidelity = "symmetric";
  bool unfused = false;
  int trace_ranks = 64;
  bool no_trace = false;
  bool oneline = false;
  bool ignore_memory = false;
};

int cmd_run(const RunArgs& a);
int cmd_validate(const std::string& experiment);
int cmd_devices();
int cmd_export(const std::string& experiment, const std::string& out, const std::string& fidelity);
int cmd_bench(bool quick);

}  // namespace inflect::cli
