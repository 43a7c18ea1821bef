#pragma once
// What `inflect jobs` prints and writes (analysis/jobs.hpp): each policy's total throughput and
// each job's step together and alone, its slowdown and why; jobs.json with the same figures.
#include <string>

#include "inflect/analysis/jobs.hpp"

namespace inflect::io {

/// The terminal table: policies ranked by total throughput, each with its jobs.
std::string format_jobs(const analysis::JobsRun& r);
/// jobs.json. `threads` goes into its `timing` object (with the wall time), which
/// `include_volatile` = false leaves out (the golden tests mask it).
std::string jobs_to_json(const analysis::JobsRun& r, int threads, bool include_volatile = true);

}  // namespace inflect::io
