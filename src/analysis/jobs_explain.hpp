#pragma once
// Why a job runs slower beside others (analysis/jobs.hpp): the links each job's collectives load
// per step, those it shares with other jobs, and the sentence that puts what grew in its step next
// to them. Private to the analysis layer.
#include <map>
#include <string>
#include <vector>

#include "inflect/analysis/jobs.hpp"
#include "inflect/net/collective.hpp"
#include "inflect/workload/exec_graph.hpp"

namespace inflect::analysis {

/// One job's traffic source: its graph (local ranks) and the devices its ranks run on.
struct JobTraffic {
  std::string name;
  const workload::ExecutionGraph* graph = nullptr;
  std::vector<workload::RankId> devices;
};

/// What one job puts on each link it loads, per step.
struct JobLinks {
  struct Use {
    double bytes = 0;
    unsigned dims = 0;  // bit d: workload::ParallelDim d
  };
  std::map<net::LinkId, Use> links;
};

/// Each job's links: every collective call of a step lowered on the job's devices (as the engine
/// lowers it: the same lowering and tuning), its bytes on each link summed over the calls.
std::vector<JobLinks> job_links(const std::vector<JobTraffic>& jobs, const net::Topology& topo, const net::CollectiveTuning& tuning);

/// The links job `j` loads that another job loads too: WAN links first, then by link id.
std::vector<SharedLink> shared_links(const std::vector<JobLinks>& links, const std::vector<JobTraffic>& jobs, std::size_t j,
                                     const net::Topology& topo);

/// One sentence: the part of the step that grew most (together against alone) and the shared
/// links that explain it (the WAN links named, other links counted by kind), or that it did not
/// slow down.
std::string explain_slowdown(const JobResult& r);

}  // namespace inflect::analysis
