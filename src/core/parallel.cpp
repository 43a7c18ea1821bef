#include "inflect/core/parallel.hpp"

#include <algorithm>
#include <atomic>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

namespace inflect::core {

namespace {

std::size_t threads_for(std::size_t n, int jobs) {
  return std::max<std::size_t>(1, std::min<std::size_t>(static_cast<std::size_t>(std::max(1, jobs)), n));
}

// The first exception of any thread, kept until every thread has stopped.
class FirstFailure {
 public:
  void record(std::exception_ptr e) {
    std::lock_guard<std::mutex> lock(mu_);
    if (!failure_) failure_ = std::move(e);
    failed_.store(true);
  }
  bool failed() const { return failed_.load(); }
  void rethrow() const {
    if (failure_) std::rethrow_exception(failure_);
  }

 private:
  std::mutex mu_;
  std::exception_ptr failure_;
  std::atomic<bool> failed_{false};
};

// What the pulling threads share: the next index not yet taken and the first failure.
class Pull {
 public:
  Pull(std::size_t n, const std::function<void(std::size_t)>& task) : n_(n), task_(task) {}
  void work() {
    while (!failure.failed()) {
      const std::size_t i = next_.fetch_add(1);
      if (i >= n_) return;
      try {
        task_(i);
      } catch (...) {
        failure.record(std::current_exception());
      }
    }
  }
  FirstFailure failure;

 private:
  const std::size_t n_;
  const std::function<void(std::size_t)>& task_;
  std::atomic<std::size_t> next_{0};
};

}  // namespace

int jobs_or_hardware(int jobs) {
  return jobs > 0 ? jobs : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
}

void parallel_blocks(std::size_t n, int jobs, const std::function<void(std::size_t lo, std::size_t hi)>& body) {
  const std::size_t threads = threads_for(n, jobs);
  FirstFailure failure;
  auto block = [&](std::size_t t) {
    try {
      body(n * t / threads, n * (t + 1) / threads);
    } catch (...) {
      failure.record(std::current_exception());
    }
  };
  {
    std::vector<std::jthread> pool;
    for (std::size_t t = 1; t < threads; ++t) pool.emplace_back(block, t);
    block(0);
  }
  failure.rethrow();
}

void parallel_pull(std::size_t n, int jobs, const std::function<void(std::size_t)>& task) {
  const std::size_t threads = threads_for(n, jobs);
  Pull pull(n, task);
  {
    std::vector<std::jthread> pool;
    for (std::size_t t = 1; t < threads; ++t) pool.emplace_back([&] { pull.work(); });
    pull.work();
  }
  pull.failure.rethrow();
}

void parallel_pull_alongside(std::size_t n, int jobs, const std::function<void(std::size_t)>& task,
                             const std::function<void()>& workers_done, const std::function<void()>& alongside) {
  const std::size_t workers = n == 0 ? 0 : threads_for(n, jobs);
  Pull pull(n, task);
  std::atomic<std::size_t> running{workers};
  auto signal_done = [&] {
    try {
      workers_done();
    } catch (...) {
      pull.failure.record(std::current_exception());
    }
  };
  {
    std::vector<std::jthread> pool;
    if (workers == 0) signal_done();
    for (std::size_t t = 0; t < workers; ++t)
      pool.emplace_back([&] {
        pull.work();
        if (running.fetch_sub(1) == 1) signal_done();
      });
    try {
      alongside();
    } catch (...) {
      pull.failure.record(std::current_exception());
    }
  }
  pull.failure.rethrow();
}

}  // namespace inflect::core
