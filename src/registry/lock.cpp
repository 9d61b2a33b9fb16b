// RegistryLock: one writing process per registry (cks/registry.hpp).
//
// flock(2) on "<registry>.lock": the lock belongs to the open file description, so the kernel
// drops it when the holder dies, however it dies. The file names the holder (pid, host, start
// time) for the error the next writer prints. A clean release unlinks the file while still
// holding the lock; a process that opened the old file just before may then win a lock on an
// unlinked inode, so every winner checks that the path still names the inode it locked.
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <sstream>
#include <thread>

#include "cks/registry.hpp"

namespace cks {

namespace {

std::string host_name() {
  char buf[256] = {};
  if (gethostname(buf, sizeof buf - 1) != 0) return "?";
  return buf;
}

// "pid N (host H, since T)" from a lock file's contents, or "" when they are incomplete (the
// holder locked it a moment ago and has not written them yet).
std::string describe_holder(int fd) {
  char buf[1024];
  const ssize_t n = ::pread(fd, buf, sizeof buf - 1, 0);
  if (n <= 0) return "";
  std::istringstream in(std::string(buf, static_cast<size_t>(n)));
  std::string pid, host, since;
  if (!std::getline(in, pid) || !std::getline(in, host) || !std::getline(in, since) || pid.empty()) return "";
  return "pid " + pid + " (host " + host + ", since " + since + ")";
}

}  // namespace

RegistryLock::RegistryLock(const std::string& registry_path) : path_(lock_path(registry_path)) {
  for (int tries = 0;; ++tries) {
    fd_ = ::open(path_.c_str(), O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0644);
    if (fd_ < 0)
      throw Error("cannot lock registry '" + registry_path + "': cannot open '" + path_ + "': " + std::strerror(errno));
    if (::flock(fd_, LOCK_EX | LOCK_NB) != 0) {
      const int err = errno;
      if (err != EWOULDBLOCK) {
        ::close(fd_);
        throw Error("cannot lock registry '" + registry_path + "': " + std::strerror(err));
      }
      // The holder writes its name right after locking: give it a moment to appear.
      std::string holder;
      for (int i = 0; i < 20 && (holder = describe_holder(fd_)).empty(); ++i)
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
      ::close(fd_);
      fd_ = -1;
      throw Error("registry " + registry_path + " is in use by " + (holder.empty() ? "another process" : holder));
    }
    struct stat locked, named;
    if (::fstat(fd_, &locked) == 0 && ::stat(path_.c_str(), &named) == 0 && locked.st_dev == named.st_dev &&
        locked.st_ino == named.st_ino)
      break;
    ::close(fd_);  // the file was removed (released) or replaced meanwhile: lock the current one
    fd_ = -1;
    if (tries >= 100) throw Error("cannot lock registry '" + registry_path + "': its lock file keeps changing");
  }
  const std::string me = std::to_string(::getpid()) + "\n" + host_name() + "\n" + utc_now() + "\n";
  if (::ftruncate(fd_, 0) != 0 || ::pwrite(fd_, me.data(), me.size(), 0) != static_cast<ssize_t>(me.size())) {
    const int err = errno;
    ::unlink(path_.c_str());
    ::close(fd_);
    throw Error("cannot lock registry '" + registry_path + "': cannot write '" + path_ + "': " + std::strerror(err));
  }
}

RegistryLock::~RegistryLock() {
  if (fd_ < 0) return;
  ::unlink(path_.c_str());  // still holding the lock: see the header comment
  ::close(fd_);
}

}  // namespace cks
