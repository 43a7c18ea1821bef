#include "calib/table_text.hpp"

#include <cctype>
#include <charconv>
#include <cmath>

#include "inflect/core/error.hpp"

namespace inflect::calib::detail {

std::vector<Line> split_lines(std::string_view text) {
  if (text.substr(0, 3) == "\xEF\xBB\xBF") text.remove_prefix(3);
  std::vector<Line> lines;
  int number = 0;
  while (!text.empty()) {
    const std::size_t end = text.find('\n');
    std::string_view line = text.substr(0, end);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    lines.push_back(Line{++number, line});
    if (end == std::string_view::npos) break;
    text.remove_prefix(end + 1);
  }
  return lines;
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

bool starts_with_icase(std::string_view s, std::string_view prefix) {
  return s.size() >= prefix.size() && lower(s.substr(0, prefix.size())) == lower(prefix);
}

std::vector<std::string_view> split_ws(std::string_view s) {
  std::vector<std::string_view> out;
  std::size_t i = 0;
  while (i < s.size()) {
    while (i < s.size() && std::isspace(static_cast<unsigned char>(s[i]))) ++i;
    const std::size_t start = i;
    while (i < s.size() && !std::isspace(static_cast<unsigned char>(s[i]))) ++i;
    if (i > start) out.push_back(s.substr(start, i - start));
  }
  return out;
}

std::vector<std::string> split_csv(std::string_view line, char sep, bool brackets, std::string_view file, int line_no) {
  std::vector<std::string> fields;
  std::string field;
  bool quoted = false;  // inside "..."
  int depth = 0;        // inside [...] when brackets
  for (std::size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    if (quoted) {
      if (c == '"' && i + 1 < line.size() && line[i + 1] == '"') {
        field += '"';
        ++i;
      } else if (c == '"') {
        quoted = false;
      } else {
        field += c;
      }
    } else if (c == '"' && trim(field).empty()) {
      field.clear();
      quoted = true;
    } else if (c == sep && depth == 0) {
      fields.emplace_back(trim(field));
      field.clear();
    } else {
      if (brackets && c == '[') ++depth;
      if (brackets && c == ']' && depth > 0) --depth;
      field += c;
    }
  }
  if (quoted) fail(file, line_no, "a quoted field is not closed (\" without its closing \")");
  fields.emplace_back(trim(field));
  return fields;
}

ColumnName column_name(std::string_view header) {
  std::string h = lower(trim(header));
  ColumnName c{h, ""};
  if (h.size() >= 2 && (h.back() == ']' || h.back() == ')')) {
    const char open = h.back() == ']' ? '[' : '(';
    const std::size_t at = h.rfind(open);
    if (at != std::string::npos) {
      c.unit = std::string(trim(std::string_view(h).substr(at + 1, h.size() - at - 2)));
      c.base = std::string(trim(std::string_view(h).substr(0, at)));
    }
  }
  return c;
}

std::optional<double> parse_number(std::string_view s) {
  if (!s.empty() && s.front() == '+') {
    s.remove_prefix(1);
    if (s.empty() || s.front() == '-') return std::nullopt;
  }
  if (s.empty()) return std::nullopt;
  double v = 0;
  const auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || ptr != s.data() + s.size() || !std::isfinite(v)) return std::nullopt;
  return v;
}

std::optional<long long> parse_integer(std::string_view s) {
  if (s.empty()) return std::nullopt;
  long long v = 0;
  const auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || ptr != s.data() + s.size()) return std::nullopt;
  return v;
}

std::string quote(std::string_view s) {
  std::string out = "'";
  const std::size_t n = s.size() > 40 ? 37 : s.size();
  for (std::size_t i = 0; i < n; ++i) out += std::isprint(static_cast<unsigned char>(s[i])) ? s[i] : '?';
  if (n < s.size()) out += "...";
  return out + "'";
}

void fail(std::string_view file, int line, std::string message) {
  throw core::Error(core::ErrorKind::input, std::move(message), core::SourceLocation{std::string(file), line, 0, ""});
}

}  // namespace inflect::calib::detail
