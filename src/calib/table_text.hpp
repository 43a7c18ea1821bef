#pragma once
// Private to calib: what the trace parsers share. Lines with their numbers, trimming, numbers read
// strictly (the whole field, finite), CSV fields with quotes, and the one way every parser fails: a
// core::Error of kind input located at file:line (fuzz/fuzz_targets.hpp's contract).
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace inflect::calib::detail {

/// One line of a file: its 1-based number and its text without the line end (\n or \r\n).
struct Line {
  int number = 0;
  std::string_view text;
};

/// The lines of `text` (a leading UTF-8 byte-order mark dropped). An empty text has no lines.
std::vector<Line> split_lines(std::string_view text);

std::string_view trim(std::string_view s);
std::string lower(std::string_view s);
bool starts_with_icase(std::string_view s, std::string_view prefix);
/// Whitespace-separated tokens.
std::vector<std::string_view> split_ws(std::string_view s);

/// The fields of one CSV line: separated by `sep`, a field in double quotes may hold `sep` and
/// `""` for a quote; whitespace around each field is trimmed. With `brackets`, a `sep` inside
/// [...] does not split either (amd-smi writes its lists unquoted). An unclosed quote is an error.
std::vector<std::string> split_csv(std::string_view line, char sep, bool brackets, std::string_view file, int line_no);

/// A CSV column's name split from its unit: "Time [us]" and "time (us)" are {"time", "us"}, lower-case;
/// a name without a bracketed unit has an empty unit.
struct ColumnName {
  std::string base;
  std::string unit;
};
ColumnName column_name(std::string_view header);

/// A finite number that is the whole of `s` (decimal or exponent form, an optional leading '+').
std::optional<double> parse_number(std::string_view s);
/// An integer that is the whole of `s` (optional '-'), within long long.
std::optional<long long> parse_integer(std::string_view s);

/// `s` in single quotes for a message, at most 40 characters, anything unprintable as '?'.
std::string quote(std::string_view s);

/// Throws core::Error(input) at file:line (line 0: the file as a whole).
[[noreturn]] void fail(std::string_view file, int line, std::string message);

}  // namespace inflect::calib::detail
