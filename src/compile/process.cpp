#include "compile/process.hpp"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/stat.h>
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

pid_t spawn_logged(const std::vector<std::string>& argv, const std::string& log_path) {
  if (argv.empty()) throw Error("cannot start an empty command");
  SpawnSetup s;
  posix_spawn_file_actions_addopen(&s.actions, STDOUT_FILENO, log_path.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
  posix_spawn_file_actions_adddup2(&s.actions, STDOUT_FILENO, STDERR_FILENO);
  posix_spawn_file_actions_addopen(&s.actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  posix_spawnattr_setflags(&s.attr, POSIX_SPAWN_SETPGROUP);
  posix_spawnattr_setpgroup(&s.attr, 0);
  auto args = c_argv(argv);
  pid_t pid = 0;
  const int rc = posix_spawnp(&pid, args[0], &s.actions, &s.attr, args.data(), environ);
  if (rc != 0) throw Error("cannot start " + argv[0] + ": " + std::strerror(rc));
  return pid;
}

ExitStatus wait_child(pid_t pid) {
  int st = 0;
  while (waitpid(pid, &st, 0) < 0) {
    if (errno != EINTR) return ExitStatus{-1, 0};
  }
  ExitStatus r;
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
