#include "inflect/scan/runner.hpp"

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>

#include "inflect/analysis/simulate.hpp"
#include "inflect/core/content_hash.hpp"
#include "inflect/core/error.hpp"
#include "inflect/core/parallel.hpp"
#include "inflect/io/experiment_loader.hpp"
#include "inflect/io/provenance.hpp"
#include "inflect/io/topology_loader.hpp"
#include "inflect/scan/out_lock.hpp"

namespace inflect::scan {

namespace {

namespace fs = std::filesystem;

// Devices of a point whose experiment did not load, when its topology alone can be read: so an
// impossible point still sits at its place on the scale axis.
void devices_from_topology(const ScanSpec& spec, const ScanPoint& p, ScanRow& row) {
  try {
    const YAML::Node doc = point_document(spec, p);
    const YAML::Node cluster = doc["cluster"];
    if (!cluster.IsMap() || !cluster["topology"].IsScalar()) return;
    const int nodes = cluster["nodes"].IsScalar() ? cluster["nodes"].as<int>() : 1;
    const auto path = io::find_input_file(cluster["topology"].Scalar(), spec.base_dir);
    if (!path) return;
    const auto topo = io::load_topology(*path);
    row.report.nodes = nodes;
    row.report.devices = nodes * topo.devices_per_node;
  } catch (const std::exception&) {
    // The loader's own error already explains the point; no scale is better than a guess.
  }
}

}  // namespace

ScanRow run_point(const ScanSpec& spec, const ScanPoint& point, plan::Fidelity fidelity) {
  ScanRow row;
  auto identify = [&](ScanRow& r) {
    r.index = point.index;
    r.key = point.key;
    r.inputs = point.inputs;
    r.family = point.family;
    r.values = point.values;
  };
  identify(row);
  plan::Experiment e;
  // Every file the point reads (its topology, device files, a trace), for its report's provenance
  // and for --resume, which re-runs a point whose files changed.
  io::InputRecorder inputs;
  try {
    auto file = std::make_shared<const std::string>(fmt::format("{} (point {}: {})", spec.file, point.index,
                                                                point.key.empty() ? "base" : point.key));
    e = io::parse_experiment(io::Node(point_document(spec, point), file, ""), spec.base_dir, true, spec.catalog);
    if (spec.profile) io::apply_profile(e, *spec.profile, spec.catalog);
  } catch (const core::Error& err) {
    row.status = RowStatus::invalid;
    row.reason = core::format_error(err);
    devices_from_topology(spec, point, row);
    return row;
  }
  try {
    analysis::SimulateOptions so;
    so.fidelity = fidelity;
    analysis::RunReport r = analysis::simulate(e, so);
    std::vector<analysis::InputFile> files = {{"scan", spec.file, core::content_hash(spec.text)}};
    files.insert(files.end(), inputs.files().begin(), inputs.files().end());
    r.provenance = io::provenance_of(e, files);
    row = row_from_report(r);
    identify(row);
  } catch (const std::exception& err) {
    const auto* ce = dynamic_cast<const core::Error*>(&err);
    row.status = ce && ce->kind() == core::ErrorKind::input ? RowStatus::invalid : RowStatus::failed;
    row.reason = ce ? core::format_error(*ce) : err.what();
    row.report.devices = e.cluster.devices();
    row.report.nodes = e.cluster.nodes;
  }
  return row;
}

ScanMeta meta_of(const ScanSpec& spec, int points, plan::Fidelity fidelity) {
  ScanMeta m;
  m.name = spec.name;
  m.file = spec.file;
  for (const auto& a : spec.axes) m.axis_paths.push_back(a.path);
  for (const auto& f : spec.plans) m.plans.push_back(f.name);
  m.scale = spec.analysis.scale;
  m.inflection = spec.analysis.inflection;
  m.points = points;
  m.fidelity = plan::fidelity_name(fidelity);
  // The scan's document as parsed (comments and layout do not count), so a shard's folder names
  // the scan it belongs to.
  const YAML::Node doc = YAML::Load(spec.text);
  m.inputs = core::content_hash(YAML::Dump(doc));
  // Flattened, so a merge of two different scans can name the key that differs.
  const std::function<void(const YAML::Node&, const std::string&)> flatten = [&](const YAML::Node& n, const std::string& path) {
    if (n.IsMap() && !path.starts_with("sweep.")) {
      for (const auto& kv : n)
        flatten(kv.second, path.empty() ? kv.first.as<std::string>() : fmt::format("{}.{}", path, kv.first.as<std::string>()));
      return;
    }
    YAML::Emitter out;
    out.SetMapFormat(YAML::Flow);
    out.SetSeqFormat(YAML::Flow);
    out << n;
    m.keys.emplace_back(path, out.c_str());
  };
  flatten(doc, "");
  return m;
}

ScanOutcome run_scan(const ScanSpec& spec, const std::string& out_dir, const ScanOptions& options) {
  core::check_invariant(options.shard_count >= 1 && options.shard_index >= 0 && options.shard_index < options.shard_count,
                        "run_scan: shard out of range");
  const auto t0 = std::chrono::steady_clock::now();
  const auto points = expand_points(spec);
  ScanOutcome outcome;
  outcome.points = static_cast<int>(points.size());
  outcome.meta = meta_of(spec, outcome.points, options.fidelity);

  // One writer per folder: a second scan (or merge) aimed at it is refused while this one runs.
  std::optional<OutDirLock> out_lock;
  if (options.peers.rank == 0) out_lock.emplace(out_dir);
  const auto jsonl_path = (fs::path(out_dir) / "results.jsonl").string();
  const auto csv_path = (fs::path(out_dir) / "results.csv").string();

  // Rows already there (resume): matched to this scan's points by key; rows of points the scan no
  // longer has are dropped, and an interrupted last line is not a row.
  std::map<std::string, ScanRow> kept;
  if (options.resume && fs::exists(jsonl_path))
    for (auto& r : read_rows(jsonl_path)) kept.emplace(r.key, std::move(r));

  std::map<std::string, std::optional<std::string>> hash_now;  // path -> its fingerprint now, read once
  auto files_unchanged = [&](const ScanRow& r) {
    for (const auto& f : r.report.provenance.inputs) {
      if (f.role == "scan") continue;  // the point's own document is compared above (ScanPoint::inputs)
      auto [it, fresh] = hash_now.try_emplace(f.path);
      if (fresh) it->second = io::current_hash(f);
      if (it->second != f.hash) return false;
    }
    return true;
  };
  std::vector<const ScanPoint*> todo;
  std::vector<ScanRow> rows;
  for (const auto& p : points) {
    if (p.index % options.shard_count != options.shard_index) continue;
    // A kept row is this point's only if it ran the same experiment (a changed base re-runs it)
    // from files that have not changed since (a topology edited between runs re-runs it too).
    if (auto it = kept.find(p.key); it != kept.end() && it->second.inputs == p.inputs && files_unchanged(it->second)) {
      ScanRow r = std::move(it->second);
      r.index = p.index;
      r.values = p.values;
      r.family = p.family;
      rows.push_back(std::move(r));
      continue;
    }
    todo.push_back(&p);
  }
  outcome.resumed = static_cast<int>(rows.size());
  const Peers& peers = options.peers;
  core::check_invariant(peers.ranks >= 1 && peers.rank >= 0 && peers.rank < peers.ranks, "run_scan: peer rank out of range");
  const bool leader = peers.rank == 0, spread = peers.ranks > 1;
  const std::size_t to_run_everywhere = todo.size();
  if (spread) {
    // Every rank expands the same points and sees the same kept rows: each takes every ranks-th.
    std::vector<const ScanPoint*> mine;
    for (std::size_t i = 0; i < todo.size(); ++i)
      if (static_cast<int>(i % static_cast<std::size_t>(peers.ranks)) == peers.rank) mine.push_back(todo[i]);
    todo = std::move(mine);
  }

  std::ofstream jsonl, csv;
  if (leader) {
    // Start the files clean (header, kept rows) and append from here on.
    write_results(out_dir, outcome.meta.axis_paths, rows);
    write_meta(out_dir, outcome.meta);
    jsonl.open(jsonl_path, std::ios::binary | std::ios::app);
    csv.open(csv_path, std::ios::binary | std::ios::app);
    if (!jsonl || !csv) throw core::Error(core::ErrorKind::io, fmt::format("cannot append to the results in '{}'", out_dir));
  }

  std::mutex mu;
  std::condition_variable ready;
  Progress progress;
  progress.to_run = static_cast<int>(to_run_everywhere);
  progress.resumed = outcome.resumed;
  std::vector<ScanRow> fresh;
  fresh.reserve(to_run_everywhere);
  std::size_t sent = 0;        // rank > 0: rows of `fresh` already sent
  bool workers_done = false;  // rank > 0: no more rows of this process will come
  // Under the lock: a finished row, from this process or (rank 0) from another rank.
  auto record = [&](ScanRow row) {
    if (leader) {
      jsonl << row_to_jsonl(row) << '\n' << std::flush;
      csv << row_to_csv(row) << '\n' << std::flush;
    }
    fresh.push_back(std::move(row));
    ++progress.done;
    progress.elapsed_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    progress.last = &fresh.back();
    if (leader && options.on_progress) options.on_progress(progress);
  };
  // Each thread takes the next point not yet taken: points differ a lot in cost.
  auto run_one = [&](std::size_t i) {
    ScanRow row = run_point(spec, *todo[i], options.fidelity);
    std::lock_guard<std::mutex> lock(mu);
    record(std::move(row));
    ready.notify_all();
  };
  const int jobs = core::jobs_or_hardware(options.jobs);
  if (!spread) {
    core::parallel_pull(todo.size(), jobs, run_one);
  } else {
    // The calling thread talks to the other ranks (MPI funneled); the workers simulate.
    auto on_workers_done = [&] {
      std::lock_guard<std::mutex> lock(mu);
      workers_done = true;
      ready.notify_all();
    };
    auto talk_to_peers = [&] {
      if (leader) {
        std::map<std::string, const ScanPoint*> by_key;
        for (const auto& p : points) by_key.emplace(p.key, &p);
        while (auto line = peers.receive()) {
          std::optional<ScanRow> parsed = row_from_jsonl(*line);
          core::check_invariant(parsed.has_value(), "run_scan: a peer sent a row that does not parse");
          ScanRow row = std::move(*parsed);
          const auto it = by_key.find(row.key);
          core::check_invariant(it != by_key.end(), "run_scan: a peer sent a row of a point this scan does not have");
          row.index = it->second->index;
          row.values = it->second->values;
          row.family = it->second->family;
          std::lock_guard<std::mutex> lock(mu);
          record(std::move(row));
        }
      } else {
        std::unique_lock<std::mutex> lock(mu);
        for (;;) {
          ready.wait(lock, [&] { return sent < fresh.size() || workers_done; });
          while (sent < fresh.size()) {
            const std::string line = row_to_jsonl(fresh[sent++]);
            lock.unlock();
            peers.send(line);
            lock.lock();
          }
          if (workers_done && sent == fresh.size()) break;
        }
        lock.unlock();
        peers.finish();
      }
    };
    core::parallel_pull_alongside(todo.size(), jobs, run_one, on_workers_done, talk_to_peers);
  }
  if (leader) {
    jsonl.close();
    csv.close();
  }

  outcome.ran = static_cast<int>(fresh.size());
  for (auto& r : fresh) rows.push_back(std::move(r));
  sort_by_index(rows);
  if (leader) write_results(out_dir, outcome.meta.axis_paths, rows);
  outcome.rows = std::move(rows);
  outcome.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return outcome;
}

std::vector<ScanRow> merge_scans(const std::vector<std::string>& dirs, const std::string& out_dir) {
  if (dirs.empty()) throw core::Error(core::ErrorKind::input, "merge: name the scan output directories to join");
  const auto meta = read_meta(dirs[0]);
  std::map<std::string, ScanRow> by_key;
  for (const auto& d : dirs) {
    const auto m = read_meta(d);
    if (m.name != meta.name || m.points != meta.points || m.axis_paths != meta.axis_paths || m.plans != meta.plans)
      throw core::Error(core::ErrorKind::input,
                        fmt::format("merge: '{}' holds scan '{}' ({} points), '{}' holds '{}' ({} points): not parts of one scan",
                                    dirs[0], meta.name, meta.points, d, m.name, m.points));
    if (m.inputs != meta.inputs)
      throw core::Error(core::ErrorKind::input,
                        fmt::format("merge: '{}' and '{}' hold scan '{}' run from different scan files (inputs {} and {}): "
                                    "{}; not parts of one scan",
                                    dirs[0], d, m.name, meta.inputs.empty() ? "unknown" : meta.inputs,
                                    m.inputs.empty() ? "unknown" : m.inputs,
                                    first_differing_key(meta, m).empty()
                                        ? std::string("a key of the base experiment, an axis or a family changed between them")
                                        : "the first key that differs: " + first_differing_key(meta, m)));
    for (auto& r : read_rows((fs::path(d) / "results.jsonl").string())) {
      const auto [it, fresh] = by_key.emplace(r.key, r);
      if (!fresh && it->second.inputs != r.inputs)
        throw core::Error(core::ErrorKind::input,
                          fmt::format("merge: point '{}' ran different experiments in two of the folders (inputs {} and {}; "
                                      "'{}' is one): not parts of one scan",
                                      r.key, it->second.inputs, r.inputs, d));
    }
  }
  std::vector<ScanRow> rows;
  for (auto& [k, r] : by_key) rows.push_back(std::move(r));
  sort_by_index(rows);
  const OutDirLock out_lock(out_dir);
  write_results(out_dir, meta.axis_paths, rows);
  write_meta(out_dir, meta);
  return rows;
}

}  // namespace inflect::scan
