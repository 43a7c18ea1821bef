// nccl-tests / rccl-tests text output (nccl-tests src/util.cu writeResultHeader and
// writeBenchmarkLine*): the columns come from the header line when there is one, so the per-iteration
// columns (-I), cputime (-C), timestamps and older layouts without `root` are read by name.
#include <set>

#include "calib/nccl_formats.hpp"

namespace inflect::calib::detail {
namespace {

// The table's columns: the leading ones (size count type redop root), one measure group (time algbw
// busbw #wrong, and i_min i_max i_p99 i_cv% with -I) that appears out-of-place then in-place, and
// the tokens a trailing timestamp takes ("%Y-%m-%d %H:%M:%S": two).
struct Schema {
  std::vector<std::string> lead = {"size", "count", "type", "redop", "root"};
  std::vector<std::string> group = {"time", "algbw", "busbw", "#wrong"};
  std::size_t trailing = 0;
};

bool is_time(const std::string& name) { return name == "time" || name == "cputime"; }

Schema read_header(const std::vector<std::string_view>& tokens, std::string_view file, int line) {
  std::vector<std::string> names;
  for (auto t : tokens) names.push_back(lower(t));
  Schema s;
  std::size_t first_time = 0;
  while (first_time < names.size() && !is_time(names[first_time])) ++first_time;
  if (first_time == names.size())
    fail(file, line,
         "the header has no time (or cputime) column: expected nccl-tests' 'size count type redop root time algbw "
         "busbw #wrong ...'");
  std::size_t second_time = first_time + 1;
  while (second_time < names.size() && !is_time(names[second_time])) ++second_time;
  s.lead.assign(names.begin(), names.begin() + static_cast<std::ptrdiff_t>(first_time));
  s.group.assign(names.begin() + static_cast<std::ptrdiff_t>(first_time),
                 names.begin() + static_cast<std::ptrdiff_t>(second_time));
  bool has_busbw = false;
  for (const auto& g : s.group) has_busbw = has_busbw || g == "busbw";
  if (!has_busbw) fail(file, line, "the header has no busbw column after its time column");
  for (std::size_t i = second_time; i < names.size(); ++i)
    if (names[i] == "timestamp") s.trailing = 2;
  return s;
}

// A token nccl-tests may print for a number it has: a finite number, optionally marked with '*'
// (rccl-tests marks #wrong counts over the threshold), or N/A.
bool is_count_or_na(std::string_view t) {
  if (t == "N/A") return true;
  if (!t.empty() && t.back() == '*') t.remove_suffix(1);
  return parse_number(t).has_value();
}

double non_negative(std::string_view token, const std::string& what, std::string_view file, int line) {
  const auto v = parse_number(token);
  if (!v) fail(file, line, what + " " + quote(token) + " is not a number");
  if (*v < 0) fail(file, line, what + " " + quote(token) + " is negative");
  return *v;
}

NcclMeasure read_group(const std::vector<std::string_view>& t, std::size_t at, const Schema& s, const char* which,
                       std::string_view file, int line) {
  NcclMeasure m;
  for (std::size_t i = 0; i < s.group.size(); ++i) {
    const std::string& name = s.group[i];
    const std::string what = std::string(which) + " " + name;
    const auto token = t[at + i];
    if (is_time(name)) {
      m.time = core::Seconds(non_negative(token, what, file, line) * 1e-6);  // us
    } else if (name == "algbw") {
      m.algbw = core::Bandwidth(non_negative(token, what, file, line) * 1e9);  // GB/s
    } else if (name == "busbw") {
      m.busbw = core::Bandwidth(non_negative(token, what, file, line) * 1e9);
    } else if (!is_count_or_na(token)) {
      fail(file, line, what + " " + quote(token) + " is not a number or N/A");
    }
  }
  return m;
}

NcclRow read_row(const std::vector<std::string_view>& t, const Schema& s, std::string_view file, int line) {
  const std::size_t lead = s.lead.size(), g = s.group.size();
  const std::size_t values = t.size() > lead ? t.size() - lead : 0;
  if (t.size() < lead || (values != g && values != 2 * g && (s.trailing == 0 || values != 2 * g + s.trailing))) {
    std::string cols;
    for (const auto& n : s.group) cols += (cols.empty() ? "" : " ") + n;
    fail(file, line,
         "a row of " + std::to_string(t.size()) + " fields: expected the " + std::to_string(lead) +
             " leading columns, then " + std::to_string(g) + " values (out-of-place) or " + std::to_string(2 * g) +
             " (out-of-place and in-place), " + cols + " each");
  }
  NcclRow row;
  row.line = line;
  for (std::size_t i = 0; i < lead; ++i) {
    const std::string& name = s.lead[i];
    const auto token = t[i];
    if (name == "size" || name == "count") {
      const auto v = parse_integer(token);
      if (!v) fail(file, line, name + " " + quote(token) + " is not a whole number");
      if (*v < 0) fail(file, line, name + " " + quote(token) + " is negative");
      if (name == "size")
        row.size = core::Bytes(static_cast<double>(*v));
      else
        row.count = static_cast<double>(*v);
    } else if (name == "type") {
      row.type = std::string(token);
    } else if (name == "redop") {
      row.redop = std::string(token);
    } else if (name == "root") {
      const auto v = parse_integer(token);
      if (!v || *v < -1 || *v > 1'000'000) fail(file, line, "root " + quote(token) + " is not a rank or -1");
      row.root = static_cast<int>(*v);
    }
  }
  row.out_of_place = read_group(t, lead, s, "out-of-place", file, line);
  if (values >= 2 * g) row.in_place = read_group(t, lead + g, s, "in-place", file, line);
  return row;
}

// Open MPI's `mpirun --tag-output` puts "[job,rank]<stdout>:" before every line; the line is what follows.
std::string_view untagged(std::string_view line) {
  if (line.empty() || line.front() != '[') return line;
  const std::size_t close = line.find("]<std");
  const std::size_t colon = close == std::string_view::npos ? close : line.find(">:", close);
  if (colon == std::string_view::npos || colon > close + 8) return line;
  return line.substr(colon + 2);
}

// A line that starts like a row: its first token an integer (the size), maybe negative.
bool row_like(std::string_view first) {
  if (!first.empty() && first.front() == '-') first.remove_prefix(1);
  if (first.empty()) return false;
  for (char c : first)
    if (c < '0' || c > '9') return false;
  return true;
}

}  // namespace

NcclRead read_nccl_text(const std::vector<Line>& lines, std::string_view file) {
  NcclRead read;
  read.format = std::string(kNcclText);
  Schema schema;
  std::set<long long> device_ranks;  // `#  Rank  3 Group  0 Pid ...` (older: `#   Rank  3 Pid ...`)
  for (const auto& l : lines) {
    read.last_line = l.number;
    std::string_view body = trim(untagged(l.text));
    const bool comment = !body.empty() && body.front() == '#';
    if (comment) body = trim(body.substr(1));
    const auto tokens = split_ws(body);
    if (tokens.empty()) continue;
    bool header = lower(tokens[0]) == "size";
    if (header) {
      header = false;
      for (auto t : tokens) header = header || lower(t) == "busbw";
    }
    if (header) {
      schema = read_header(tokens, file, l.number);
      continue;
    }
    if (comment || !row_like(tokens[0])) {
      // Comments, the banner, the units line, footers, warnings: text around the table.
      read.header_texts.emplace_back(body);
      if (comment && tokens.size() >= 3 && tokens[0] == "Rank" && (tokens[2] == "Group" || tokens[2] == "Pid"))
        if (auto r = parse_integer(tokens[1]); r && *r >= 0) device_ranks.insert(*r);
      continue;
    }
    read.rows.push_back(read_row(tokens, schema, file, l.number));
    read.own_kind.push_back(false);
  }
  if (!device_ranks.empty()) read.ranks = static_cast<int>(device_ranks.size());
  return read;
}

}  // namespace inflect::calib::detail
