// PyTorch profiler (Kineto) traces into the execution graph (docs/traces.md, "Kineto"): the files
// and their ranks, the step replayed, the ranks matched on their collectives, and ranks without a
// file replicated when the job is symmetric. kineto_trace.cpp parses a file, kineto_rank.cpp builds
// a rank's ops, kineto_ops.cpp says what each GPU activity becomes.
#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <set>

#include "inflect/core/error.hpp"
#include "inflect/workload/trace_builder.hpp"
#include "workload/importers.hpp"
#include "workload/kineto_rank.hpp"
#include "workload/kineto_trace.hpp"

namespace inflect::workload {
namespace {

namespace fs = std::filesystem;
using kineto::Trace;

[[noreturn]] void fail(const std::string& what) { throw core::Error(core::ErrorKind::input, what); }

// "rank-10.json" after "rank-9.json": digit runs compare as numbers.
bool natural_less(const std::string& a, const std::string& b) {
  std::size_t i = 0, j = 0;
  while (i < a.size() && j < b.size()) {
    if (std::isdigit(static_cast<unsigned char>(a[i])) != 0 && std::isdigit(static_cast<unsigned char>(b[j])) != 0) {
      std::size_t i2 = i, j2 = j;
      while (i2 < a.size() && std::isdigit(static_cast<unsigned char>(a[i2])) != 0) ++i2;
      while (j2 < b.size() && std::isdigit(static_cast<unsigned char>(b[j2])) != 0) ++j2;
      const std::string x = a.substr(i, i2 - i), y = b.substr(j, j2 - j);
      const std::string xs = x.substr(std::min(x.find_first_not_of('0'), x.size()));
      const std::string ys = y.substr(std::min(y.find_first_not_of('0'), y.size()));
      if (xs.size() != ys.size()) return xs.size() < ys.size();
      if (xs != ys) return xs < ys;
      i = i2, j = j2;
      continue;
    }
    if (a[i] != b[j]) return a[i] < b[j];
    ++i, ++j;
  }
  return a.size() - i < b.size() - j;
}

// "1-7, 9, 12-15": a list of ranks, increasing, in ranges.
std::string rank_ranges(const std::vector<RankId>& ranks) {
  std::string out;
  for (std::size_t i = 0; i < ranks.size();) {
    std::size_t j = i;
    while (j + 1 < ranks.size() && ranks[j + 1] == ranks[j] + 1) ++j;
    if (!out.empty()) out += ", ";
    out += j == i ? fmt::format("{}", ranks[i]) : fmt::format("{}-{}", ranks[i], ranks[j]);
    i = j + 1;
  }
  return out;
}

struct RankFile {
  RankId rank = 0;
  const Trace* trace = nullptr;
  kineto::Window window;
};

/// The k-th collective a rank issues on a group matches the k-th of every other member (as NCCL
/// matches calls on a communicator, and as the engine does): the ranks present must agree on each
/// group's sequence, "Seq" included when both recorded it.
void match_collectives(const std::vector<RankFile>& files, const std::vector<kineto::RankBuild>& builds) {
  std::map<std::vector<RankId>, std::vector<std::size_t>> users;  // group -> files that call on it
  for (std::size_t i = 0; i < builds.size(); ++i)
    for (const auto& g : builds[i].groups) users[g].push_back(i);
  for (const auto& entry : users) {
    const std::vector<RankId>& group = entry.first;  // not a structured binding: lambdas capture it
    const std::vector<std::size_t>& who = entry.second;
    if (who.size() < 2) continue;
    auto on_group = [&](std::size_t i) {
      std::vector<const kineto::IssuedCollective*> v;
      for (const auto& c : builds[i].collectives)
        if (c.members == group) v.push_back(&c);
      return v;
    };
    const auto first = on_group(who[0]);
    for (std::size_t w = 1; w < who.size(); ++w) {
      const auto other = on_group(who[w]);
      const RankFile &a = files[who[0]], &b = files[who[w]];
      const std::size_t n = std::min(first.size(), other.size());
      for (std::size_t k = 0; k < n; ++k) {
        const auto &x = *first[k], &y = *other[k];
        const bool seq_differs = x.seq >= 0 && y.seq >= 0 && x.seq != y.seq && x.kind != CollectiveKind::send_recv;
        if (x.kind != y.kind || x.bytes != y.bytes || seq_differs)
          fail(fmt::format("ranks {} and {} disagree on their collective #{} on process group [{}]: rank {} ({}) runs {}{}, "
                           "rank {} ({}) runs {}{}; the ranks' traces are not of the same step or job",
                           a.rank, b.rank, k + 1, fmt::join(group, ", "), a.rank, a.trace->file, x.label,
                           x.seq >= 0 ? fmt::format(" Seq {}", x.seq) : "", b.rank, b.trace->file, y.label,
                           y.seq >= 0 ? fmt::format(" Seq {}", y.seq) : ""));
      }
      if (first.size() != other.size())
        fail(fmt::format("ranks {} ({}) and {} ({}) issue {} and {} collectives on process group [{}] in the replayed step: "
                         "the k-th call of each member must match",
                         a.rank, a.trace->file, b.rank, b.trace->file, first.size(), other.size(), fmt::join(group, ", ")));
    }
  }
}

ImportedTrace import_traces(const std::vector<Trace>& traces, const std::string& path, const TraceImportOptions& options) {
  ImportedTrace out;
  TraceImportSummary& sum = out.summary;
  sum.format = TraceFormat::kineto;
  sum.path = path;
  sum.rank_files = static_cast<int>(traces.size());
  sum.distinct_files = sum.rank_files;
  // Ranks: distributedInfo.rank; a lone file without it is rank 0 of a one-rank job.
  std::vector<RankFile> files;
  int world = 0;
  std::map<RankId, const Trace*> by_rank;
  for (const Trace& t : traces) {
    sum.nodes += t.events_read;
    if (!t.rank && traces.size() > 1)
      fail(fmt::format("{}: no distributedInfo.rank, and {} files were given: each file must say its rank", t.file, traces.size()));
    const auto r = static_cast<RankId>(t.rank.value_or(0));
    if (auto [it, fresh] = by_rank.emplace(r, &t); !fresh)
      fail(fmt::format("{} and {} both claim rank {} (distributedInfo.rank)", it->second->file, t.file, r));
    if (t.world_size > 0 && world > 0 && t.world_size != world)
      fail(fmt::format("{}: world_size {}, but another file says {}", t.file, t.world_size, world));
    if (t.world_size > 0) world = t.world_size;
    files.push_back(RankFile{r, &t, {}});
  }
  std::sort(files.begin(), files.end(), [](const RankFile& a, const RankFile& b) { return a.rank < b.rank; });
  world = std::max(world, static_cast<int>(files.back().rank) + 1);
  sum.ranks = world;

  // The step: the last one complete on every rank, the same ProfilerStep#N everywhere.
  std::vector<std::vector<kineto::Step>> steps;
  std::size_t with_steps = 0;
  for (const auto& f : files) {
    steps.push_back(kineto::complete_steps(*f.trace));
    if (!steps.back().empty()) ++with_steps;
  }
  if (with_steps != 0 && with_steps != files.size())
    fail(fmt::format("some files have ProfilerStep annotations and some do not (e.g. {}): profile every rank the same way",
                     files[static_cast<std::size_t>(std::find_if(steps.begin(), steps.end(), [](const auto& s) { return s.empty(); }) -
                                                    steps.begin())]
                         .trace->file));
  if (with_steps == 0) {
    for (auto& f : files) f.window = kineto::whole_window(*f.trace);
    sum.other.add("replayed: the whole trace (no ProfilerStep annotations)", static_cast<std::int64_t>(files.size()));
  } else {
    std::set<std::int64_t> common;
    for (const auto& s : steps[0]) common.insert(s.number);
    for (std::size_t i = 1; i < steps.size(); ++i) {
      std::set<std::int64_t> here, both;
      for (const auto& s : steps[i]) here.insert(s.number);
      std::set_intersection(common.begin(), common.end(), here.begin(), here.end(), std::inserter(both, both.begin()));
      common = std::move(both);
    }
    if (common.empty()) fail(fmt::format("the files' ProfilerStep annotations share no complete step (e.g. {} and {})",
                                         files.front().trace->file, files.back().trace->file));
    const std::int64_t n = *common.rbegin();
    for (std::size_t i = 0; i < files.size(); ++i)
      for (const auto& s : steps[i])
        if (s.number == n) files[i].window = kineto::Window{s.begin, s.end, false, n, s.tid};
    sum.other.add(fmt::format("replayed step: ProfilerStep#{} (the last step a later step's annotation proves complete)", n),
                  static_cast<std::int64_t>(files.size()));
  }

  TraceGraphBuilder b;
  std::vector<kineto::RankBuild> builds;
  std::int64_t recorded = 0;
  for (const auto& f : files) {
    builds.push_back(kineto::build_rank(*f.trace, f.rank, world, f.window, b, options));
    const auto& rb = builds.back();
    recorded = std::max(recorded, rb.recorded_ns);
    for (const auto& [k, v] : rb.compute.counts) sum.compute.add(k, v);
    for (const auto& [k, v] : rb.communication.counts) sum.communication.add(k, v);
    for (const auto& [k, v] : rb.other.counts) sum.other.add(k, v);
    for (const auto& [k, v] : f.trace->ignored.counts) sum.other.add(k, v);
  }
  if (recorded > 0) sum.recorded_step = core::Seconds(static_cast<double>(recorded) * 1e-9);
  match_collectives(files, builds);

  // Ranks without a file: copies of a present rank only when that is certain.
  std::vector<RankId> missing;
  for (int r = 0, i = 0; r < world; ++r) {
    if (static_cast<std::size_t>(i) < files.size() && files[static_cast<std::size_t>(i)].rank == r) ++i;
    else missing.push_back(static_cast<RankId>(r));
  }
  if (!missing.empty()) {
    for (std::size_t i = 0; i < builds.size(); ++i)
      for (const auto& g : builds[i].groups)
        if (g.size() != static_cast<std::size_t>(world) || std::any_of(builds[i].collectives.begin(), builds[i].collectives.end(),
                                                                         [](const auto& c) { return c.kind == CollectiveKind::send_recv; }))
          fail(fmt::format("rank{} {} of {} ha{} no trace file, and rank {} ({}) calls collectives on process group [{}], which "
                           "does not span the job: what a missing rank runs is unknown; give every rank's file",
                           missing.size() > 1 ? "s" : "", rank_ranges(missing), world, missing.size() > 1 ? "ve" : "s",
                           files[i].rank, files[i].trace->file, fmt::join(g, ", ")));
  }
  const std::string name = fs::path(path).filename().string();
  std::size_t next_file = 0;
  for (RankId r = 0; r < static_cast<RankId>(world); ++r) {
    if (next_file < files.size() && files[next_file].rank == r) {
      b.add_rank(r, builds[next_file].trace, files[next_file].trace->file);
      ++next_file;
    } else if (r < files[0].rank || !b.add_copy(r, files[0].rank)) {
      // Every group spans the job, so the copy calls the same collectives on the same groups
      // (add_copy stores it as a replica at once, once its model rank is in).
      b.add_rank(r, builds[0].trace, files[0].trace->file);
    }
  }
  if (!missing.empty())
    sum.other.add(fmt::format("{} {} (no file): replicated from rank {} (the present ranks are copies of one another and "
                              "every process group spans the job)",
                              missing.size() > 1 ? "ranks" : "rank", rank_ranges(missing), files[0].rank),
                  static_cast<std::int64_t>(missing.size()));
  if (!missing.empty() && b.graph().kept_ranks().size() != 1) {
    std::vector<RankId> kept;
    for (const auto& k : b.graph().kept_ranks()) kept.push_back(k.rank);
    fail(fmt::format("rank{} {} of {} ha{} no trace file, and the present ranks are not copies of one another (ranks {} differ): "
                     "which one a missing rank copies is unknown; give every rank's file",
                     missing.size() > 1 ? "s" : "", rank_ranges(missing), world, missing.size() > 1 ? "ve" : "s",
                     fmt::join(kept, ", ")));
  }
  sum.replicated_ranks = static_cast<int>(missing.size());
  out.graph = b.finish(world, name.empty() ? path : name);
  return out;
}

}  // namespace

ImportedTrace import_kineto(const std::string& path, const TraceImportOptions& options) {
  std::vector<Trace> traces;
  for (const auto& f : kineto_files(path)) traces.push_back(kineto::parse_trace_file(f));
  return import_traces(traces, path, options);
}

ImportedTrace import_kineto_text(const std::string& name, const std::string& text, const TraceImportOptions& options) {
  std::vector<Trace> traces;
  traces.push_back(kineto::parse_trace(text, name));
  return import_traces(traces, name, options);
}

std::vector<std::string> kineto_files(const std::string& path) {
  std::error_code ec;
  if (!fs::is_directory(path, ec)) {
    if (!fs::exists(path, ec)) throw core::Error(core::ErrorKind::io, fmt::format("no Kineto trace at '{}'", path));
    return {path};
  }
  std::vector<std::string> files;
  for (const auto& entry : fs::directory_iterator(path, ec)) {
    const std::string f = entry.path().filename().string();
    if (entry.is_regular_file() && (f.ends_with(".json") || f.ends_with(".json.gz"))) files.push_back(entry.path().string());
  }
  if (ec) throw core::Error(core::ErrorKind::io, fmt::format("cannot list '{}': {}", path, ec.message()));
  if (files.empty())
    throw core::Error(core::ErrorKind::io, fmt::format("'{}' holds no Kineto trace files (*.json, *.pt.trace.json, *.json.gz)", path));
  std::sort(files.begin(), files.end(), natural_less);
  return files;
}

}  // namespace inflect::workload
