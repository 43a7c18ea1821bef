#include "inflect/core/error.hpp"
#include "workload/importers.hpp"

namespace inflect::workload {

ImportedTrace import_chakra(const std::string& path, const TraceImportOptions&) {
  throw core::Error(core::ErrorKind::input, "chakra import is not built yet: " + path);
}

std::vector<std::string> chakra_files(const std::string& path) { return {path}; }

}  // namespace inflect::workload
