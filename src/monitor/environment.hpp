// What the monitor needs from its process environment: signal handling for a clean stop, the
// run's provenance (git commit, host, CUTLASS version), the worker executable, visible GPUs.
#pragma once
#include <csignal>
#include <string>
#include <vector>

namespace cks::monitor {

// For the lifetime of the scope: SIGPIPE is ignored (writing to a dead worker's stdin must not
// kill the monitor) and, when `handle_stop`, SIGINT/SIGTERM are counted instead of killing
// (one requests a clean stop, a second abandons running work). Previous handlers come back at
// the end of the scope.
class SignalScope {
 public:
  explicit SignalScope(bool handle_stop);
  ~SignalScope();
  SignalScope(const SignalScope&) = delete;
  SignalScope& operator=(const SignalScope&) = delete;
  int count() const;  // stop signals received (0 when not handling them)

 private:
  bool handle_stop_;
  struct sigaction old_pipe_ {}, old_int_ {}, old_term_ {};
};

// $CKS_GIT_SHA, else `git rev-parse HEAD` of the source tree when it is there, else "".
std::string git_sha();
std::string host_name();
// "4.2.0" from <cutlass_dir>/include/cutlass/version.h, "" when absent.
std::string cutlass_version(const std::string& cutlass_dir);
// The cks-worker next to the running executable.
std::string default_worker_exe();
// CUDA devices 0..n-1 that answer hw_from_device(); throws cks::Error when there is none.
std::vector<int> visible_gpus();

}  // namespace cks::monitor
