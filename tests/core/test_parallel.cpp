#include <doctest/doctest.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <mutex>
#include <stdexcept>
#include <thread>
#include <vector>

#include "inflect/core/parallel.hpp"

using namespace inflect::core;

TEST_CASE("parallel_blocks splits the indices into the same contiguous blocks for a given thread count") {
  for (int jobs : {1, 3, 8}) {
    std::mutex mu;
    std::vector<std::pair<std::size_t, std::size_t>> blocks;
    parallel_blocks(10, jobs, [&](std::size_t lo, std::size_t hi) {
      std::lock_guard<std::mutex> lock(mu);
      blocks.emplace_back(lo, hi);
    });
    std::sort(blocks.begin(), blocks.end());
    // Never more threads than items; the blocks tile [0, 10) in order.
    CHECK(blocks.size() == static_cast<std::size_t>(std::min(jobs, 10)));
    std::size_t next = 0;
    for (const auto& [lo, hi] : blocks) {
      CHECK(lo == next);
      next = hi;
    }
    CHECK(next == 10);
  }
  // 3 threads over 10: [0,3) [3,6) [6,10), as n*t/T gives.
  std::vector<std::size_t> owner(10);
  parallel_blocks(10, 3, [&](std::size_t lo, std::size_t hi) {
    for (std::size_t i = lo; i < hi; ++i) owner[i] = lo;
  });
  CHECK(owner == std::vector<std::size_t>{0, 0, 0, 3, 3, 3, 6, 6, 6, 6});
}

TEST_CASE("parallel_pull runs every index once and rethrows a task's exception") {
  std::vector<std::atomic<int>> runs(100);
  parallel_pull(runs.size(), 4, [&](std::size_t i) { ++runs[i]; });
  for (const auto& r : runs) CHECK(r.load() == 1);
  parallel_pull(0, 4, [&](std::size_t) { FAIL("no index to run"); });
  CHECK_THROWS_WITH_AS(parallel_pull(50, 3,
                                     [](std::size_t i) {
                                       if (i == 7) throw std::runtime_error("point 7");
                                     }),
                       "point 7", std::runtime_error);
}

TEST_CASE("parallel_pull_alongside keeps the calling thread for `alongside` and says when the workers are done") {
  const auto caller = std::this_thread::get_id();
  std::mutex mu;
  std::condition_variable ready;
  std::size_t finished = 0;
  bool done = false, task_on_caller = false;
  std::vector<std::size_t> seen;
  parallel_pull_alongside(
      20, 3,
      [&](std::size_t) {
        std::lock_guard<std::mutex> lock(mu);
        task_on_caller = task_on_caller || std::this_thread::get_id() == caller;
        ++finished;
        ready.notify_all();
      },
      [&] {
        std::lock_guard<std::mutex> lock(mu);
        done = true;
        ready.notify_all();
      },
      [&] {
        // Like a rank > 0 of a scan: forward results until the workers are done.
        CHECK(std::this_thread::get_id() == caller);
        std::unique_lock<std::mutex> lock(mu);
        ready.wait(lock, [&] { return done; });
        seen.push_back(finished);
      });
  CHECK_FALSE(task_on_caller);
  CHECK(seen == std::vector<std::size_t>{20});
  // With nothing to run there are no workers: the calling thread says so before `alongside`.
  bool said_done = false;
  parallel_pull_alongside(
      0, 3, [](std::size_t) { FAIL("no index to run"); }, [&] { said_done = true; }, [&] { CHECK(said_done); });
  CHECK(said_done);
  // A worker's exception still ends the workers (so `alongside` is not left waiting) and is rethrown.
  bool alongside_returned = false;
  CHECK_THROWS_AS(parallel_pull_alongside(
                      5, 2, [](std::size_t) { throw std::runtime_error("bad point"); }, [&] { done = true; },
                      [&] { alongside_returned = true; }),
                  std::runtime_error);
  CHECK(alongside_returned);
}

TEST_CASE("jobs_or_hardware: 0 means one per hardware thread") {
  CHECK(jobs_or_hardware(3) == 3);
  CHECK(jobs_or_hardware(0) >= 1);
}
