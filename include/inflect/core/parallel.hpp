#pragma once
// The one thread pool of the project: a parallel-for over the indices [0, n) in the two shapes its
// callers need. search estimates in fixed contiguous blocks (so each block's Estimator sees the
// same plans whatever the thread count); scan lets each thread pull the next point (points differ
// a lot in cost) and, under MPI, keeps the calling thread free to talk to the other ranks.
// Threads are started per call: the calls are few and each runs long.
#include <cstddef>
#include <functional>

namespace inflect::core {

/// `jobs` if it is positive, else one per hardware thread (at least 1): what `--jobs 0` means.
int jobs_or_hardware(int jobs);

/// Runs body(lo, hi) on min(jobs, n) threads (at least 1, the calling thread among them), thread
/// t taking the t-th of the contiguous blocks [n*t/T, n*(t+1)/T). Returns when every block is
/// done; then rethrows the first exception a block threw.
void parallel_blocks(std::size_t n, int jobs, const std::function<void(std::size_t lo, std::size_t hi)>& body);

/// Runs task(i) for every i in [0, n) on min(jobs, n) threads (at least 1, the calling thread
/// among them), each taking the next index no thread has taken yet. After a task throws no
/// further index is handed out; the first exception is rethrown once every thread has stopped.
void parallel_pull(std::size_t n, int jobs, const std::function<void(std::size_t)>& task);

/// The same on min(jobs, n) threads of their own (none when n is 0) while the calling thread runs
/// `alongside`: for work that must stay on the calling thread, such as MPI under
/// MPI_THREAD_FUNNELED. `workers_done` is called once, by the last worker to stop (or by the
/// calling thread when there are none), so that `alongside` can stop waiting for their output.
/// Returns when `alongside` has returned and every worker has stopped; then rethrows the first
/// exception (a task's or `alongside`'s; either stops the handing out of indices).
void parallel_pull_alongside(std::size_t n, int jobs, const std::function<void(std::size_t)>& task,
                             const std::function<void()>& workers_done, const std::function<void()>& alongside);

}  // namespace inflect::core
