#include "inflect/search/search_output.hpp"

#include <fmt/format.h>

#include <cmath>
#include <nlohmann/json.hpp>

#include "inflect/core/strings.hpp"
#include "inflect/io/report_json.hpp"
#include "inflect/plan/schedule.hpp"

namespace inflect::search {

namespace {

using Json = nlohmann::ordered_json;

template <class T, class F>
std::string set_of(const std::vector<T>& v, F f) {
  std::string s = "{";
  for (std::size_t i = 0; i < v.size(); ++i) {
    if (i) s += ",";
    s += f(v[i]);
  }
  return s + "}";
}

std::string num(int v) { return std::to_string(v); }


std::string gb(double bytes) { return fmt::format("{:.1f}", bytes / 1e9); }

// The estimate's figures under the names search.json has always given them (report fields and
// their aliases, io/report_fields.hpp): an estimate is a partial report of the same plan.
constexpr std::string_view kEstimateFigures[] = {"step_time_s",       "compute_s",         "exposed_comm_s.dp",
                                                 "exposed_comm_s.tp", "exposed_comm_s.pp", "exposed_comm_s.cp",
                                                 "exposed_comm_s.ep", "bubble_s",          "memory_peak_bytes"};

Json estimate_json(const Estimate& e) {
  analysis::RunReport r;
  r.step_time = core::Seconds(e.step_s);
  r.breakdown.compute = core::Seconds(e.compute_s);
  r.breakdown.exposed_comm = {core::Seconds(e.dp_s), core::Seconds(e.tp_s), core::Seconds(e.pp_s), core::Seconds(e.cp_s),
                             core::Seconds(e.ep_s)};
  r.breakdown.bubble = core::Seconds(e.bubble_s);
  r.memory.peak = core::Bytes(e.memory_peak_bytes);
  Json j;
  io::write_fields(j, r, kEstimateFigures);
  return j;
}

Json plan_json(const Candidate& c) {
  Json j;
  j["tp"] = c.tp;
  j["cp"] = c.cp;
  j["pp"] = c.pp;
  j["dp"] = c.dp;
  j["ep"] = c.ep;
  j["sequence_parallel"] = c.sequence_parallel;
  j["zero"] = c.zero;
  j["schedule"] = plan::schedule_name(c.schedule);
  j["virtual_stages"] = c.virtual_stages;
  j["micro_batch"] = c.micro_batch;
  j["recompute"] = workload::recompute_name(c.recompute);
  return j;
}

}  // namespace

std::string describe_space(const SearchSpace& s) {
  return fmt::format(
      "tp {} · cp {} · pp {} · ep {} · zero {} · schedule {} · virtual_stages {} · micro_batch {} · recompute {} · "
      "sequence_parallel {}",
      set_of(s.tp, num), set_of(s.cp, num), set_of(s.pp, num), set_of(s.ep, num), set_of(s.zero, num),
      set_of(s.schedules, [](plan::Schedule x) { return std::string(plan::schedule_name(x)); }),
      set_of(s.virtual_stages, num), set_of(s.micro_batch, [](std::int64_t x) { return std::to_string(x); }),
      set_of(s.recompute, [](plan::Recompute x) { return std::string(workload::recompute_name(x)); }),
      set_of(s.sequence_parallel, [](bool x) { return std::string(x ? "true" : "false"); }));
}

std::string format_search(const SearchResult& r, const SearchSpec& spec) {
  const auto& b = spec.base;
  std::string out = fmt::format("search {}: {} x {} ({} nodes of {}), model {}, global batch {} x {} tokens\n", r.name, r.devices,
                                b.cluster.device.name, b.cluster.nodes, b.cluster.topology.name, b.workload.model->name,
                                b.training.global_batch, b.training.seq_len);
  out += fmt::format("space: {}\n", describe_space(r.space));
  out += fmt::format("plans: {} enumerated, {} pruned (memory does not fit), {} estimated, {} simulated\n", r.enumerated, r.pruned,
                     r.estimated, r.simulated);
  out += fmt::format("time: enumerate+estimate {:.3f} s ({:.0f} plans/s, {} threads), simulate {:.2f} s\n", r.enumerate_s + r.estimate_s,
                     r.plans_per_s(), r.jobs, r.simulate_s);
  if (r.plans.empty()) {
    out += "no plan fits in memory: nothing to simulate (widen the space, e.g. more pp or recompute: [full])\n";
    return out;
  }
  std::size_t w = 4;
  for (const auto& p : r.plans) w = std::max(w, p.label.size());
  out += fmt::format("\n{:>3} {:>4}  {:<{}} {:>9} {:>9} {:>10} {:>6} {:>7}  {:>7} {:>6} {:>6} {:>6} {:>6} {:>6} {:>6}\n", "#", "est",
                     "plan", w, "step s", "est s", "tokens/s", "MFU", "mem GB", "compute", "bubble", "dp", "tp", "pp", "cp", "ep");
  int rank = 0;
  for (const auto& p : r.plans) {
    ++rank;
    const std::string& name = p.label;
    if (!p.report || !p.report->simulated) {
      out += fmt::format("{:>3} {:>4}  {:<{}} {:>9} {:>9.3f}  {}\n", "-", p.estimate_rank, name, w, "failed", p.estimate.step_s,
                         p.error.empty() ? (p.report ? p.report->not_simulated : std::string()) : p.error);
      continue;
    }
    const auto& rep = *p.report;
    const auto& bd = rep.breakdown;
    out += fmt::format("{:>3} {:>4}  {:<{}} {:>9.3f} {:>9.3f} {:>10.4g} {:>5.1f}% {:>7}  {:>7.3f} {:>6.3f} {:>6.3f} {:>6.3f} {:>6.3f} {:>6.3f} {:>6.3f}\n",
                       rank, p.estimate_rank, name, w, rep.step_time.value(), p.estimate.step_s, rep.tokens_per_s.value_or(std::nan("")), 100 * rep.mfu.value_or(std::nan("")),
                       gb(rep.memory.peak.value()), bd.compute.value(), bd.bubble.value(), bd.exposed_comm.dp.value(), bd.exposed_comm.tp.value(),
                       bd.exposed_comm.pp.value(), bd.exposed_comm.cp.value(), bd.exposed_comm.ep.value());
  }
  int ok = 0;
  for (const auto& p : r.plans) ok += p.report && p.report->simulated;
  out += fmt::format("\nranking: the engine's best plan was #{} of the estimate", r.engine_best_estimate_rank);
  out += ok >= 2 ? fmt::format("; Kendall tau between the estimate's and the engine's order of the {} simulated plans: {:.2f}\n", ok,
                               r.kendall_tau)
                 : std::string("\n");
  return out;
}

std::string search_to_json(const SearchResult& r, bool include_volatile) {
  Json j;
  j["name"] = r.name;
  j["devices"] = r.devices;
  j["space"] = describe_space(r.space);
  j["enumerated"] = r.enumerated;
  j["pruned"] = r.pruned;
  j["estimated"] = r.estimated;
  j["simulated"] = r.simulated;
  j["kendall_tau"] = r.kendall_tau;
  j["engine_best_estimate_rank"] = r.engine_best_estimate_rank;
  // What depends on the machine (wall-clock figures, the thread count) in one object, as in
  // report.json's simulator.timing, so a comparison masks one key.
  if (include_volatile) {
    Json timing;
    timing["enumerate_estimate_s"] = r.enumerate_s + r.estimate_s;
    timing["plans_per_s"] = r.plans_per_s();
    timing["simulate_s"] = r.simulate_s;
    timing["jobs"] = r.jobs;
    j["timing"] = std::move(timing);
  }
  Json plans = Json::array();
  for (const auto& p : r.plans) {
    Json x;
    x["plan"] = p.label;
    x["parallel"] = plan_json(p.plan);
    x["estimate_rank"] = p.estimate_rank;
    x["estimate"] = estimate_json(p.estimate);
    x["report"] = p.report ? io::report_json(*p.report, include_volatile) : Json(nullptr);
    if (!p.error.empty()) x["error"] = p.error;
    plans.push_back(std::move(x));
  }
  j["plans"] = std::move(plans);
  return j.dump(2) + "\n";
}

}  // namespace inflect::search
