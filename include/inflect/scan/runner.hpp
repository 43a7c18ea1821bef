#pragma once
// Runs a scan's points on a pool of threads, appending each row to results.jsonl and results.csv as
// it finishes (an interrupted scan keeps every finished row), and rewriting both in point order at
// the end (so the files do not depend on --jobs). `resume` skips points whose row is already there.
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "inflect/plan/compiler.hpp"
#include "inflect/scan/results.hpp"
#include "inflect/scan/scan_file.hpp"

namespace inflect::scan {

struct Progress {
  int done = 0;      // rows finished in this run
  int to_run = 0;    // rows this run will produce
  int resumed = 0;   // rows kept from an earlier run
  double elapsed_s = 0;
  const ScanRow* last = nullptr;  // the row that just finished
};

/// One run spread over several processes (MPI ranks under mpirun): process `rank` of `ranks`
/// simulates every ranks-th of the points left to run, and rank 0 alone writes the files, with
/// every rank's rows appended as they arrive. The transport is three calls that the CLI's MPI glue
/// provides (the scan layer knows no MPI); all are made from the thread that called run_scan.
struct Peers {
  int rank = 0;
  int ranks = 1;
  std::function<void(const std::string&)> send;         // rank > 0: one finished row (a JSONL line) to rank 0
  std::function<void()> finish;                         // rank > 0: no more rows from this rank
  std::function<std::optional<std::string>()> receive;  // rank 0: the next row of any rank; nullopt once every rank finished
};

struct ScanOptions {
  int jobs = 0;  // worker threads; 0 = every hardware thread
  bool resume = false;
  int shard_index = 0;  // run the points whose index % shard_count == shard_index
  int shard_count = 1;
  plan::Fidelity fidelity = plan::Fidelity::symmetric;
  /// Called (under a lock) each time a row finishes (on rank 0: also rows from other ranks).
  std::function<void(const Progress&)> on_progress;
  Peers peers;  // one process by default
};

struct ScanOutcome {
  std::vector<ScanRow> rows;  // every row of this shard, in point order
  int points = 0;             // points in the whole scan
  int ran = 0;                // simulated in this run
  int resumed = 0;            // kept from results.jsonl
  double wall_s = 0;
  ScanMeta meta;
};

/// Runs one point through the experiment loader and the simulator. Never throws for a bad point:
/// an impossible plan becomes an `invalid` row with the loader's message, a simulator error `failed`.
ScanRow run_point(const ScanSpec& spec, const ScanPoint& point, plan::Fidelity fidelity);

/// Runs the scan into `out_dir` (created if missing): results.jsonl, results.csv, scan.json. With
/// peers, ranks other than 0 write nothing and return only the rows they simulated.
ScanOutcome run_scan(const ScanSpec& spec, const std::string& out_dir, const ScanOptions& options);

/// Joins the output directories of one scan's shards (or partial runs) into `out_dir`: every
/// directory must hold the same scan (name, axes, families, point count); a point present in
/// several keeps the first directory's row. Writes results and scan.json; returns the rows.
std::vector<ScanRow> merge_scans(const std::vector<std::string>& dirs, const std::string& out_dir);

/// The scan.json contents for a spec.
ScanMeta meta_of(const ScanSpec& spec, int points, plan::Fidelity fidelity);

}  // namespace inflect::scan
