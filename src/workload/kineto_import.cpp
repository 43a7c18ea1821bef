#include "workload/importers.hpp"

#include "inflect/core/error.hpp"

namespace inflect::workload {

ImportedTrace import_kineto(const std::string& path, const TraceImportOptions&) {
  throw core::Error(core::ErrorKind::input, "kineto import is not built yet: " + path);
}

std::vector<std::string> kineto_files(const std::string& path) { return {path}; }

}  // namespace inflect::workload
