// Markdown tables of nccl-tests results as people publish them: busbw by message size (one or more
// bandwidth columns), or a summary with a collective column whose one size is in the header's
// nccl-tests command (-b/-e).
#include <cctype>
#include <cmath>

#include "calib/nccl_formats.hpp"
#include "inflect/core/units_parse.hpp"

namespace inflect::calib::detail {
namespace {

// The cells of a table line: split at '|' (not at "\|"), the outer pipes dropped, cells trimmed.
std::vector<std::string> cells_of(std::string_view line) {
  line = trim(line);
  if (!line.empty() && line.front() == '|') line.remove_prefix(1);
  if (!line.empty() && line.back() == '|' && (line.size() < 2 || line[line.size() - 2] != '\\')) line.remove_suffix(1);
  std::vector<std::string> cells;
  std::string cell;
  for (std::size_t i = 0; i < line.size(); ++i) {
    if (line[i] == '\\' && i + 1 < line.size() && line[i + 1] == '|') {
      cell += '|';
      ++i;
    } else if (line[i] == '|') {
      cells.emplace_back(trim(cell));
      cell.clear();
    } else {
      cell += line[i];
    }
  }
  cells.emplace_back(trim(cell));
  return cells;
}

bool is_separator(const std::vector<std::string>& cells) {
  for (const auto& c : cells) {
    if (c.empty()) return false;
    for (char ch : c)
      if (ch != '-' && ch != ':' && ch != ' ') return false;
  }
  return true;
}

std::string without_backticks(std::string_view s) {
  std::string out;
  for (char c : s)
    if (c != '`') out += c;
  return std::string(trim(out));
}

// A number, then an optional prefix letter (K, M, G, T; either case), "i" and "B".
struct Label {
  double number = 0;
  int power = 0;        // 0 plain, 1 K, 2 M, 3 G, 4 T
  bool binary = false;  // written KiB, MiB, ...
};

std::optional<Label> read_label(std::string_view s) {
  s = trim(s);
  std::size_t n = 0;
  while (n < s.size() && (std::isdigit(static_cast<unsigned char>(s[n])) || s[n] == '.')) ++n;
  const auto number = parse_number(s.substr(0, n));
  if (!number) return std::nullopt;
  Label label{*number, 0, false};
  std::string_view unit = trim(s.substr(n));
  if (!unit.empty()) {
    const std::string_view prefixes = "kmgt";
    const std::size_t p = prefixes.find(static_cast<char>(std::tolower(static_cast<unsigned char>(unit.front()))));
    if (p != std::string_view::npos) {
      label.power = static_cast<int>(p) + 1;
      unit.remove_prefix(1);
      if (!unit.empty() && unit.front() == 'i') {
        label.binary = true;
        unit.remove_prefix(1);
      }
    }
    if (!unit.empty() && (unit.front() == 'B' || unit.front() == 'b')) unit.remove_prefix(1);
    if (!unit.empty()) return std::nullopt;
  }
  return label;
}

// A message size as busbw tables label it. nccl-tests sizes are powers of two, and tables write them
// in decimal units, truncated or rounded ("65K" for 65536, "132K" for 131072, "1G" for 2^30): such a
// label lies between its decimal reading (x 1000^k) and its binary one (x 1024^k). The power of two
// nearest the decimal reading is taken when it lies within 5% of that range; otherwise the label is
// a size of its own and read in decimal. "KiB"-style labels are exact; a plain number is bytes.
std::optional<double> message_size(std::string_view cell) {
  const auto label = read_label(cell);
  if (!label) return std::nullopt;
  const double decimal = label->number * std::pow(1000.0, label->power);
  const double binary = label->number * std::pow(1024.0, label->power);
  if (label->power == 0 || label->binary) return binary;
  if (decimal <= 0) return decimal;
  const double snapped = std::exp2(std::round(std::log2(decimal)));
  return snapped >= 0.95 * decimal && snapped <= 1.05 * binary ? snapped : decimal;
}

// A size as nccl-tests' -b/-e read it (src/common.cu parsesize): a number and K, M or G in powers of 1024.
std::optional<double> nccl_size_arg(std::string_view s) {
  const auto label = read_label(s);
  if (!label || label->power > 3) return std::nullopt;
  return label->number * std::pow(1024.0, label->power);
}

// The one message size the header's nccl-tests commands give (-b and -e, or --minbytes and --maxbytes,
// equal). Error when they give several; nullopt when none.
std::optional<double> size_from_commands(const std::vector<std::string>& texts, std::string_view file, int line) {
  std::optional<double> size;
  std::string seen;
  for (const auto& text : texts) {
    const auto tokens = split_ws(text);
    for (std::size_t i = 0; i < tokens.size(); ++i) {
      const std::string_view t = tokens[i];
      std::string_view value;
      for (std::string_view flag : {"-b", "-e", "--minbytes", "--maxbytes"}) {
        if (t == flag && i + 1 < tokens.size())
          value = tokens[i + 1];
        else if (flag.size() == 2 && t.size() > 2 && t.starts_with(flag))
          value = t.substr(2);
        else if (t.size() > flag.size() + 1 && t.starts_with(flag) && t[flag.size()] == '=')
          value = t.substr(flag.size() + 1);
      }
      while (!value.empty() &&
             (value.back() == ',' || value.back() == ';' || value.back() == ')' || value.back() == '`'))
        value.remove_suffix(1);
      const auto v = value.empty() ? std::nullopt : nccl_size_arg(value);
      if (!v) continue;
      const bool glued = value.data() > t.data() && value.data() < t.data() + t.size();  // -b16G, --minbytes=16G
      if (!seen.empty()) seen.append(", ");
      seen.append(t);
      if (!glued) seen.append(" ").append(value);
      if (size && *size != *v)
        fail(file, line,
             "the header's nccl-tests commands give more than one message size (" + seen +
                 "); a table without a size column needs one (-b equal to -e)");
      size = v;
    }
  }
  return size;
}

std::optional<core::Bandwidth> bandwidth(std::string_view cell) {
  if (const auto v = parse_number(cell)) return core::Bandwidth(*v * 1e9);  // the column's GB/s
  return core::parse_bandwidth(cell);
}

struct Columns {
  std::optional<std::size_t> size, collective, algorithm;
  std::vector<std::size_t> bandwidths;  // busbw-only tables: every bandwidth column; summaries: the busbw one
};

Columns classify(const std::vector<std::string>& header) {
  Columns c;
  for (std::size_t i = 0; i < header.size(); ++i) {
    const std::string h = lower(header[i]);
    if (h == "collective" || h == "op" || h == "operation")
      c.collective = i;
    else if (h == "algo" || h == "algorithm")
      c.algorithm = i;
    else if (h.find("size") != std::string::npos && !c.size)
      c.size = i;
  }
  for (std::size_t i = 0; i < header.size(); ++i) {
    const std::string h = lower(header[i]);
    if (i == c.size || i == c.collective || i == c.algorithm || h.find('%') != std::string::npos) continue;
    const bool busbw = h.find("busbw") != std::string::npos || h.find("bus bw") != std::string::npos;
    const bool gbs = h.find("gb/s") != std::string::npos || h.find("gbps") != std::string::npos;
    if (c.collective ? busbw : (busbw || gbs)) c.bandwidths.push_back(i);
    if (c.collective && busbw) break;
  }
  return c;
}

}  // namespace

NcclRead read_nccl_markdown(const std::vector<Line>& lines, std::string_view file) {
  NcclRead read;
  // Text outside tables (comments, prose) is where the command, the GPU count and in-place are said.
  for (const auto& l : lines) {
    std::string_view t = trim(l.text);
    if (t.empty() || t.front() == '|') continue;
    if (t.front() == '#') t = trim(t.substr(1));
    read.header_texts.emplace_back(t);
  }
  bool in_place = false, out_of_place = false;
  for (const auto& t : read.header_texts) {
    const std::string l = lower(t);
    in_place = in_place || l.find("in-place") != std::string::npos;
    out_of_place = out_of_place || l.find("out-of-place") != std::string::npos;
  }
  const bool into_in_place = in_place && !out_of_place;  // busbw-only values: which measure they are

  for (std::size_t i = 0; i < lines.size(); ++i) {
    read.last_line = lines[i].number;
    if (trim(lines[i].text).empty() || trim(lines[i].text).front() != '|') continue;
    // A table: its header, the | --- | line, then rows until a line that is not a table line.
    const int header_line = lines[i].number;
    const auto header = cells_of(lines[i].text);
    if (i + 1 >= lines.size() || !is_separator(cells_of(lines[i + 1].text)))
      fail(file, header_line + 1, "a Markdown table's second line must be its | --- | separator");
    const Columns c = classify(header);
    if (c.bandwidths.empty() || (!c.collective && !c.size))
      fail(
          file, header_line,
          "a Markdown table of nccl-tests results needs a message-size column and busbw columns "
          "(| Message Size (Bytes) | ... (GB/s) |) or a collective and a busbw column (| collective | algo | busbw |)");
    read.format = std::string(c.collective ? kNcclMarkdownSummary : kNcclMarkdownBusbw);
    std::optional<double> table_size;
    if (!c.size) {
      table_size = size_from_commands(read.header_texts, file, header_line);
      if (!table_size)
        fail(file, header_line,
             "the table has no message-size column and no header comment gives the size as nccl-tests' -b/-e (e.g. `-b "
             "16G -e 16G`)");
    }
    for (i += 2; i < lines.size() && !trim(lines[i].text).empty() && trim(lines[i].text).front() == '|'; ++i) {
      const int line = lines[i].number;
      read.last_line = line;
      const auto cells = cells_of(lines[i].text);
      if (cells.size() != header.size())
        fail(file, line,
             "a row of " + std::to_string(cells.size()) + " cells; the header has " + std::to_string(header.size()));
      NcclRow row;
      row.line = line;
      if (c.size) {
        const auto s = message_size(cells[*c.size]);
        if (!s) fail(file, line, "message size " + quote(cells[*c.size]) + " is not a size (e.g. 1K, 65K, 1G, 4096)");
        row.size = core::Bytes(*s);
      } else {
        row.size = core::Bytes(*table_size);
      }
      if (c.collective) {
        const std::string& cell = cells[*c.collective];
        const std::size_t comma = cell.find(',');
        const auto k = parse_nccl_collective(cell.substr(0, comma));
        if (!k)
          fail(file, line,
               "collective " + quote(cell.substr(0, comma)) + " is not one of " + std::string(kNcclCollectiveNames));
        row.kind = *k;
        if (comma != std::string::npos) row.note = without_backticks(std::string_view(cell).substr(comma + 1));
      }
      if (c.algorithm) row.algorithm = lower(without_backticks(cells[*c.algorithm]));
      for (std::size_t b : c.bandwidths) {
        const std::string& cell = cells[b];
        if (cell.empty() || cell == "-" || cell == "N/A" || cell == "n/a") continue;  // not measured
        const auto bw = bandwidth(cell);
        if (!bw || bw->value() < 0)
          fail(file, line, header[b] + " " + quote(cell) + " is not a bandwidth (GB/s, >= 0)");
        NcclRow r = row;
        (into_in_place ? r.in_place : r.out_of_place).busbw = *bw;
        if (!c.collective) r.note = header[b];
        read.rows.push_back(std::move(r));
        read.own_kind.push_back(c.collective.has_value());
      }
    }
    --i;
  }
  return read;
}

}  // namespace inflect::calib::detail
