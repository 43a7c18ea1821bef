#pragma once
// `inflect placements` (docs/placements.md): the ways to lay an experiment's plan onto the sites of
// a geo-distributed cluster, each simulated and ranked by step time.
//
// A placement is a placement order (`parallel.order`, innermost first; `parallel.mesh` written
// outermost first) with tp kept innermost, so tensor-parallel peers share a node. Which dimension
// comes outermost decides which groups span sites: with the sites in node order (cluster.sites),
// the outermost dimension's groups cross a site boundary first. Orders that differ only in where a
// dimension of size 1 stands place every rank on the same device and are kept once. When a
// data-parallel (or expert-data-parallel) group spans sites, its collectives run flat (the
// library's ring or tree laid over the sites) or hierarchical (reduce-scatter inside each site,
// all-reduce across, all-gather inside: cluster.cross_site_collectives), and both are placements.
#include <array>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "inflect/analysis/run_report.hpp"
#include "inflect/net/collective_library.hpp"
#include "inflect/plan/experiment.hpp"
#include "inflect/plan/fidelity.hpp"
#include "inflect/workload/exec_graph.hpp"

namespace inflect::search {

/// One way to lay the plan onto the sites.
struct Placement {
  std::vector<plan::Dim> order;  // innermost first, as plan::ParallelPlan::order
  /// How collectives that span sites run (flat or hierarchical) when a data-parallel group spans
  /// sites; nullopt when none does (the experiment's own setting is kept: nothing it governs crosses).
  std::optional<net::CrossSite> cross_site;
  /// The dimensions whose groups span more than one site, in the order tp, cp, pp, ep, dp.
  std::vector<std::string> crossing;
  /// The order as `parallel.mesh` is written, outermost first, sizes > 1 only ("[dp 8, pp 4, tp 8]").
  std::string mesh;
  /// A short name: the mesh, and the cross-site form when there is one ("[dp 8, pp 4, tp 8] hierarchical").
  std::string name;
  /// What crosses the WAN, one phrase ("dp gradients, reduce-scatter inside each site and all-reduce across").
  std::string crosses;
};

/// The placements of `e` in a fixed order: the orders with tp innermost (the other dimensions in
/// every order, duplicates of one rank-to-device map kept once, the experiment's own order first
/// when it keeps tp innermost), each with flat and hierarchical cross-site collectives where a
/// data-parallel group spans sites. Throws core::Error(input) when the cluster has no sites
/// (nothing to place) or the plan has no dimension larger than 1 besides tp (one order only).
std::vector<Placement> enumerate_placements(const plan::Experiment& e);

/// The dimensions (tp, cp, pp, ep, dp) of `e`'s own placement whose groups span more than one site
/// (net::Topology::site_of of every group's members; rank r runs on device r).
std::vector<std::string> crossing_dims(const plan::Experiment& e);

/// `base` with the placement's order (and cross-site form, when it has one).
plan::Experiment with_placement(const plan::Experiment& base, const Placement& p);

/// Bytes a rank moves per step in collectives whose groups span sites, by dimension (indexed by
/// workload::ParallelDim; the collectives' sizes in nccl-tests' convention, summed over the step's
/// calls; the largest over ranks). Builds the experiment's execution graph.
std::array<core::Bytes, workload::kParallelDims> spanning_bytes(const plan::Experiment& e, plan::Fidelity fidelity);

/// The index of a dimension's name ("dp") in spanning_bytes' array.
std::size_t dim_index(const std::string& dim);

struct PlacementResult {
  Placement placement;
  analysis::RunReport report;
  std::array<core::Bytes, workload::kParallelDims> spanning{};  // spanning_bytes of the placement
  std::string error;     // the engine could not run it (the report is then empty)
  std::string why_loses;  // against the best placement; "" for the best
  bool ok() const { return error.empty() && report.simulated; }
};

struct PlacementsOptions {
  int jobs = 1;  // threads (the results do not depend on it)
  plan::Fidelity fidelity = plan::Fidelity::symmetric;
  /// Called after each placement is simulated, under a lock: (done, total, that placement).
  std::function<void(int, int, const PlacementResult&)> on_progress;
};

struct PlacementsRun {
  std::string name;  // the experiment's
  std::string plan;  // plan::plan_label
  int devices = 0;
  std::vector<std::string> sites;  // names, in node order
  /// Every placement, best step time first (equal times in enumeration order; those not
  /// simulated last).
  std::vector<PlacementResult> ranked;
  double wall_s = 0;  // wall-clock, not part of any result
  int jobs = 1;
};

/// Enumerates, simulates each placement (core::parallel_pull over `jobs` threads) and ranks them.
PlacementsRun run_placements(const plan::Experiment& e, const PlacementsOptions& options);

/// Why `loser` is slower than `best`, one phrase from the largest differences of their breakdowns
/// ("+1.93 s exposed dp (dp gradients cross the WAN, ring laid over the sites)").
std::string why_loses(const PlacementResult& loser, const PlacementResult& best);

/// What `inflect placements` prints: the table by step time, what crosses, why each loses.
std::string format_placements(const PlacementsRun& r);
/// placements.json (docs/placements.md). `include_volatile` adds the wall-clock figures.
std::string placements_to_json(const PlacementsRun& r, bool include_volatile = true);

}  // namespace inflect::search
