#include "compile/process.hpp"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "cks/common.hpp"

extern char** environ;

namespace cks::compile {

namespace {

std::vector<char*> c_argv(const std::vector<std::string>& argv) {
  std::vector<char*> out;
  out.reserve(argv.size() + 1);
  for (const auto& a : argv) out.push_back(const_cast<char*>(a.c_str()));
  out.push_back(nullptr);
  return out;
}

// posix_spawn's attribute and file-action objects, released on scope exit.
struct SpawnSetup {
  posix_spawn_file_actions_t actions;
  posix_spawnattr_t attr;
  SpawnSetup() {
    posix_spawn_file_actions_init(&actions);
    posix_spawnattr_init(&attr);
  }
  ~SpawnSetup() {
    posix_spawn_file_actions_destroy(&actions);
    posix_spawnattr_destroy(&attr);
  }
};

}  // namespace

std::string ExitStatus::describe() const {
  if (signal != 0) return "killed by signal " + std::to_string(signal) + " (" + strsignal(signal) + ")";
  return "exit code " + std::to_string(code);
}

namespace {

// The guardian's handler for the monitor's death (PR_SET_PDEATHSIG) and for stop signals: the
// whole process group goes, the compiler tree and the guardian itself.
extern "C" void guardian_kill_group(int) {
  ::kill(0, SIGKILL);
  ::_exit(128 + SIGKILL);
}

constexpr int kGuardianSignals[] = {SIGUSR1, SIGTERM, SIGINT, SIGHUP};

// Runs in the forked guardian: async-signal-safe calls only.
[[noreturn]] void guardian(pid_t monitor, const char* exe, char* const* args, int log_fd, int null_fd) {
  ::setpgid(0, 0);
  struct sigaction sa {};
  sa.sa_handler = guardian_kill_group;
  sigfillset(&sa.sa_mask);
  for (int sig : kGuardianSignals) ::sigaction(sig, &sa, nullptr);
  sigset_t none;
  sigemptyset(&none);
  ::sigprocmask(SIG_SETMASK, &none, nullptr);
  ::prctl(PR_SET_PDEATHSIG, SIGUSR1);  // sent when the thread that forked us ends
  if (::getppid() != monitor) guardian_kill_group(0);  // the monitor died before prctl
  ::dup2(null_fd, STDIN_FILENO);
  ::dup2(log_fd, STDOUT_FILENO);
  ::dup2(log_fd, STDERR_FILENO);
#ifdef SYS_close_range
  ::syscall(SYS_close_range, 3u, ~0u, 0u);  // e.g. the registry's lock and database files
#endif
  const pid_t self = ::getpid();
  const pid_t child = ::fork();
  if (child < 0) ::_exit(127);
  if (child == 0) {
    struct sigaction dfl {};
    dfl.sa_handler = SIG_DFL;
    for (int sig : kGuardianSignals) ::sigaction(sig, &dfl, nullptr);
    ::sigaction(SIGPIPE, &dfl, nullptr);
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (::getppid() != self) ::_exit(127);
    ::execv(exe, args);
    ::_exit(127);
  }
  int st = 0;
  while (::waitpid(child, &st, 0) < 0)
    if (errno != EINTR) ::_exit(127);
  if (WIFEXITED(st)) ::_exit(WEXITSTATUS(st));
  // Die of the compiler's signal, so the monitor sees how it ended.
  const int sig = WTERMSIG(st);
  struct sigaction dfl {};
  dfl.sa_handler = SIG_DFL;
  ::sigaction(sig, &dfl, nullptr);
  ::kill(self, sig);
  ::_exit(128 + sig);
}

}  // namespace

pid_t spawn_logged(const std::vector<std::string>& argv, const std::string& log_path) {
  if (argv.empty()) throw Error("cannot start an empty command");
  const std::string exe = which(argv[0]);
  if (exe.empty()) throw Error("cannot start " + argv[0] + ": not found or not executable");
  const int log_fd = ::open(log_path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (log_fd < 0) throw Error("cannot start " + argv[0] + ": cannot open '" + log_path + "': " + std::strerror(errno));
  const int null_fd = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
  if (null_fd < 0) {
    const int err = errno;
    ::close(log_fd);
    throw Error("cannot start " + argv[0] + ": cannot open /dev/null: " + std::strerror(err));
  }
  auto args = c_argv(argv);
  const pid_t monitor = ::getpid();
  const pid_t pid = ::fork();
  if (pid == 0) guardian(monitor, exe.c_str(), args.data(), log_fd, null_fd);
  const int err = errno;
  ::close(log_fd);
  ::close(null_fd);
  if (pid < 0) throw Error("cannot start " + argv[0] + ": " + std::strerror(err));
  // The guardian makes itself a group leader; doing it here too closes the race with an early
  // kill_group() (whichever runs first wins, the other fails harmlessly).
  ::setpgid(pid, pid);
  return pid;
}

ExitStatus wait_child(pid_t pid) {
  int st = 0;
  struct rusage ru {};
  // wait4's usage covers the child and every descendant it waited for (the guardian waits for
  // nvcc, nvcc for cicc, ptxas and gcc), so ru_maxrss is the compile's largest process.
  while (::wait4(pid, &st, 0, &ru) < 0) {
    if (errno != EINTR) return ExitStatus{-1, 0};
  }
  ExitStatus r;
  r.max_rss_kb = ru.ru_maxrss;
  if (WIFEXITED(st)) r.code = WEXITSTATUS(st);
  if (WIFSIGNALED(st)) r.signal = WTERMSIG(st);
  return r;
}

void kill_group(pid_t pid, int sig) {
  if (pid > 0) ::kill(-pid, sig);
}

std::string run_capture(const std::vector<std::string>& argv) {
  int fds[2];
  if (argv.empty() || pipe(fds) != 0) return "";
  SpawnSetup s;
  posix_spawn_file_actions_addclose(&s.actions, fds[0]);
  posix_spawn_file_actions_adddup2(&s.actions, fds[1], STDOUT_FILENO);
  posix_spawn_file_actions_adddup2(&s.actions, fds[1], STDERR_FILENO);
  posix_spawn_file_actions_addclose(&s.actions, fds[1]);
  auto args = c_argv(argv);
  pid_t pid = 0;
  const int rc = posix_spawnp(&pid, args[0], &s.actions, &s.attr, args.data(), environ);
  close(fds[1]);
  std::string out;
  if (rc == 0) {
    char buf[4096];
    ssize_t n;
    while ((n = read(fds[0], buf, sizeof buf)) > 0 || (n < 0 && errno == EINTR))
      if (n > 0) out.append(buf, static_cast<size_t>(n));
    wait_child(pid);
  }
  close(fds[0]);
  return out;
}

std::string which(const std::string& name) {
  auto executable = [](const std::string& p) {
    struct stat st;
    return stat(p.c_str(), &st) == 0 && S_ISREG(st.st_mode) && access(p.c_str(), X_OK) == 0;
  };
  if (name.empty()) return "";
  if (name.find('/') != std::string::npos) return executable(name) ? name : "";
  const char* path = std::getenv("PATH");
  std::string dirs = path ? path : "/usr/local/bin:/usr/bin:/bin";
  size_t b = 0;
  while (b <= dirs.size()) {
    size_t e = dirs.find(':', b);
    if (e == std::string::npos) e = dirs.size();
    const std::string dir = e > b ? dirs.substr(b, e - b) : ".";
    if (executable(dir + "/" + name)) return dir + "/" + name;
    b = e + 1;
  }
  return "";
}

}  // namespace cks::compile
