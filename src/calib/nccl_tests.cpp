// parse_nccl_tests: picks the reader for the file's form, then decides every row's collective and
// the rank count by the rules of nccl_tests.hpp, the same for all forms.
#include "inflect/calib/nccl_tests.hpp"

#include <cctype>
#include <cmath>
#include <set>

#include "calib/nccl_formats.hpp"
#include "inflect/core/error.hpp"

namespace inflect::calib {

using detail::fail;
using detail::lower;
using detail::trim;

std::string_view to_string(NcclCollective kind) {
  switch (kind) {
    case NcclCollective::all_reduce: return "all_reduce";
    case NcclCollective::all_gather: return "all_gather";
    case NcclCollective::reduce_scatter: return "reduce_scatter";
    case NcclCollective::all_to_all: return "all_to_all";
    case NcclCollective::send_recv: return "send_recv";
    case NcclCollective::broadcast: return "broadcast";
    case NcclCollective::reduce: return "reduce";
  }
  return "all_reduce";
}

namespace {

// A collective's name with case, separators and a trailing "perf" taken out: "allreduce".
std::optional<NcclCollective> collective_of_word(std::string_view word) {
  struct Name {
    std::string_view word;
    NcclCollective kind;
  };
  static constexpr Name kNames[] = {{"allreduce", NcclCollective::all_reduce},
                                    {"allgather", NcclCollective::all_gather},
                                    {"reducescatter", NcclCollective::reduce_scatter},
                                    {"alltoall", NcclCollective::all_to_all},
                                    {"sendrecv", NcclCollective::send_recv},
                                    {"broadcast", NcclCollective::broadcast},
                                    {"reduce", NcclCollective::reduce}};
  for (const auto& n : kNames)
    if (n.word == word) return n.kind;
  return std::nullopt;
}

// Words of `s`: lower-case runs of letters and digits.
std::vector<std::string> words(std::string_view s) {
  std::vector<std::string> out;
  std::string w;
  for (char c : s) {
    if (std::isalnum(static_cast<unsigned char>(c))) {
      w += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    } else if (!w.empty()) {
      out.push_back(std::move(w));
      w.clear();
    }
  }
  if (!w.empty()) out.push_back(std::move(w));
  return out;
}

// The nccl-tests binaries, by the name nccl-tests builds them under.
struct Binary {
  std::string_view name;
  std::optional<NcclCollective> kind;  // nullopt: a binary of a collective inflect does not model
};
constexpr Binary kBinaries[] = {{"all_reduce_perf", NcclCollective::all_reduce},
                                {"all_gather_perf", NcclCollective::all_gather},
                                {"reduce_scatter_perf", NcclCollective::reduce_scatter},
                                {"alltoall_perf", NcclCollective::all_to_all},
                                {"sendrecv_perf", NcclCollective::send_recv},
                                {"broadcast_perf", NcclCollective::broadcast},
                                {"reduce_perf", NcclCollective::reduce},
                                {"gather_perf", std::nullopt},
                                {"scatter_perf", std::nullopt},
                                {"alltoallv_perf", std::nullopt},
                                {"hypercube_perf", std::nullopt}};

// What the header texts say about the collective: the supported kinds named and unsupported binaries.
struct Named {
  std::set<NcclCollective> kinds;
  std::set<std::string> unsupported;
};

Named binaries_named(const std::vector<std::string>& texts) {
  Named out;
  for (const auto& text : texts) {
    std::string token;
    auto flush = [&] {
      for (const auto& b : kBinaries)
        if (token == b.name) {
          if (b.kind)
            out.kinds.insert(*b.kind);
          else
            out.unsupported.insert(token);
        }
      token.clear();
    };
    for (char c : text) {
      if (std::isalnum(static_cast<unsigned char>(c)) || c == '_')
        token += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
      else
        flush();
    }
    flush();
  }
  return out;
}

// Collectives named in a file name: its words, adjacent ones joined ("all", "reduce" -> allreduce),
// longest match first so that all_reduce is not also a reduce.
std::set<NcclCollective> collectives_in_file_name(std::string_view file) {
  const std::size_t slash = file.find_last_of("/\\");
  if (slash != std::string_view::npos) file.remove_prefix(slash + 1);
  const std::size_t dot = file.rfind('.');
  if (dot != std::string_view::npos && dot > 0) file = file.substr(0, dot);
  const auto w = words(file);
  std::set<NcclCollective> out;
  for (std::size_t i = 0; i < w.size();) {
    std::size_t used = 0;
    for (std::size_t n = std::min<std::size_t>(3, w.size() - i); n >= 1 && used == 0; --n) {
      std::string joined;
      for (std::size_t j = 0; j < n; ++j) joined += w[i + j];
      if (auto k = collective_of_word(joined)) {
        out.insert(*k);
        used = n;
      }
    }
    i += used ? used : 1;
  }
  return out;
}

std::string names_of(const std::set<NcclCollective>& kinds) {
  std::string out;
  for (auto k : kinds) out += (out.empty() ? "" : ", ") + std::string(to_string(k));
  return out;
}

// The file-level collective: explicit, else the one binary the header names, else the one
// collective the file name names; else an error saying what was looked at.
NcclCollective file_kind(const detail::NcclRead& read, std::string_view file, std::optional<NcclCollective> kind) {
  if (kind) return *kind;
  const Named named = binaries_named(read.header_texts);
  if (named.kinds.size() == 1) return *named.kinds.begin();
  const auto in_name = collectives_in_file_name(file);
  if (in_name.size() == 1) return *in_name.begin();
  std::string why;
  if (named.kinds.size() > 1)
    why += "the header names several nccl-tests binaries (" + names_of(named.kinds) + ")";
  else if (!named.unsupported.empty())
    why += "the header names " + *named.unsupported.begin() + ", a collective inflect does not model";
  else
    why += "no header comment names an nccl-tests binary (all_reduce_perf, all_gather_perf, ...)";
  why += in_name.size() > 1 ? " and the file name names several (" + names_of(in_name) + ")"
                            : " and the file name names none";
  fail(file, 0,
       "cannot tell which collective this file measured: " + why +
           "; name the file after it (e.g. h100x8_allreduce.txt) or give the collective explicitly (one of " +
           std::string(kNcclCollectiveNames) + ")");
}

// `GPU count: N` in a header text.
std::optional<int> gpu_count(const std::vector<std::string>& texts) {
  for (const auto& text : texts) {
    const std::string l = lower(text);
    for (std::size_t at = l.find("gpu count"); at != std::string::npos; at = l.find("gpu count", at + 1)) {
      std::string_view rest = trim(std::string_view(text).substr(at + 9));
      if (rest.empty() || rest.front() != ':') continue;
      rest = trim(rest.substr(1));
      std::size_t n = 0;
      while (n < rest.size() && n < 7 && std::isdigit(static_cast<unsigned char>(rest[n]))) ++n;
      if (auto v = detail::parse_integer(rest.substr(0, n)); v && *v >= 1) return static_cast<int>(*v);
    }
  }
  return std::nullopt;
}

// The rank count the busbw/algbw ratio of the largest row with both stands for.
std::optional<int> ranks_from_ratio(const std::vector<NcclRow>& rows) {
  const NcclRow* largest = nullptr;
  for (const auto& r : rows) {
    const auto& m = r.best();
    if (m.algbw && m.busbw && m.algbw->value() > 0 && m.busbw->value() > 0 && (!largest || r.size > largest->size))
      largest = &r;
  }
  if (!largest) return std::nullopt;
  const auto& m = largest->best();
  const double ratio = *m.busbw / *m.algbw;
  double n = 0;
  switch (largest->kind) {
    case NcclCollective::all_reduce:  // ratio = 2(n-1)/n
      if (ratio >= 2) return std::nullopt;
      n = 2 / (2 - ratio);
      break;
    case NcclCollective::all_gather:
    case NcclCollective::reduce_scatter:
    case NcclCollective::all_to_all:  // ratio = (n-1)/n
      if (ratio >= 1) return std::nullopt;
      n = 1 / (1 - ratio);
      break;
    default: return std::nullopt;  // factor 1: the ratio says nothing about n
  }
  const double whole = std::round(n);
  if (whole < 2 || whole > 1e6 || std::abs(n - whole) > 0.02 * whole) return std::nullopt;
  return static_cast<int>(whole);
}

}  // namespace

std::optional<NcclCollective> parse_nccl_collective(std::string_view name) {
  std::string joined;
  for (const auto& w : words(name)) joined += w;
  if (joined.size() > 4 && joined.ends_with("perf")) joined.resize(joined.size() - 4);
  return collective_of_word(joined);
}

const NcclMeasure& NcclRow::best() const {
  if (out_of_place.time) return out_of_place;
  if (in_place.time) return in_place;
  if (out_of_place.busbw) return out_of_place;
  if (in_place.busbw) return in_place;
  return out_of_place.empty() ? in_place : out_of_place;
}

NcclTable parse_nccl_tests(std::string_view text, std::string_view file_name, std::optional<NcclCollective> kind) {
  const auto lines = detail::split_lines(text);
  // The form: JSON opens with '{'; Markdown's first line that is not a comment is a table row.
  std::string_view first;
  for (const auto& l : lines) {
    const auto t = trim(l.text);
    if (!t.empty() && t.front() != '#') {
      first = t;
      break;
    }
  }
  if (lines.empty() || trim(text).empty()) fail(file_name, 1, "the file is empty: expected nccl-tests output");
  detail::NcclRead read = !first.empty() && first.front() == '{'   ? detail::read_nccl_json(text, file_name)
                          : !first.empty() && first.front() == '|' ? detail::read_nccl_markdown(lines, file_name)
                                                                   : detail::read_nccl_text(lines, file_name);
  if (read.rows.empty())
    fail(file_name, read.last_line,
         "no rows: expected nccl-tests / rccl-tests output (rows of size, count, type, redop, root, time, algbw, "
         "busbw), "
         "its JSON (-J) or a Markdown table of busbw by message size");

  NcclTable table;
  table.file = std::string(file_name);
  table.format = read.format;
  if (!lines.empty() && trim(lines.front().text).starts_with("#"))
    table.source_comment = std::string(trim(trim(lines.front().text).substr(1)));
  bool all_own = true;
  for (bool own : read.own_kind) all_own = all_own && own;
  if (!all_own) {
    const NcclCollective k = file_kind(read, file_name, kind);
    for (std::size_t i = 0; i < read.rows.size(); ++i)
      if (!read.own_kind[i]) read.rows[i].kind = k;
  }
  table.rows = std::move(read.rows);
  table.ranks = read.ranks;
  if (!table.ranks) table.ranks = gpu_count(read.header_texts);
  if (!table.ranks) table.ranks = ranks_from_ratio(table.rows);
  return table;
}

double nccl_busbw_factor(NcclCollective kind, int ranks) {
  core::check_invariant(ranks >= 1, "nccl_busbw_factor: ranks >= 1");
  const double n = ranks;
  switch (kind) {
    case NcclCollective::all_reduce: return 2 * (n - 1) / n;
    case NcclCollective::all_gather:
    case NcclCollective::reduce_scatter:
    case NcclCollective::all_to_all: return (n - 1) / n;
    case NcclCollective::send_recv:
    case NcclCollective::broadcast:
    case NcclCollective::reduce: return 1;
  }
  return 1;
}

core::Seconds nccl_time_from_busbw(NcclCollective kind, int ranks, core::Bytes size, core::Bandwidth busbw) {
  core::check_invariant(busbw.value() > 0, "nccl_time_from_busbw: busbw > 0");
  return size / (busbw / nccl_busbw_factor(kind, ranks));
}

std::optional<core::Seconds> nccl_row_time(const NcclRow& row, std::optional<int> ranks) {
  const NcclMeasure& m = row.best();
  if (m.time) return m.time;
  if (m.algbw && m.algbw->value() > 0) return row.size / *m.algbw;
  if (!m.busbw || m.busbw->value() <= 0) return std::nullopt;
  if (ranks && *ranks >= 1) return nccl_time_from_busbw(row.kind, *ranks, row.size, *m.busbw);
  const bool factor_one = row.kind == NcclCollective::send_recv || row.kind == NcclCollective::broadcast ||
                          row.kind == NcclCollective::reduce;
  if (factor_one) return row.size / *m.busbw;
  return std::nullopt;
}

}  // namespace inflect::calib
