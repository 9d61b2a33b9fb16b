// Child processes for the compile pool: nvcc runs in its own process group with stdout and
// stderr going to a log file, so the whole compiler tree (nvcc, cicc, ptxas, gcc) can be stopped
// by its group id, and that group dies with the process that started it.
#pragma once
#include <sys/types.h>

#include <string>
#include <vector>

namespace cks::compile {

struct ExitStatus {
  int code = -1;    // exit code when the process exited normally
  int signal = 0;   // terminating signal, 0 when it exited normally
  long max_rss_kb = 0;  // peak resident set of the largest process of its tree (getrusage's ru_maxrss)
  bool ok() const { return signal == 0 && code == 0; }
  std::string describe() const;  // "exit code 2" / "killed by signal 9"
};

// Starts argv[0] (searched in PATH), stdout and stderr appended to log_path, under a guardian:
// a forked copy of this process that leads a new process group, runs argv in it and exits the
// way argv did (its exit code, or killed by the same signal). The guardian dies with the thread
// that spawned it (PR_SET_PDEATHSIG), and then kills its whole group, so a monitor killed with
// kill -9 leaves no compiler behind (nvcc's own children included, which a death signal on nvcc
// alone would not reach). Returns the guardian's pid (= the group id). Throws cks::Error when
// it cannot be started.
pid_t spawn_logged(const std::vector<std::string>& argv, const std::string& log_path);
// Waits for a child started by spawn_logged.
ExitStatus wait_child(pid_t pid);
// Sends sig to the child's process group (the child and everything it started).
void kill_group(pid_t pid, int sig);

// Runs argv to completion and returns its stdout+stderr ("" if it cannot be started).
std::string run_capture(const std::vector<std::string>& argv);

// The absolute path of an executable: `name` itself when it contains a '/', else the first match
// in PATH. Empty when not found or not executable.
std::string which(const std::string& name);

}  // namespace cks::compile
