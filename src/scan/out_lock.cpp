#include "inflect/scan/out_lock.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <fmt/format.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <string>

#include "inflect/core/error.hpp"

namespace inflect::scan {

namespace fs = std::filesystem;

OutDirLock::OutDirLock(const std::string& dir) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) throw core::Error(core::ErrorKind::io, fmt::format("cannot create the output folder '{}': {}", dir, ec.message()));
  const std::string path = (fs::path(dir) / ".inflect.lock").string();
  fd_ = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd_ < 0) throw core::Error(core::ErrorKind::io, fmt::format("cannot open '{}': {}", path, std::strerror(errno)));
  if (::flock(fd_, LOCK_EX | LOCK_NB) != 0) {
    char holder[32] = {};
    const ssize_t n = ::pread(fd_, holder, sizeof holder - 1, 0);
    ::close(fd_);
    fd_ = -1;
    const std::string pid = n > 0 ? std::string(holder, static_cast<std::size_t>(n)) : std::string("?");
    throw core::Error(core::ErrorKind::input,
                      fmt::format("another inflect process (pid {}) is writing into '{}'; wait for it to finish or give "
                                  "this one another --out",
                                  pid, dir));
  }
  // The holder's pid, for the message a second process prints.
  const std::string me = std::to_string(::getpid());
  if (::ftruncate(fd_, 0) == 0) (void)!::pwrite(fd_, me.data(), me.size(), 0);
}

OutDirLock::~OutDirLock() {
  if (fd_ >= 0) ::close(fd_);  // closing releases the flock
}

}  // namespace inflect::scan
