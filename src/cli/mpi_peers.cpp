#include "cli/mpi_peers.hpp"

#include <fmt/format.h>

#include <chrono>
#include <cstdlib>
#include <memory>
#include <thread>
#include <optional>

#include "inflect/core/error.hpp"

#ifdef INFLECT_WITH_MPI
#include <mpi.h>
#endif

namespace inflect::cli {

namespace {

/// The world size an MPI launcher announced in the environment, or 0 when none did.
int launcher_world_size() {
  for (const char* var : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_SIZE"})
    if (const char* v = std::getenv(var)) return std::atoi(v);
  if (std::getenv("PMIX_RANK") != nullptr) return 1;
  return 0;
}

#ifdef INFLECT_WITH_MPI
constexpr int kRowTag = 1;   // a row: one JSONL line
constexpr int kDoneTag = 2;  // a rank has sent all its rows
#endif

}  // namespace

MpiScope::MpiScope() {
  const int announced = launcher_world_size();
#ifdef INFLECT_WITH_MPI
  if (announced == 0) return;
  int provided = 0;
  MPI_Init_thread(nullptr, nullptr, MPI_THREAD_FUNNELED, &provided);
  initialized_ = true;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
  MPI_Comm_size(MPI_COMM_WORLD, &ranks_);
#else
  if (announced > 1)
    throw core::Error(core::ErrorKind::input,
                      fmt::format("started by an MPI launcher with {} ranks, but this inflect was built without MPI: every rank "
                                  "would run the whole scan; configure with -DINFLECT_MPI=ON (scripts/test-mpi does), or "
                                  "split the scan with --shard i/N",
                                  announced));
#endif
}

MpiScope::~MpiScope() {
#ifdef INFLECT_WITH_MPI
  if (initialized_) MPI_Finalize();
#endif
}

void MpiScope::abort(int code) const {
#ifdef INFLECT_WITH_MPI
  if (initialized_ && ranks_ > 1) MPI_Abort(MPI_COMM_WORLD, code);
#endif
  (void)code;
}

scan::Peers MpiScope::peers() const {
  scan::Peers p;
  p.rank = rank_;
  p.ranks = ranks_;
#ifdef INFLECT_WITH_MPI
  if (ranks_ <= 1) return p;
  p.send = [](const std::string& line) {
    MPI_Send(line.data(), static_cast<int>(line.size()), MPI_CHAR, 0, kRowTag, MPI_COMM_WORLD);
  };
  p.finish = [] { MPI_Send(nullptr, 0, MPI_CHAR, 0, kDoneTag, MPI_COMM_WORLD); };
  auto done = std::make_shared<int>(0);
  const int others = ranks_ - 1;
  p.receive = [done, others]() -> std::optional<std::string> {
    while (*done < others) {
      // Poll rather than block in MPI_Probe: Open MPI's blocking probe spins a core that this
      // rank's own workers need.
      MPI_Status st;
      int arrived = 0;
      for (;;) {
        MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &arrived, &st);
        if (arrived) break;
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
      }
      int count = 0;
      MPI_Get_count(&st, MPI_CHAR, &count);
      std::string line(static_cast<std::size_t>(count), '\0');
      MPI_Recv(line.data(), count, MPI_CHAR, st.MPI_SOURCE, st.MPI_TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      if (st.MPI_TAG == kDoneTag) {
        ++*done;
        continue;
      }
      return line;
    }
    return std::nullopt;
  };
#endif
  return p;
}

}  // namespace inflect::cli
