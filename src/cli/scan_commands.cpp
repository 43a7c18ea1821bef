// `inflect scan`, `inflect report` and `inflect merge`.
#include <fmt/format.h>
#include <unistd.h>

#include <charconv>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <map>
#include <string_view>

#include "cli/commands.hpp"
#include "cli/mpi_peers.hpp"
#include "inflect/core/error.hpp"
#include "inflect/scan/report.hpp"
#include "inflect/scan/runner.hpp"

namespace inflect::cli {

namespace {

// As many shards as a scan may have points (scan_file.cpp's bound): more would only be empty.
constexpr long long kMaxShards = 100000;

std::string clock(double s) {
  const long t = static_cast<long>(s + 0.5);
  return t >= 3600 ? fmt::format("{}:{:02}:{:02}", t / 3600, t / 60 % 60, t % 60) : fmt::format("{}:{:02}", t / 60, t % 60);
}

// Whole decimal numbers only, refused when out of range (sscanf's %d wraps a value past int on
// some libcs: 1/99999999999 read as a small N).
std::pair<int, int> parse_shard(const std::string& s) {
  const auto bad = [&](const char* why) {
    throw core::Error(core::ErrorKind::input,
                      fmt::format("--shard '{}': {}; expected i/N with 1 <= i <= N <= {} (the i-th of N disjoint parts)",
                                  s, why, kMaxShards));
  };
  const auto slash = s.find('/');
  if (slash == std::string::npos) bad("no '/'");
  const auto number = [&](std::string_view t) {
    long long v = 0;
    const auto [end, ec] = std::from_chars(t.data(), t.data() + t.size(), v);
    if (t.empty() || ec == std::errc::invalid_argument || end != t.data() + t.size()) bad("not a whole number");
    if (ec == std::errc::result_out_of_range || v < 1 || v > kMaxShards) bad("out of range");
    return static_cast<int>(v);
  };
  const std::string_view sv(s);
  const int i = number(sv.substr(0, slash));
  const int n = number(sv.substr(slash + 1));
  if (i > n) bad("i exceeds N");
  return {i - 1, n};
}

void print_progress(const scan::Progress& p, bool tty) {
  const int done = p.done;
  const double eta = done > 0 ? p.elapsed_s / done * (p.to_run - done) : 0;
  const auto& r = *p.last;
  if (tty) {
    constexpr int width = 30;
    const int fill = p.to_run > 0 ? width * done / p.to_run : width;
    std::fprintf(stderr, "\r[%s%s] %d/%d points  %s elapsed, ETA %s   ", std::string(static_cast<std::size_t>(fill), '#').c_str(),
                 std::string(static_cast<std::size_t>(width - fill), '-').c_str(), done, p.to_run, clock(p.elapsed_s).c_str(),
                 clock(eta).c_str());
    if (done == p.to_run) std::fprintf(stderr, "\n");
  } else {
    std::string what = r.status == scan::RowStatus::ok ? fmt::format("step {:.4g} s, {:.4g} tokens/s", r.report.step_time.value(), r.report.tokens_per_s.value_or(std::nan("")))
                                                       : scan::status_name(r.status);
    std::fprintf(stderr, "scan: %d/%d [%d] %s: %s (ETA %s)\n", done, p.to_run, r.index,
                 r.key.empty() ? "base" : r.key.c_str(), what.c_str(), clock(eta).c_str());
  }
  std::fflush(stderr);
}

void print_outcome_counts(const std::vector<scan::ScanRow>& rows) {
  std::map<std::string, int> by;
  for (const auto& r : rows) ++by[scan::status_name(r.status)];
  std::string s;
  for (const auto& [k, v] : by) s += fmt::format("{}{} {}", s.empty() ? "" : ", ", v, k);
  std::printf("rows: %s\n", s.c_str());
  // The distinct reasons of impossible points, so a typo that makes every point invalid is seen.
  std::map<std::string, int> reasons;
  for (const auto& r : rows)
    if (r.status == scan::RowStatus::invalid || r.status == scan::RowStatus::failed) ++reasons[r.reason];
  int shown = 0;
  for (const auto& [reason, n] : reasons) {
    if (++shown > 5) break;
    std::printf("  %d x %s\n", n, reason.c_str());
  }
}

}  // namespace

namespace {

int scan_on_rank(const ScanArgs& a, const MpiScope& mpi) {
  auto spec = scan::load_scan(a.file);
  if (const double n = scan::points_before_filters(spec); n > a.max_points)
    throw core::Error(core::ErrorKind::input,
                      fmt::format("{}: the scan expands to {:.0f} points before its where: filters, over the budget of {} "
                                  "(--max-points); narrow an axis, split the scan, or raise --max-points on purpose",
                                  a.file, n, a.max_points));
  spec.catalog = load_catalog(a.catalog_dirs);
  if (!a.profile.empty()) spec.profile = io::load_profile(a.profile);
  scan::ScanOptions o;
  o.peers = mpi.peers();
  o.jobs = a.jobs;
  o.resume = a.resume;
  if (!a.shard.empty()) std::tie(o.shard_index, o.shard_count) = parse_shard(a.shard);
  o.fidelity = a.fidelity;
  const bool tty = isatty(fileno(stderr)) != 0;
  if (!a.quiet && mpi.rank() == 0) o.on_progress = [tty](const scan::Progress& p) { print_progress(p, tty); };
  const auto outcome = scan::run_scan(spec, a.out_dir, o);
  if (mpi.rank() != 0) return 0;  // rank 0 wrote the files and reports what every rank ran
  std::printf("scan %s: %d points%s%s, %d simulated now, %d kept from an earlier run, %.2f s wall (%.1f points/s)\n",
              spec.name.c_str(), outcome.points,
              o.shard_count > 1 ? fmt::format(" (shard {}/{}: {})", o.shard_index + 1, o.shard_count, outcome.rows.size()).c_str() : "",
              mpi.ranks() > 1 ? fmt::format(" over {} MPI ranks", mpi.ranks()).c_str() : "", outcome.ran, outcome.resumed,
              outcome.wall_s, outcome.wall_s > 0 ? outcome.ran / outcome.wall_s : 0.0);
  print_outcome_counts(outcome.rows);
  const std::string findings = scan::write_reports(a.out_dir);
  std::printf("\n%s\n", findings.c_str());
  const auto dir = std::filesystem::path(a.out_dir);
  std::printf("wrote %s, %s, %s, %s\n", (dir / "results.csv").c_str(), (dir / "results.jsonl").c_str(),
              (dir / "report.md").c_str(), (dir / "report.html").c_str());
  bool any_ran = false;
  for (const auto& r : outcome.rows) any_ran = any_ran || r.status != scan::RowStatus::invalid;
  if (!outcome.rows.empty() && !any_ran) {
    std::fprintf(stderr, "inflect: error: every point of the scan is invalid (reasons above)\n");
    return 2;
  }
  return 0;
}

}  // namespace

int cmd_scan(const ScanArgs& a) {
  MpiScope mpi;
  try {
    return scan_on_rank(a, mpi);
  } catch (const core::Error& e) {
    if (mpi.ranks() > 1) {
      // The other ranks would wait for this one's rows for ever: report, then end them all.
      std::fprintf(stderr, "inflect: error (rank %d of %d): %s\n", mpi.rank(), mpi.ranks(), core::format_error(e).c_str());
      std::fflush(stderr);
      mpi.abort(e.kind() == core::ErrorKind::internal ? 1 : 2);
    }
    throw;
  }
}

int cmd_report(const std::string& dir) {
  const std::string findings = scan::write_reports(dir);
  std::printf("%s", findings.c_str());
  const auto d = std::filesystem::path(dir);
  std::printf("wrote %s, %s\n", (d / "report.md").c_str(), (d / "report.html").c_str());
  return 0;
}

int cmd_merge(const std::vector<std::string>& dirs, const std::string& out_dir) {
  const auto rows = scan::merge_scans(dirs, out_dir);
  const auto meta = scan::read_meta(out_dir);
  std::printf("merged %zu directories: %zu of %d points\n", dirs.size(), rows.size(), meta.points);
  print_outcome_counts(rows);
  std::printf("\n%s", scan::write_reports(out_dir).c_str());
  return 0;
}

}  // namespace inflect::cli
