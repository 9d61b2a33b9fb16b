#include "common/subprocess.hpp"

#include <fcntl.h>
#include <spawn.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <algorithm>
#include <filesystem>

extern char** environ;

namespace cks {

namespace {

// An anonymous temporary file holding `data`, positioned at its start (unlinked at once: nothing
// is left behind, whatever happens next). -1 on failure.
int anonymous_file(std::string_view data) {
  std::error_code ec;
  std::string path = (std::filesystem::temp_directory_path(ec) / "cks-input-XXXXXX").string();
  if (ec) path = "/tmp/cks-input-XXXXXX";
  const int fd = mkostemp(path.data(), O_CLOEXEC);
  if (fd < 0) return -1;
  unlink(path.c_str());
  size_t done = 0;
  while (done < data.size()) {
    const ssize_t n = write(fd, data.data() + done, data.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      close(fd);
      return -1;
    }
    done += static_cast<size_t>(n);
  }
  if (lseek(fd, 0, SEEK_SET) != 0) {
    close(fd);
    return -1;
  }
  return fd;
}

}  // namespace

RunResult run_argv(const std::vector<std::string>& argv, const RunOptions& o) {
  RunResult r;
  if (argv.empty() || argv[0].empty()) return r;
  int in_fd = -1, out[2] = {-1, -1};
  if (!o.input.empty() && (in_fd = anonymous_file(o.input)) < 0) return r;
  if (o.capture_stdout && pipe2(out, O_CLOEXEC) != 0) {
    if (in_fd >= 0) close(in_fd);
    return r;
  }
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  if (in_fd >= 0) posix_spawn_file_actions_adddup2(&actions, in_fd, STDIN_FILENO);
  else posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  if (o.capture_stdout) posix_spawn_file_actions_adddup2(&actions, out[1], STDOUT_FILENO);
  if (o.capture_stdout && o.stderr_to_output) posix_spawn_file_actions_adddup2(&actions, out[1], STDERR_FILENO);
  else if (o.discard_stderr) posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, "/dev/null", O_WRONLY, 0);
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  pid_t pid = 0;
  const int rc = posix_spawnp(&pid, args[0], &actions, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (in_fd >= 0) close(in_fd);
  if (o.capture_stdout) close(out[1]);
  if (rc != 0) {
    if (o.capture_stdout) close(out[0]);
    return r;
  }
  r.started = true;
  if (o.capture_stdout) {
    char buf[65536];
    for (;;) {
      const ssize_t n = read(out[0], buf, sizeof buf);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) break;
      if (r.output.size() < o.max_output)
        r.output.append(buf, std::min(static_cast<size_t>(n), o.max_output - r.output.size()));
    }
    close(out[0]);
  }
  int status = 0;
  while (waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) return r;
  }
  if (WIFEXITED(status)) r.exit_code = WEXITSTATUS(status);
  if (WIFSIGNALED(status)) r.signal = WTERMSIG(status);
  return r;
}

}  // namespace cks
