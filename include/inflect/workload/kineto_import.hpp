#pragma once
// PyTorch profiler (Kineto) traces held in memory, for the fuzz target and tests; files go through
// workload::import_trace(TraceFormat::kineto, ...) (trace_import.hpp, docs/traces.md).
#include <string>
#include <string_view>

#include "inflect/workload/trace_import.hpp"

namespace inflect::workload {

/// Imports one rank's Kineto Chrome-trace JSON held in `text`, named `name` in errors, as
/// import_trace does a one-file trace.
ImportedTrace import_kineto_text(std::string_view text, const std::string& name, const TraceImportOptions& options);

}  // namespace inflect::workload
