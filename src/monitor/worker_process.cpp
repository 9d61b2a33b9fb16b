#include "monitor/worker_process.hpp"

#include <fcntl.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <thread>

#include "cks/common.hpp"

namespace cks::monitor {

namespace {

// A worker that closed its stdout is given this long to finish exiting before it is killed.
constexpr auto kReapGrace = std::chrono::milliseconds(200);

void close_fd(int& fd) {
  if (fd >= 0) ::close(fd);
  fd = -1;
}

pid_t wait_for(pid_t pid, int* status, int flags) {
  pid_t r;
  do r = ::waitpid(pid, status, flags);
  while (r < 0 && errno == EINTR);
  return r;
}

// True while the kernel is tearing the process down (PF_EXITING in /proc/<pid>/stat): it died
// already and only needs CPU to finish, which a loaded machine may withhold for a while.
bool exiting(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string line;
  if (!std::getline(in, line)) return false;
  const size_t close = line.rfind(')');
  if (close == std::string::npos) return false;
  std::istringstream rest(line.substr(close + 1));
  std::string field;
  unsigned long flags = 0;
  for (int i = 3; i <= 9 && rest >> field; ++i)  // fields 3 (state) .. 9 (flags)
    if (i == 9) flags = std::strtoul(field.c_str(), nullptr, 10);
  constexpr unsigned long kPfExiting = 0x4;
  return (flags & kPfExiting) != 0;
}

}  // namespace

WorkerProcess::WorkerProcess(const std::vector<std::string>& argv) {
  if (argv.empty()) throw std::logic_error("WorkerProcess: empty argv");
  std::vector<char*> cargv;
  for (const auto& a : argv) cargv.push_back(const_cast<char*>(a.c_str()));
  cargv.push_back(nullptr);

  int to_child[2], from_child[2];
  if (::pipe2(to_child, O_CLOEXEC) != 0) throw Error(std::string("cannot create worker pipe: ") + std::strerror(errno));
  if (::pipe2(from_child, O_CLOEXEC) != 0) {
    ::close(to_child[0]);
    ::close(to_child[1]);
    throw Error(std::string("cannot create worker pipe: ") + std::strerror(errno));
  }
  const pid_t parent = ::getpid();
  pid_ = ::fork();
  if (pid_ < 0) {
    const int err = errno;
    for (int fd : {to_child[0], to_child[1], from_child[0], from_child[1]}) ::close(fd);
    throw Error(std::string("cannot fork a worker: ") + std::strerror(err));
  }
  if (pid_ == 0) {
    // Child: async-signal-safe calls only until exec.
    ::setpgid(0, 0);
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (::getppid() != parent) ::_exit(127);  // the monitor died before prctl took effect
    ::dup2(to_child[0], STDIN_FILENO);
    ::dup2(from_child[1], STDOUT_FILENO);
    sigset_t none;
    sigemptyset(&none);
    ::sigprocmask(SIG_SETMASK, &none, nullptr);
#ifdef SYS_close_range
    ::syscall(SYS_close_range, 3u, ~0u, 0u);  // e.g. the registry's file, opened without CLOEXEC
#endif
    ::execv(cargv[0], cargv.data());
    ::_exit(127);
  }
  ::close(to_child[0]);
  ::close(from_child[1]);
  in_fd_ = to_child[1];
  out_fd_ = from_child[0];
  ::fcntl(out_fd_, F_SETFL, ::fcntl(out_fd_, F_GETFL) | O_NONBLOCK);
}

WorkerProcess::~WorkerProcess() { kill(); }

void WorkerProcess::close_fds() {
  close_fd(in_fd_);
  close_fd(out_fd_);
}

bool WorkerProcess::send(const worker::Request& r) { return in_fd_ >= 0 && worker::write_line(in_fd_, worker::encode(r)); }

WorkerProcess::Read WorkerProcess::read_events(std::vector<worker::Event>& out) {
  while (true) {
    const auto fill = reader_.fill(out_fd_);
    while (auto line = reader_.next_line()) out.push_back(worker::decode_event(*line));
    if (fill == worker::LineReader::Fill::again) return Read::open;
    if (fill == worker::LineReader::Fill::eof) return Read::closed;
  }
}

void WorkerProcess::kill() {
  if (pid_ > 0 && !reaped_) {
    killed_by_us_ = true;
    ::kill(pid_, SIGKILL);
    wait_for(pid_, &wait_status_, 0);
    reaped_ = true;
  }
  close_fds();
}

std::string WorkerProcess::reap() {
  const auto give_up = std::chrono::steady_clock::now() + kReapGrace;
  while (!reaped_ && std::chrono::steady_clock::now() < give_up) {
    if (wait_for(pid_, &wait_status_, WNOHANG) == pid_) reaped_ = true;
    else std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  // Dying (of a signal from outside, say) but slow to finish: how it died still counts, so wait
  // for it rather than kill it, which would hide that (term_signal() reports only deaths that
  // were not the monitor's doing).
  if (!reaped_ && exiting(pid_) && wait_for(pid_, &wait_status_, 0) == pid_) reaped_ = true;
  if (!reaped_) {
    kill();
    return "closed its output and was killed";
  }
  close_fds();
  if (WIFSIGNALED(wait_status_)) {
    const int sig = WTERMSIG(wait_status_);
    return "killed by signal " + std::to_string(sig) + " (" + strsignal(sig) + ")";
  }
  return "exited with status " + std::to_string(WEXITSTATUS(wait_status_));
}

}  // namespace cks::monitor
