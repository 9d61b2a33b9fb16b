// The fake GPU shared by the fake backend (inside cks-worker), the monitor's fake compile
// mode and the tests: the fault-spec grammar and the synthetic timing model. Its .cpp is
// src/worker/protocol_fake.cpp so that CMake links it into cks_core (tests and the monitor
// need it, not only the worker).
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "worker/backend.hpp"

namespace cks::worker::fake {

// What a fault does to a measurement of its kernel (in every group; every knob setting unless
// the fault names one).
enum class FaultKind : uint8_t {
  crash,             // raise SIGSEGV inside measure()
  crash_once,        // crash unless the marker file exists (created just before crashing)
  hang,              // sleep forever inside measure(); heartbeats continue
  freeze,            // SIGSTOP the whole worker: heartbeats stop too
  launch_error,      // status launch_error, fatal (sticky CUDA error): the worker exits
  incorrect,         // status incorrect when the result is checked
  cannot_implement,  // status cannot_implement
  compile_error,     // the monitor's fake compiler fails this kernel
  oom,               // SIGKILL itself inside measure(), as the OOM killer would: an outside kill
  misaligned,        // status launch_error, fatal: a misaligned device access (sticky)
};

// The kinds the real CUDA backend injects too (`cks collect --backend cuda --fault`, for the
// fault-path check on the GPU, scripts/device/fault_check.sh): instead of the kernel's run() it
// launches a device kernel that spins forever (hang), executes a trap (launch_error: "unspecified
// launch failure") or reads a misaligned address (misaligned); every one is a real CUDA error or
// a real hang, handled by the real backend, worker and monitor.
bool cuda_injectable(FaultKind kind);

struct Fault {
  FaultKind kind = FaultKind::crash;
  std::string kernel_id;
  std::string knobs;   // RuntimeKnobs::canonical(); empty: every knob setting
  std::string marker;  // crash_once: path of the file that says "already crashed once"
};

// Grammar (items separated by ';', blanks ignored; "/<knobs>" limits a fault to one knob
// setting of the kernel, e.g. crash@k0123456789abcdef/r=m,s=2,d=h,k=1):
//   <kind>@<kernel_id>[/<knobs>]          kind: crash hang freeze launch_error incorrect
//                                               cannot_implement compile_error (never per knobs) oom
//                                               misaligned
//   crash_once@<kernel_id>[/<knobs>]:<marker_path>
//   crash:p=<probability>                 every measurement crashes with this probability
//   slow=<microseconds>                   every measurement takes at least this long
//   slow_start=<microseconds>             the worker's start-up (its hello) takes this long
//   start_gate=<path>                     the worker's start-up (its hello) waits until this file exists
struct FaultSpec {
  std::vector<Fault> faults;
  double crash_p = 0;
  double slow_us = 0;
  double slow_start_us = 0;
  std::string start_gate;

  static FaultSpec parse(std::string_view spec);  // throws cks::Error naming the bad item
  // The first fault a measurement of (kernel_id, knobs) hits (compile_error excluded), if any.
  std::optional<Fault> measure_fault(std::string_view kernel_id, std::string_view knobs) const;
  bool compile_fails(std::string_view kernel_id) const;
  // Deterministic draw for `crash:p=`: a measurement id is unique within a monitor run, so a
  // retry draws again while a re-run with the same seed repeats the same crashes.
  bool random_crash(uint64_t seed, int64_t measurement_id) const;
};

// Synthetic timing model. A kernel's efficiency is a fixed pseudo-random fraction of a
// nominal peak, derived from the candidate's identity:
//   u          = top 53 bits of fmix64(fnv1a64("<kernel_id>|<knobs>")) / 2^53  in [0, 1)
//   efficiency = 0.2 + 0.7 u                                                   in [0.2, 0.9)
//   mean_us    = kFakeLaunchUs + 2 M N K / (efficiency * kFakePeakFlops) * 1e6
//   std_us     = 0.01 mean_us, n = 5 rounds
// cuBLAS uses efficiency kFakeCublasEfficiency.
inline constexpr double kFakePeakFlops = 800e12;
inline constexpr double kFakeLaunchUs = 5.0;
inline constexpr double kFakeCublasEfficiency = 0.75;
double efficiency(std::string_view kernel_id, std::string_view knobs);
Timing kernel_timing(std::string_view kernel_id, std::string_view knobs, long m, long n, long k);
Timing cublas_timing(long m, long n, long k);

}  // namespace cks::worker::fake
