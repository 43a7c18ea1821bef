#include "inflect/core/error.hpp"

#include <fmt/format.h>

namespace inflect::core {

Error::Error(ErrorKind kind, std::string message, SourceLocation where)
    : std::runtime_error(message), kind_(kind), message_(std::move(message)), where_(std::move(where)) {}

std::string format_error(const Error& e) {
  std::string out;
  const auto& w = e.where();
  if (!w.file.empty()) {
    out += w.file;
    if (w.line > 0) out += fmt::format(":{}", w.line);
    if (w.column > 0) out += fmt::format(":{}", w.column);
    out += ": ";
  }
  if (!w.key_path.empty()) out += w.key_path + ": ";
  out += e.message();
  return out;
}

void fail_invariant(const char* what) {
  throw Error(ErrorKind::internal, fmt::format("internal error: invariant violated: {}", what));
}

}  // namespace inflect::core
