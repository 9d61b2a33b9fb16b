// Safe output files and registered temporaries (cks/files.hpp).
//
// The registry of temporaries is a fixed array of slots so that the signal handler can walk it
// without allocating or locking: a slot is claimed with a compare-and-swap (0 -> 1), filled,
// then published (-> 2); the handler unlinks the published ones.
#include "cks/files.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <vector>

#include "cks/common.hpp"

namespace cks {

namespace {

constexpr size_t kSlots = 256;
constexpr size_t kPathMax = 4096;
constexpr const char* kSidecars[] = {"-wal", "-shm", "-journal"};

struct Slot {
  std::atomic<int> state{0};  // 0 free, 1 being filled, 2 published
  bool sidecars = false;
  char path[kPathMax];
};
Slot g_slots[kSlots];

int claim(const std::string& path, bool sidecars) {
  if (path.size() + 16 >= kPathMax) return -1;  // not tracked (still removed by its owner)
  for (size_t i = 0; i < kSlots; ++i) {
    int expected = 0;
    if (!g_slots[i].state.compare_exchange_strong(expected, 1, std::memory_order_acquire)) continue;
    std::memcpy(g_slots[i].path, path.c_str(), path.size() + 1);
    g_slots[i].sidecars = sidecars;
    g_slots[i].state.store(2, std::memory_order_release);
    return static_cast<int>(i);
  }
  return -1;
}

void unclaim(int slot) {
  if (slot >= 0) g_slots[slot].state.store(0, std::memory_order_release);
}

// unlink(path) and, for SQLite files, unlink(path + suffix) for each sidecar, without allocating.
void unlink_with_sidecars(const char* path, bool sidecars) noexcept {
  ::unlink(path);
  if (!sidecars) return;
  char buf[kPathMax];
  const size_t n = std::strlen(path);
  for (const char* s : kSidecars) {
    const size_t m = std::strlen(s);
    if (n + m + 1 > sizeof buf) continue;
    std::memcpy(buf, path, n);
    std::memcpy(buf + n, s, m + 1);
    ::unlink(buf);
  }
}

extern "C" void on_cleanup_signal(int sig) {
  remove_registered_temps();
  ::signal(sig, SIG_DFL);
  ::raise(sig);  // delivered when the handler returns (the signal is blocked while it runs)
}

extern "C" void cleanup_at_exit() { remove_registered_temps(); }

// 0666 less the process's umask (read without changing it: umask(2) would race other threads).
mode_t file_mode() {
  std::ifstream in("/proc/self/status");
  std::string line;
  while (std::getline(in, line))
    if (line.rfind("Umask:", 0) == 0) return 0666 & ~static_cast<mode_t>(std::strtoul(line.c_str() + 6, nullptr, 8));
  return 0644;
}

void fsync_dir_of(const std::string& path) {
  auto parent = std::filesystem::path(path).parent_path();
  const std::string dir = parent.empty() ? "." : parent.string();
  const int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return;  // best effort: the rename itself succeeded
  ::fsync(fd);
  ::close(fd);
}

}  // namespace

TempPath::TempPath(std::string path, bool sqlite_sidecars)
    : path_(std::move(path)), sidecars_(sqlite_sidecars), slot_(claim(path_, sqlite_sidecars)) {}

TempPath::~TempPath() { remove(); }

TempPath::TempPath(TempPath&& o) noexcept : path_(std::move(o.path_)), sidecars_(o.sidecars_), slot_(o.slot_) {
  o.path_.clear();
  o.slot_ = -1;
}

TempPath& TempPath::operator=(TempPath&& o) noexcept {
  if (this != &o) {
    remove();
    path_ = std::move(o.path_);
    sidecars_ = o.sidecars_;
    slot_ = o.slot_;
    o.path_.clear();
    o.slot_ = -1;
  }
  return *this;
}

std::string TempPath::release() {
  unclaim(slot_);
  slot_ = -1;
  std::string p = std::move(path_);
  path_.clear();
  return p;
}

void TempPath::remove() {
  if (path_.empty()) return;
  unlink_with_sidecars(path_.c_str(), sidecars_);
  unclaim(slot_);
  slot_ = -1;
  path_.clear();
}

std::string temp_dir() {
  const char* t = std::getenv("TMPDIR");
  return t && *t ? t : "/tmp";
}

namespace {

// make_temp without the throw: an empty TempPath and errno in `err` on failure.
TempPath create_temp(const std::string& base, const std::string& prefix, const std::string& suffix,
                     bool sqlite_sidecars, int& err) {
  std::string tmpl = base + "/" + prefix + "XXXXXX" + suffix;
  std::vector<char> buf(tmpl.begin(), tmpl.end());
  buf.push_back('\0');
  // Signals are blocked between creating and registering the file, so a stop cannot leak it.
  sigset_t all, old;
  sigfillset(&all);
  pthread_sigmask(SIG_BLOCK, &all, &old);
  const int fd = ::mkostemps(buf.data(), static_cast<int>(suffix.size()), O_CLOEXEC);
  err = errno;
  TempPath t;
  if (fd >= 0) {
    ::close(fd);
    t = TempPath(std::string(buf.data()), sqlite_sidecars);
  }
  pthread_sigmask(SIG_SETMASK, &old, nullptr);
  return t;
}

}  // namespace

TempPath make_temp(const std::string& dir, const std::string& prefix, const std::string& suffix,
                   bool sqlite_sidecars) {
  const std::string base = dir.empty() ? temp_dir() : dir;
  int err = 0;
  TempPath t = create_temp(base, prefix, suffix, sqlite_sidecars, err);
  if (t.empty()) throw Error("cannot create a temporary file in '" + base + "': " + std::strerror(err));
  return t;
}

void install_temp_cleanup() {
  static std::once_flag once;
  std::call_once(once, [] {
    struct sigaction sa {};
    sa.sa_handler = on_cleanup_signal;
    sigemptyset(&sa.sa_mask);
    for (int sig : {SIGINT, SIGTERM, SIGHUP}) {
      struct sigaction old {};
      sigaction(sig, nullptr, &old);
      if (old.sa_handler == SIG_IGN) continue;  // e.g. nohup: keep ignoring it
      sigaction(sig, &sa, nullptr);
    }
    std::atexit(cleanup_at_exit);
  });
}

void remove_registered_temps() noexcept {
  for (auto& s : g_slots)
    if (s.state.load(std::memory_order_acquire) == 2) unlink_with_sidecars(s.path, s.sidecars);
}

size_t registered_temps() {
  size_t n = 0;
  for (const auto& s : g_slots) n += s.state.load(std::memory_order_acquire) == 2;
  return n;
}

AtomicOutput::AtomicOutput(std::string target, bool sqlite_sidecars) : target_(std::move(target)) {
  if (target_.empty()) throw Error("no output file given");
  const std::filesystem::path p(target_);
  const std::string name = p.filename().string();
  if (name.empty() || name == "." || name == "..") throw Error("'" + target_ + "' is not a file name");
  const std::string dir = p.parent_path().empty() ? "." : p.parent_path().string();
  int err = 0;
  temp_ = create_temp(dir, "." + name + ".", "", sqlite_sidecars, err);
  if (temp_.empty()) throw Error("cannot write '" + target_ + "': " + std::strerror(err));
  // mkstemp made the file: opening it again with O_NOFOLLOW cannot be redirected by a symlink
  // planted since (the name is unpredictable, but be strict anyway).
  fd_ = ::open(temp_.path().c_str(), O_WRONLY | O_NOFOLLOW | O_CLOEXEC);
  if (fd_ < 0) throw Error("cannot write '" + target_ + "': " + std::strerror(errno));
}

AtomicOutput::~AtomicOutput() {
  if (fd_ >= 0) ::close(fd_);
  // temp_ removes the file unless commit() released it.
}

void AtomicOutput::write(std::string_view data) {
  while (!data.empty()) {
    const ssize_t n = ::write(fd_, data.data(), data.size());
    if (n < 0) {
      if (errno == EINTR) continue;
      throw Error("cannot write '" + target_ + "': " + std::strerror(errno));
    }
    data.remove_prefix(static_cast<size_t>(n));
  }
}

void AtomicOutput::finish_file() {
  if (fd_ < 0) throw std::logic_error("AtomicOutput committed twice");
  if (::fchmod(fd_, file_mode()) != 0 || ::fsync(fd_) != 0) {
    const int err = errno;
    throw Error("cannot write '" + target_ + "': " + std::strerror(err));
  }
  const int rc = ::close(fd_);
  fd_ = -1;
  if (rc != 0) throw Error("cannot write '" + target_ + "': " + std::strerror(errno));
}

void AtomicOutput::commit() {
  finish_file();
  if (::rename(temp_.path().c_str(), target_.c_str()) != 0)
    throw Error("cannot write '" + target_ + "': " + std::strerror(errno));
  temp_.release();
  fsync_dir_of(target_);
}

void AtomicOutput::commit_new() {
  finish_file();
  if (::link(temp_.path().c_str(), target_.c_str()) != 0) {
    const int err = errno;
    if (err == EEXIST) throw Error("'" + target_ + "' already exists");
    throw Error("cannot write '" + target_ + "': " + std::strerror(err));
  }
  temp_.remove();
  fsync_dir_of(target_);
}

void write_file_atomic(const std::string& target, std::string_view content) {
  AtomicOutput out(target);
  out.write(content);
  out.commit();
}

}  // namespace cks
