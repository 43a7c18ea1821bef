#include "inflect/study/compare.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <variant>

#include "inflect/core/error.hpp"
#include "inflect/io/report_fields.hpp"

namespace inflect::study {

namespace {

// Differences in what two matched points read or ran with, each with the points it touches, in
// the order first seen: the sides were meant to differ only in what the points vary (their key).
class InputDiffs {
 public:
  void add(const analysis::Provenance& base, const analysis::Provenance& now) {
    std::map<std::string, const analysis::InputFile*> b, n;
    for (const auto& f : base.inputs) b[f.path] = &f;
    for (const auto& f : now.inputs) n[f.path] = &f;
    for (const auto& [path, f] : b) {
      const auto it = n.find(path);
      if (it == n.end()) note(fmt::format("{} {} is read only by the base", f->role, path));
      else if (it->second->hash != f->hash) note(fmt::format("{} {} differs ({} -> {})", f->role, path, f->hash, it->second->hash));
    }
    for (const auto& [path, f] : n)
      if (!b.contains(path)) note(fmt::format("{} {} is read only by the new side", f->role, path));
    std::map<std::string, std::string> be(base.effective.begin(), base.effective.end());
    for (const auto& [key, value] : now.effective) {
      const auto it = be.find(key);
      if (it == be.end()) note(fmt::format("effective {} is set only on the new side ({})", key, value));
      else if (it->second != value) note(fmt::format("effective {}: {} -> {}", key, it->second, value));
    }
  }
  std::vector<std::string> lines() const {
    std::vector<std::string> out;
    for (const auto& what : order_)
      out.push_back(fmt::format("{} ({} point{})", what, count_.at(what), count_.at(what) == 1 ? "" : "s"));
    return out;
  }

 private:
  void note(std::string what) {
    if (count_[what]++ == 0) order_.push_back(std::move(what));
  }
  std::vector<std::string> order_;
  std::map<std::string, int> count_;
};

std::string show(double v) { return fmt::format("{:.6g}", v); }

}  // namespace

const std::vector<std::string>& default_metrics() {
  static const std::vector<std::string> m = {"step_time_s",        "tokens_per_s",       "mfu",
                                             "memory.peak_bytes",  "power.avg_device_w", "power.energy_per_step_j"};
  return m;
}

std::optional<double> metric_value(const analysis::RunReport& r, const std::string& metric) {
  const io::FieldName name = io::find_field(metric);
  if (!name.field) throw core::Error(core::ErrorKind::input, fmt::format("unknown metric '{}'", metric));
  const io::FieldValue v = io::field_value(name, r);
  if (const auto* d = std::get_if<double>(&v)) return *d;
  if (const auto* i = std::get_if<std::int64_t>(&v)) return static_cast<double>(*i);
  return std::nullopt;
}

std::vector<std::string> PointComparison::failures() const {
  std::vector<std::string> out = status_failures;
  for (const auto& d : metrics) out.insert(out.end(), d.why.begin(), d.why.end());
  return out;
}

bool PointComparison::failed() const {
  return !status_failures.empty() || std::any_of(metrics.begin(), metrics.end(), [](const MetricDelta& d) { return d.failed(); });
}

int Comparison::failed_points() const {
  int n = 0;
  for (const auto& p : points) n += p.failed() ? 1 : 0;
  return n;
}

Comparison compare(const ResultSet& base, const ResultSet& now, const CompareOptions& options) {
  if (base.kind != now.kind)
    throw core::Error(core::ErrorKind::input,
                      fmt::format("{} is a {} and {} a {}: compare two reports, two scan result folders or two study result "
                                  "folders",
                                  base.path, set_kind_name(base.kind), now.path, set_kind_name(now.kind)));
  Comparison c;
  c.base_path = base.path;
  c.now_path = now.path;
  c.thresholds = options.thresholds;
  c.metrics = options.metrics.empty() ? default_metrics() : options.metrics;
  for (const auto& t : c.thresholds)
    if (std::find(c.metrics.begin(), c.metrics.end(), t.metric) == c.metrics.end()) c.metrics.push_back(t.metric);

  std::map<std::string, const ResultPoint*> new_by_key;
  for (const auto& p : now.points) new_by_key[p.key] = &p;
  InputDiffs diffs;

  for (const auto& b : base.points) {
    PointComparison pc;
    pc.key = b.key;
    pc.base = &b;
    const auto it = new_by_key.find(b.key);
    if (it == new_by_key.end()) {
      pc.status_failures.push_back("in the base only (gone from the new side)");
      c.points.push_back(std::move(pc));
      continue;
    }
    const ResultPoint& n = *it->second;
    new_by_key.erase(it);
    pc.now = &n;
    if (b.status != n.status) pc.status_failures.push_back(fmt::format("status changed: {} -> {}", b.status, n.status));
    if (b.has_report && n.has_report) diffs.add(b.report.provenance, n.report.provenance);
    for (const auto& metric : c.metrics) {
      MetricDelta d;
      d.metric = metric;
      if (b.has_report) d.base = metric_value(b.report, metric);
      if (n.has_report) d.now = metric_value(n.report, metric);
      if (d.base && d.now) d.relative = relative_change(*d.base, *d.now);
      for (const auto& t : c.thresholds) {
        if (t.metric != metric) continue;
        // A figure that became unknown (or known) while the status held is a change no threshold
        // can measure: it fails the thresholds on that metric.
        const bool crossed = (d.base && d.now) ? crosses(t, *d.base, *d.now) : (d.base.has_value() != d.now.has_value() &&
                                                                                  b.status == n.status);
        if (!crossed) continue;
        d.crossed.push_back(t.text);
        d.why.push_back(
            d.base && d.now
                ? fmt::format("{} {} -> {} ({}) crosses {}", metric, show(*d.base), show(*d.now),
                              d.relative ? fmt::format("{:+.2f}%", 100 * *d.relative) : std::string("from 0"), t.text)
                : fmt::format("{} {} -> {} crosses {}", metric, d.base ? show(*d.base) : "null", d.now ? show(*d.now) : "null",
                              t.text));
      }
      pc.metrics.push_back(std::move(d));
    }
    c.points.push_back(std::move(pc));
  }
  for (const auto& n : now.points) {
    if (!new_by_key.contains(n.key)) continue;
    PointComparison pc;
    pc.key = n.key;
    pc.now = &n;
    pc.status_failures.push_back("in the new side only (not in the base)");
    c.points.push_back(std::move(pc));
  }
  c.warnings = diffs.lines();
  return c;
}

}  // namespace inflect::study
