#pragma once
// `mpirun -np K inflect scan ...`: the MPI transport of scan::Peers (CMake option INFLECT_MPI).
// Without MPI compiled in, a launch by mpirun with more than one rank is refused (every rank would
// otherwise run the whole scan and write the same files).
#include <string>

#include "inflect/scan/runner.hpp"

namespace inflect::cli {

/// MPI for the length of one `inflect scan`: initialized only when an MPI launcher started this
/// process (mpirun sets OMPI_COMM_WORLD_SIZE, PMI_SIZE or PMIX_RANK), finalized at the end.
class MpiScope {
 public:
  MpiScope();
  ~MpiScope();
  MpiScope(const MpiScope&) = delete;
  MpiScope& operator=(const MpiScope&) = delete;
  int rank() const { return rank_; }
  int ranks() const { return ranks_; }
  /// The transport for scan::ScanOptions::peers (one rank: the default, no calls).
  scan::Peers peers() const;
  /// Ends every rank after an error on this one (a rank that stopped would leave the others
  /// waiting for its rows): prints nothing itself; returns only if MPI is not active.
  void abort(int code) const;

 private:
  int rank_ = 0;
  int ranks_ = 1;
  bool initialized_ = false;
};

}  // namespace inflect::cli
