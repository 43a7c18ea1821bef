#pragma once
// What every run of the engine on an experiment's cluster shares (analysis/simulate and
// analysis/jobs): the engine's options from the cluster, a device's cooling before any thermal
// variation, the breakdown of one rank's times, and a report's rates from its step. Private to the
// analysis layer.
#include "inflect/analysis/run_report.hpp"
#include "inflect/hw/power_model.hpp"
#include "inflect/plan/experiment.hpp"
#include "inflect/sim/engine.hpp"

namespace inflect::analysis {

/// The cluster's collective tuning, communication interference, power model (which must outlive
/// the options) and power cap. Devices' cooling, variability and an observer are the caller's.
sim::EngineOptions engine_options(const plan::ClusterSpec& c, const hw::PowerModel& power);

/// Every device's cooling on the cluster before thermal variation: its coolant, the resistance of
/// the cluster's cooling kind, the capacitance, and a start at the temperature idle power settles at.
sim::DeviceCooling base_cooling(const plan::ClusterSpec& c, const hw::PowerModel& power);

/// One rank's engine times as a breakdown whose parts sum to its finish; `across_sites` fills
/// exposed_across_sites (a cluster of several sites). The note names the rank "rank N".
Breakdown breakdown_of(const sim::RankTimes& t, bool across_sites);

/// The report's rates from its step time: tokens/s, model and hardware TFLOP/s per GPU (over
/// r.devices) and MFU against peak_tflops_per_gpu (which must be set); 0 for a step of no time.
/// Divided in this order, as the goldens compare the bits. simulate_graph's report and the DiLoCo
/// period's mean step (analysis/diloco) both take their rates from here.
void derive_rates(RunReport& r);

}  // namespace inflect::analysis
