#include "inflect/workload/trace_import.hpp"

#include <fmt/format.h>

#include <fstream>
#include <sstream>

#include "inflect/core/error.hpp"
#include "inflect/workload/graph_json.hpp"
#include "workload/importers.hpp"

namespace inflect::workload {

const char* to_string(TraceFormat f) {
  switch (f) {
    case TraceFormat::graph_json: return "inflect";
    case TraceFormat::chakra: return "chakra";
    case TraceFormat::kineto: return "kineto";
  }
  return "?";
}

void NodeTally::add(const std::string& what, std::int64_t n) {
  for (auto& [k, v] : counts)
    if (k == what) {
      v += n;
      return;
    }
  counts.emplace_back(what, n);
}

std::int64_t NodeTally::total() const {
  std::int64_t t = 0;
  for (const auto& [k, v] : counts) t += v;
  return t;
}

std::vector<std::string> trace_files(TraceFormat format, const std::string& path) {
  switch (format) {
    case TraceFormat::graph_json: return {path};
    case TraceFormat::chakra: return chakra_files(path);
    case TraceFormat::kineto: return kineto_files(path);
  }
  return {path};
}

ImportedTrace import_trace_text(TraceFormat format, const std::string& name, const std::string& text,
                                const TraceImportOptions& options) {
  switch (format) {
    case TraceFormat::chakra: return import_chakra_text(name, text, options);
    case TraceFormat::kineto: return import_kineto_text(name, text, options);
    case TraceFormat::graph_json: break;
  }
  ImportedTrace t{graph_from_json(text, name), {}};
  t.summary.format = format;
  t.summary.path = name;
  t.summary.rank_files = 1;
  t.summary.distinct_files = 1;
  t.summary.ranks = t.graph.total_ranks();
  t.summary.nodes = static_cast<std::int64_t>(t.graph.op_count());
  return t;
}

ImportedTrace import_trace(TraceFormat format, const std::string& path, const TraceImportOptions& options) {
  switch (format) {
    case TraceFormat::chakra: return import_chakra(path, options);
    case TraceFormat::kineto: return import_kineto(path, options);
    case TraceFormat::graph_json: break;
  }
  return import_trace_text(format, path, read_trace_file(path), options);
}

std::string read_trace_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw core::Error(core::ErrorKind::io, fmt::format("cannot open trace '{}'", path));
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace inflect::workload
