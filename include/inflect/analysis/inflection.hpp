#pragma once
// Where a scaling curve bends and where one plan overtakes another: the findings a scan reports.
//
// Pure functions over (scale, throughput, breakdown) points, so they can be tested on synthetic
// curves with known answers. The knee is found with Kneedle (Satopaa, Albrecht, Irwin and Raghavan,
// "Finding a 'Kneedle' in a Haystack", ICDCS workshops 2011); the other findings are thresholds the
// user sets. Every finding carries a reason read off the step-time breakdown.
#include <optional>
#include <string>
#include <vector>

#include "inflect/analysis/run_report.hpp"

namespace inflect::analysis {

/// One simulated point of a series: its scale (devices, or the value of the swept axis), its
/// throughput (tokens/s; steps/s for a replayed trace that does not say its tokens, Series::unit)
/// and its step-time breakdown (for the "why" of each finding).
struct ScalingPoint {
  double scale = 0;
  /// Devices the point ran on, when the scale is another axis (micro-batch, inlet temperature);
  /// 0 when the scale is the device count.
  double devices = 0;
  double throughput = 0;
  core::Seconds step_time;
  Breakdown breakdown;
};

/// A named curve: one plan family (and one value of every other swept axis) along the scale axis.
/// `infeasible` lists the scales where the series has no figure, with the reason (does not fit,
/// does not divide), so a finding can say where a plan stops being possible.
struct Series {
  std::string name;
  std::vector<ScalingPoint> points;  // sorted by scale, one per scale
  std::string unit = "tokens/s";     // the throughput's
  struct Gap {
    double scale = 0;
    std::string reason;
  };
  std::vector<Gap> infeasible;
};

/// Per-point derived figures of a series, in the order of its points.
struct ScalingMetrics {
  double per_device = 0;          // throughput / devices (the scale, when it is the device count)
  double efficiency = 1;          // (throughput / scale) against the first point's (1 = linear in scale)
  double marginal_per_device = 0; // (y_i - y_{i-1}) / (x_i - x_{i-1}); 0 at the first point
  double doubling_gain = 0;       // (y_i / y_{i-1})^(1 / log2(x_i / x_{i-1})) - 1; 0 at the first
};

std::vector<ScalingMetrics> scaling_metrics(const Series& s);

struct InflectionOptions {
  /// Kneedle's S: how far the normalised difference curve must fall below a local maximum
  /// before that maximum is declared a knee, in units of the mean normalised x step. Larger is
  /// more conservative; the paper recommends 1.
  double knee_sensitivity = 1.0;
  /// Run Kneedle on log2(scale) (the scale axis doubles from point to point in most scans) rather
  /// than on the scale itself.
  bool knee_log_scale = true;
  /// "Each doubling must buy at least this much more throughput" (0.6 = 60%); unset = not checked.
  std::optional<double> min_doubling_gain;
  /// Scaling efficiency against linear below which a finding is reported (0.7 = 70%); unset =
  /// not checked.
  std::optional<double> efficiency_floor;
};

/// Kneedle on a concave increasing curve: the indices of the knees, in order (usually none or
/// one). Needs at least three points; x must be strictly increasing.
std::vector<std::size_t> kneedle(const std::vector<double>& x, const std::vector<double>& y, double sensitivity);

/// The series' inflection verdict, one sentence that every series gets: where it bends and why
/// (each Kneedle knee, with the efficiency either side and the overhead that grew), or that it does
/// not ("no knee between 16 and 128 GPUs: efficiency stays above 97%", the figure being the largest
/// whole percent below the lowest efficiency), or why no knee can be told (fewer than three points).
/// `devices_scale`: the scale is the device count, so efficiency against linear means something;
/// along another axis (micro-batch, inlet temperature) the sentence gives the throughput change.
std::string inflection_verdict(const Series& s, const InflectionOptions& o, const std::string& unit, bool devices_scale);

enum class FindingKind { knee, doubling_gain, efficiency_floor, crossover, infeasible, lead };

/// "knee", "doubling-gain", "efficiency-floor", "crossover", "infeasible", "lead".
std::string finding_kind_name(FindingKind k);

struct Finding {
  FindingKind kind = FindingKind::knee;
  std::string series;  // the series it is about; for a crossover, the one that overtakes
  std::string other;   // crossover: the series overtaken
  double scale = 0;    // where: the point's scale, or the interpolated crossover scale
  double from_scale = 0, to_scale = 0;  // the interval the finding spans (equal for a point)
  std::string what;    // one sentence: what happens where
  std::string why;     // one sentence: the breakdown component that explains it
};

/// The findings of one series: its knee, the first interval whose doubling gain falls below the
/// threshold, the first point whose efficiency falls below the floor, and where it becomes
/// infeasible. `unit` names the scale in sentences ("GPUs").
std::vector<Finding> series_findings(const Series& s, const InflectionOptions& o, const std::string& unit);

/// Where `a` and `b` swap order: for every pair of consecutive common scales across which the sign
/// of throughput(a) - throughput(b) changes, one finding, the crossover scale interpolated in
/// log2(scale). The finding's `series` is the one ahead after the crossing. When they never cross
/// (and share a scale), one `lead` finding says which is ahead and by how much.
/// A swap counts only when the leader on each side of it is ahead by more than
/// kCrossoverMargin (0.5%): two curves within a model's own resolution of each other are tied,
/// not crossing (a crossover was once reported on 9.636e5 against 9.635e5 tokens/s).
inline constexpr double kCrossoverMargin = 0.005;
std::vector<Finding> crossovers(const Series& a, const Series& b, const std::string& unit);

/// The breakdown components as (name, seconds), in a fixed order: compute (without interference),
/// compute interference, exposed DP/TP/PP/CP/EP communication, pipeline bubble, other waiting;
/// then, only when the breakdown has one (device variability), waiting for stragglers.
std::vector<std::pair<std::string, double>> breakdown_components(const Breakdown& b);

/// Two breakdowns' components side by side, the same list for both, so that entry i of one is
/// comparable with entry i of the other: when only one has the straggler row, the other counts 0
/// there.
std::pair<std::vector<std::pair<std::string, double>>, std::vector<std::pair<std::string, double>>>
paired_breakdown_components(const Breakdown& a, const Breakdown& b);

/// "1,024" for 1024; up to three significant decimals for non-integers.
std::string format_scale(double scale);

}  // namespace inflect::analysis
