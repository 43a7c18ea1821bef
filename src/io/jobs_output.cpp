#include "inflect/io/jobs_output.hpp"

#include <fmt/format.h>

#include <nlohmann/json.hpp>

namespace inflect::io {
namespace {

using Json = nlohmann::ordered_json;

std::string where(const analysis::JobResult& j) {
  std::string out;
  for (const auto& [site, n] : j.sites) out += fmt::format("{}{}{}", out.empty() ? "" : " + ", site.empty() ? "" : site + " ", n);
  return out;
}

std::string rate(const std::optional<double>& x) { return x ? fmt::format("{:.0f}", *x) : std::string("-"); }

Json breakdown_json(const analysis::Breakdown& b) {
  Json j;
  j["compute_s"] = b.compute.value();
  j["interference_s"] = b.interference.value();
  j["throttle_s"] = b.throttle.value();
  Json x;
  x["dp"] = b.exposed_comm.dp.value();
  x["tp"] = b.exposed_comm.tp.value();
  x["pp"] = b.exposed_comm.pp.value();
  x["cp"] = b.exposed_comm.cp.value();
  x["ep"] = b.exposed_comm.ep.value();
  j["exposed_comm_s"] = std::move(x);
  j["bubble_s"] = b.bubble.value();
  j["other_s"] = b.other.value();
  j["critical_rank"] = b.critical_rank_note;
  return j;
}

Json optional_json(const std::optional<double>& x) { return x ? Json(*x) : Json(nullptr); }

}  // namespace

std::string format_jobs(const analysis::JobsRun& r) {
  std::string sites;
  for (const auto& s : r.sites) sites += fmt::format("{}{}", sites.empty() ? "" : ", ", s);
  std::string out = fmt::format("jobs {}: {} nodes ({} devices){}\n", r.name, r.nodes, r.devices,
                                sites.empty() || r.sites.size() < 2 ? std::string() : fmt::format(", sites {}", sites));
  int rank = 0;
  for (const auto& p : r.ranked) {
    const double loss = p.tokens_per_s_alone > 0 ? p.tokens_per_s / p.tokens_per_s_alone - 1 : 0;
    out += fmt::format("\n{}. {}: {:.0f} tokens/s together ({:.0f} with each job alone on the same devices, {:+.2f}%)\n", ++rank,
                       analysis::policy_name(p.policy), p.tokens_per_s, p.tokens_per_s_alone, loss * 100);
    std::size_t wn = 3, wp = 4, ww = 5;
    for (const auto& j : p.jobs) {
      wn = std::max(wn, j.name.size());
      wp = std::max(wp, j.plan.size());
      ww = std::max(ww, where(j).size());
    }
    out += fmt::format("   {:<{}}  {:<{}}  {:<{}}  {:>12}  {:>12}  {:>9}  {:>10}\n", "job", wn, "plan", wp, "nodes", ww, "step alone",
                       "together", "slowdown", "tokens/s");
    for (const auto& j : p.jobs)
      out += fmt::format("   {:<{}}  {:<{}}  {:<{}}  {:>10.4f} s  {:>10.4f} s  {:>+8.2f}%  {:>10}\n", j.name, wn, j.plan, wp, where(j),
                         ww, j.step_alone.value(), j.step_together.value(), j.slowdown * 100, rate(j.tokens_per_s_together));
    for (const auto& j : p.jobs) out += fmt::format("   {}: {}\n", j.name, j.explanation);
  }
  out += "\n(slowdown: the job's step together over its step alone on the same devices, the other jobs absent; docs/geo.md)\n";
  return out;
}

std::string jobs_to_json(const analysis::JobsRun& r, int threads, bool include_volatile) {
  Json j;
  j["name"] = r.name;
  j["nodes"] = r.nodes;
  j["devices"] = r.devices;
  j["sites"] = r.sites;
  if (include_volatile) {
    Json timing;
    timing["wall_s"] = r.wall.value();
    timing["threads"] = threads;
    j["timing"] = std::move(timing);
  }
  Json policies = Json::array();
  int rank = 0;
  for (const auto& p : r.ranked) {
    Json x;
    x["rank"] = ++rank;
    x["policy"] = analysis::policy_name(p.policy);
    x["tokens_per_s"] = p.tokens_per_s;
    x["tokens_per_s_alone"] = p.tokens_per_s_alone;
    x["engine_events"] = p.events;
    Json jobs = Json::array();
    for (const auto& job : p.jobs) {
      Json y;
      y["name"] = job.name;
      y["plan"] = job.plan;
      y["nodes"] = job.nodes;
      Json sites = Json::object();
      for (const auto& [site, n] : job.sites) sites[site.empty() ? "cluster" : site] = n;
      y["sites"] = std::move(sites);
      y["step_time_alone_s"] = job.step_alone.value();
      y["step_time_together_s"] = job.step_together.value();
      y["slowdown"] = job.slowdown;
      y["tokens_per_step"] = optional_json(job.tokens_per_step);
      y["tokens_per_s_alone"] = optional_json(job.tokens_per_s_alone);
      y["tokens_per_s_together"] = optional_json(job.tokens_per_s_together);
      y["breakdown_alone"] = breakdown_json(job.alone);
      y["breakdown_together"] = breakdown_json(job.together);
      Json shared = Json::array();
      for (const auto& l : job.shared) {
        Json s;
        s["link"] = l.name;
        s["class"] = net::to_string(l.cls);
        Json uses = Json::array();
        for (const auto& u : l.uses) uses.push_back(Json{{"job", u.job}, {"bytes_per_step", u.bytes}, {"dims", u.dims}});
        s["uses"] = std::move(uses);
        shared.push_back(std::move(s));
      }
      y["shared_links"] = std::move(shared);
      y["explanation"] = job.explanation;
      jobs.push_back(std::move(y));
    }
    x["jobs"] = std::move(jobs);
    policies.push_back(std::move(x));
  }
  j["policies"] = std::move(policies);
  return j.dump(2) + "\n";
}

}  // namespace inflect::io
