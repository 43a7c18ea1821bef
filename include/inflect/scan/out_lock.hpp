#pragma once
// One writer per output folder: a scan (or a merge) holds an exclusive lock on DIR/.inflect.lock
// for as long as it writes there, so a second process aimed at the same --out is refused at once
// with a message naming the holder, instead of interleaving its rows with the first's or racing
// it on temporary file names. The lock is the kernel's (flock): it goes with the process, so a
// scan killed with -9 leaves nothing to clean up and `--resume` can take the folder again.
#include <string>

namespace inflect::scan {

class OutDirLock {
 public:
  /// Creates `dir` if needed and takes its lock, or throws core::Error(input) when another
  /// process holds it ("another inflect process (pid N) is writing into 'DIR' ...") and
  /// core::Error(io) when the lock file cannot be opened.
  explicit OutDirLock(const std::string& dir);
  ~OutDirLock();
  OutDirLock(const OutDirLock&) = delete;
  OutDirLock& operator=(const OutDirLock&) = delete;

 private:
  int fd_ = -1;
};

}  // namespace inflect::scan
