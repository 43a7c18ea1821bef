#pragma once
// One error family with context (after DuckDB's typed exceptions and SimGrid's "FILE:LINE").
//
// An Error knows its kind and where it came from. Input errors (anything a user file or flag can
// cause) map to exit code 2 in the CLI; internal errors are bugs.
#include <stdexcept>
#include <string>

namespace inflect::core {

enum class ErrorKind { input, io, internal };

/// Where in a user file an error points: file, 1-based line and column (0 = unknown), YAML key path.
struct SourceLocation {
  std::string file;
  int line = 0;
  int column = 0;
  std::string key_path;
};

class Error : public std::runtime_error {
 public:
  Error(ErrorKind kind, std::string message, SourceLocation where = {});
  ErrorKind kind() const { return kind_; }
  const SourceLocation& where() const { return where_; }
  /// The bare message without location.
  const std::string& message() const { return message_; }

 private:
  ErrorKind kind_;
  std::string message_;
  SourceLocation where_;
};

/// Formats "file:line:col: key: message" leaving out the parts that are unknown.
std::string format_error(const Error& e);

/// Throws an internal error naming `what` (the cold half of check_invariant).
[[noreturn]] void fail_invariant(const char* what);
/// Throws an internal error when `cond` is false: asserts are for bugs only, never for user input.
/// Inline so that checks on hot paths cost a compare, not a call.
inline void check_invariant(bool cond, const char* what) {
  if (!cond) [[unlikely]] fail_invariant(what);
}

}  // namespace inflect::core
