// Fake GPU backend for fault injection: synthetic, deterministic timings (worker/fake.hpp) and
// the faults of a spec (crash, hang, freeze, launch_error, incorrect, cannot_implement, ...),
// so the real monitor can be tested end to end on a machine without a GPU.
#include <fcntl.h>
#include <sys/resource.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <cstdlib>
#include <thread>

#include "worker/backend.hpp"
#include "worker/fake.hpp"

namespace cks::worker {

namespace {

[[noreturn]] void crash_now() {
  // A real segfault, as a bad kernel library would cause; no core file in the test's cwd.
  const rlimit no_core{0, 0};
  setrlimit(RLIMIT_CORE, &no_core);
  std::signal(SIGSEGV, SIG_DFL);
  std::raise(SIGSEGV);
  std::abort();
}

// Creates the crash_once marker; true when this call created it (first attempt).
bool create_marker(const std::string& path) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd < 0) return false;
  ::fsync(fd);
  ::close(fd);
  return true;
}

class FakeBackend final : public Backend {
 public:
  FakeBackend(fake::FaultSpec spec, uint64_t seed) : spec_(std::move(spec)), seed_(seed) {}

  DeviceInfo info() override {
    // The first hello is the worker's start-up: a slow one gives a window to kill it in.
    if (spec_.slow_start_us > 0 && !started_) std::this_thread::sleep_for(std::chrono::duration<double, std::micro>(spec_.slow_start_us));
    // A gated start-up: killed there for certain, however late the killer gets to it.
    if (!spec_.start_gate.empty() && !started_)
      while (::access(spec_.start_gate.c_str(), F_OK) != 0) std::this_thread::sleep_for(std::chrono::milliseconds(5));
    started_ = true;
    DeviceInfo d;
    d.backend = "fake";
    d.gpu_name = "Fake H200 (fault injection)";
    d.gpu_uuid = "GPU-fake";
    d.driver_version = "fake";
    d.cuda_runtime_version = "fake";
    d.cublas_version = "fake";
    d.sm_count = 132;
    d.l2_bytes = 50.0 * 1024 * 1024;
    return d;
  }

  GroupResult setup_group(const GroupSpec& g) override {
    group_ = g;
    have_group_ = true;
    GroupResult r;
    r.status = "ok";
    r.cublas = fake::cublas_timing(g.m, g.n, g.k);
    r.cublas_algo = "fake";
    r.replicas = 1;
    return r;
  }

  MeasureResult measure(const MeasureSpec& m) override {
    MeasureResult r;
    if (!have_group_) {
      r.status = "launch_error";
      r.error = "measure before any group was set up";
      return r;
    }
    if (spec_.slow_us > 0) std::this_thread::sleep_for(std::chrono::duration<double, std::micro>(spec_.slow_us));
    if (spec_.random_crash(seed_, m.measurement_id)) crash_now();
    const std::string knobs = m.knobs.canonical();
    const Timing timing = fake::kernel_timing(m.kernel_id, knobs, group_.m, group_.n, group_.k);
    if (const auto fault = spec_.measure_fault(m.kernel_id, knobs)) {
      switch (fault->kind) {
        case fake::FaultKind::crash: crash_now();
        case fake::FaultKind::crash_once:
          if (create_marker(fault->marker)) crash_now();
          break;
        case fake::FaultKind::hang:
          while (true) std::this_thread::sleep_for(std::chrono::hours(1));
        case fake::FaultKind::freeze:
          std::raise(SIGSTOP);  // every thread stops, heartbeats included
          break;
        case fake::FaultKind::launch_error:
          r.status = "launch_error";
          r.error = "fake sticky launch error (an illegal address)";
          r.fatal = true;
          return r;
        case fake::FaultKind::misaligned:
          r.status = "launch_error";
          r.error = "fake sticky launch error (misaligned address)";
          r.fatal = true;
          return r;
        case fake::FaultKind::incorrect:
          // Only a checked measurement can notice wrong results.
          if (m.check) {
            r.status = "incorrect";
            r.error = "fake wrong results";
            r.timing = timing;
            r.max_rel_err = 0.5;
            return r;
          }
          break;
        case fake::FaultKind::cannot_implement:
          r.status = "cannot_implement";
          r.error = "fake can_implement() rejected the problem";
          return r;
        case fake::FaultKind::compile_error: break;  // the monitor's concern, never here
        case fake::FaultKind::oom: std::raise(SIGKILL); break;
      }
    }
    r.timing = timing;
    if (m.cutoff_us > 0 && timing.mean_us > m.cutoff_us) {
      r.status = "cut";
      return r;
    }
    r.status = "ok";
    if (m.check) r.max_rel_err = 1e-3;
    return r;
  }

 private:
  fake::FaultSpec spec_;
  uint64_t seed_;
  GroupSpec group_;
  bool have_group_ = false;
  bool started_ = false;
};

}  // namespace

std::unique_ptr<Backend> make_fake_backend(const std::string& fault_spec, uint64_t seed) {
  return std::make_unique<FakeBackend>(fake::FaultSpec::parse(fault_spec), seed);
}

}  // namespace cks::worker
