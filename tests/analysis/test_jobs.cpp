// analysis::place_jobs: where each policy puts the jobs' nodes (docs/geo.md, "Several jobs on
// shared sites"). The joint runs themselves are checked end to end in tests/integration/test_jobs.
#include <doctest/doctest.h>

#include <vector>

#include "inflect/analysis/jobs.hpp"
#include "inflect/core/error.hpp"

using inflect::analysis::JobPolicy;
using inflect::analysis::place_jobs;
using Nodes = std::vector<std::vector<int>>;

TEST_CASE("place_jobs: pack fills one site per job where it fits, first fit in the sites' order") {
  // Sites of 4 nodes (0-3) and 4 nodes (4-7); jobs of 4 and 4: each its own site.
  CHECK(place_jobs(JobPolicy::pack, {4, 4}, {4, 4}) == Nodes{{0, 1, 2, 3}, {4, 5, 6, 7}});
  // Jobs of 2, 4, 2: the first takes 0-1; the second no longer fits the first site (2 left), so
  // it takes the second site (4-7); the third fits the first site's rest.
  CHECK(place_jobs(JobPolicy::pack, {4, 4}, {2, 4, 2}) == Nodes{{0, 1}, {4, 5, 6, 7}, {2, 3}});
  // A job larger than any site takes the sites with the most free nodes first: sites of 2, 5, 3
  // and a job of 7 takes the 5-node site (2-6), then the 3-node one (7-9): two sites, not three.
  CHECK(place_jobs(JobPolicy::pack, {2, 5, 3}, {7}) == Nodes{{2, 3, 4, 5, 6, 7, 8}});
}

TEST_CASE("place_jobs: spread splits each job evenly over the sites") {
  // Two sites of 4: each job of 4 gets 2 nodes in each site.
  CHECK(place_jobs(JobPolicy::spread, {4, 4}, {4, 4}) == Nodes{{0, 1, 4, 5}, {2, 3, 6, 7}});
  // An odd job: the first site gets the extra node. Then a site that runs out gives the rest to
  // the others: sites of 1 and 5, a job of 4 takes node 0 from the first and 3 from the second.
  CHECK(place_jobs(JobPolicy::spread, {4, 4}, {3}) == Nodes{{0, 1, 4}});
  CHECK(place_jobs(JobPolicy::spread, {1, 5}, {4}) == Nodes{{0, 1, 2, 3}});
  // One site: both policies are the same.
  CHECK(place_jobs(JobPolicy::spread, {8}, {3, 5}) == place_jobs(JobPolicy::pack, {8}, {3, 5}));
}

TEST_CASE("place_jobs: more nodes asked than the cluster has is bad input") {
  CHECK_THROWS_WITH_AS(place_jobs(JobPolicy::pack, {4, 4}, {6, 4}), "the jobs ask for 10 nodes but the cluster has 8",
                       inflect::core::Error);
  CHECK(inflect::analysis::policy_from_name("spread") == JobPolicy::spread);
  CHECK_FALSE(inflect::analysis::policy_from_name("packed").has_value());
}
