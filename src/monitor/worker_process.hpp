// One cks-worker child process as the monitor sees it: spawned with pipes on its stdin and
// stdout, read without blocking, killed and reaped on demand.
#pragma once
#include <sys/types.h>
#include <sys/wait.h>

#include <string>
#include <vector>

#include "worker/protocol.hpp"

namespace cks::monitor {

class WorkerProcess {
 public:
  // fork/exec of argv[0] with argv. The child gets its own process group (a Ctrl-C for the
  // monitor must not kill the workers under it; the monitor stops them itself) and dies with
  // the monitor (PR_SET_PDEATHSIG), so a kill -9 of the monitor leaves no stray worker.
  // Its stderr is the monitor's. Throws cks::Error when the pipes or the fork fail; a failed
  // exec shows up as an exit with status 127.
  explicit WorkerProcess(const std::vector<std::string>& argv);
  ~WorkerProcess();  // kill()
  WorkerProcess(const WorkerProcess&) = delete;
  WorkerProcess& operator=(const WorkerProcess&) = delete;

  pid_t pid() const { return pid_; }
  int event_fd() const { return out_fd_; }  // poll() it for POLLIN

  // Sends one request line; false when the worker is gone.
  bool send(const worker::Request& r);

  enum class Read { open, closed };
  // Reads what is available and appends the decoded events; `closed` at EOF (the worker
  // exited or closed stdout). Throws cks::Error on a line that is not a valid event.
  Read read_events(std::vector<worker::Event>& out);

  // SIGKILL and reap; idempotent.
  void kill();
  // After `closed`: reaps the process (killing it if it lingers) and says how it ended,
  // e.g. "killed by signal 11 (Segmentation fault)" or "exited with status 3".
  std::string reap();
  // After reap(): the signal that ended the process (0 when it exited, or when this object
  // killed it itself).
  int term_signal() const { return reaped_ && !killed_by_us_ && WIFSIGNALED(wait_status_) ? WTERMSIG(wait_status_) : 0; }

 private:
  pid_t pid_ = -1;
  int in_fd_ = -1, out_fd_ = -1;
  bool reaped_ = false;
  bool killed_by_us_ = false;
  int wait_status_ = 0;
  worker::LineReader reader_;
  void close_fds();
};

}  // namespace cks::monitor
