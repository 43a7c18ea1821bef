#pragma once
// The importers behind workload::import_trace (trace_import.hpp), one per format; private to the
// workload layer.
#include <string>
#include <vector>

#include "inflect/workload/trace_import.hpp"

namespace inflect::workload {

/// A trace file's bytes, as they are (core::Error io when it cannot be read): the workload layer
/// cannot use io::read_text_file (the loader already read each file through it, for provenance).
std::string read_trace_file(const std::string& path);

ImportedTrace import_chakra(const std::string& path, const TraceImportOptions& options);
ImportedTrace import_chakra_text(const std::string& name, const std::string& text, const TraceImportOptions& options);
std::vector<std::string> chakra_files(const std::string& path);

ImportedTrace import_kineto(const std::string& path, const TraceImportOptions& options);
ImportedTrace import_kineto_text(const std::string& name, const std::string& text, const TraceImportOptions& options);
std::vector<std::string> kineto_files(const std::string& path);

}  // namespace inflect::workload
