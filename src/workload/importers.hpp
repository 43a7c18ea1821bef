#pragma once
// The importers behind workload::import_trace (trace_import.hpp), one per format; private to the
// workload layer.
#include <string>
#include <vector>

#include "inflect/workload/trace_import.hpp"

namespace inflect::workload {

ImportedTrace import_chakra(const std::string& path, const TraceImportOptions& options);
ImportedTrace import_chakra_text(const std::string& name, const std::string& text, const TraceImportOptions& options);
std::vector<std::string> chakra_files(const std::string& path);

ImportedTrace import_kineto(const std::string& path, const TraceImportOptions& options);
ImportedTrace import_kineto_text(const std::string& name, const std::string& text, const TraceImportOptions& options);
std::vector<std::string> kineto_files(const std::string& path);

}  // namespace inflect::workload
