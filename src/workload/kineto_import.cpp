#include "workload/importers.hpp"

#include "inflect/core/error.hpp"

namespace inflect::workload {

ImportedTrace import_kineto(const std::string& path, const TraceImportOptions&) {
  throw core::Error(core::ErrorKind::input, "kineto import is not built yet: " + path);
}

ImportedTrace import_kineto_text(const std::string& name, const std::string&, const TraceImportOptions&) {
  throw core::Error(core::ErrorKind::input, "kineto import is not built yet: " + name);
}

std::vector<std::string> kineto_files(const std::string& path) { return {path}; }

}  // namespace inflect::workload
