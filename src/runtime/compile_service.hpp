// The runtime's compile cache (issue 17, item 2b): a kernel that no bundle holds is compiled in the
// background with the collector's own generator and compile pool (cks::CompilePool) into a cache
// folder keyed like the executable cache (cks_<hash>.so + sidecar; a kernel compiled before, alone
// or in any translation unit, is found by its own key and not compiled again). The caller runs the
// problem on cuBLASLt meanwhile and polls: generation() changes whenever a compile settles.
#pragma once
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <thread>

#include "cks/catalogue.hpp"
#include "cks/compile.hpp"

namespace cks::rt {

class CompileService {
 public:
  struct Options {
    std::string cache_dir;
    std::string nvcc = "nvcc";
    std::string cutlass_dir;  // "" = default_cutlass_dir()
    int jobs = 1;
  };
  // Why compiling on a miss is impossible here ("" when it is possible): nvcc, the CUTLASS
  // headers or cks/kernel_lib_abi.h not found.
  static std::string unavailable(const Options& o);

  // Starts nothing: the compile pool (nvcc --version, the cache folder's index) is set up on the
  // first request.
  explicit CompileService(Options o);
  ~CompileService();  // stops the background thread, kills running nvcc
  CompileService(const CompileService&) = delete;
  CompileService& operator=(const CompileService&) = delete;

  struct Location {
    std::string lib_path;
    int index = -1;
  };
  enum class State { ready, pending, failed };
  struct Status {
    State state = State::pending;
    Location where;     // ready
    std::string error;  // failed: the compile error, or why the pool could not start
  };
  // The kernel's status; the first request of a kernel starts its compile (or finds it cached:
  // then it is ready within the call, or pending until the background thread has taken it).
  Status request(const KernelDesc& k);
  // The status without starting anything (pending for a kernel never requested).
  Status status(const std::string& kernel_id) const;
  uint64_t generation() const { return generation_.load(std::memory_order_acquire); }
  // Kernels requested and not settled.
  int pending() const;
  // Waits until nothing is pending or the timeout passes; true when nothing is pending.
  bool wait_idle(std::chrono::milliseconds timeout);

 private:
  void start_locked();
  void loop();
  void settle(const LibraryResult& lib);

  Options o_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::unique_ptr<CompilePool> pool_;
  std::string pool_error_;
  std::map<std::string, Status> kernels_;  // every requested kernel
  std::thread thread_;
  bool stop_ = false;
  std::atomic<uint64_t> generation_{0};
};

}  // namespace cks::rt
