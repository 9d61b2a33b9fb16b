// cks/monitor.hpp — the collection monitor (`cks collect`): compiles the kernels a plan needs
// while one persistent worker process per GPU measures those already compiled, survives
// worker crashes and hangs (attributing each failure to the measurement that was running),
// quarantines kernels that fail repeatedly, stops cleanly on a time budget or a signal, and
// resumes where it stopped. Every attempted measurement is a registry row committed as soon as
// it is known, so kill -9 at any point loses nothing committed. See docs/monitor.md.
#pragma once
#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace cks {

struct CollectOptions {
  std::string plan_path, registry_path;
  std::vector<int> gpus;     // device indices; empty => every visible device (fake: {0})
  std::string worker_exe;    // empty => the cks-worker next to the running executable
  std::string backend = "cuda";  // cuda | fake
  std::string fault_spec;    // fake backend only: faults to inject (worker/fake.hpp grammar)
  uint64_t seed = 0;         // fake backend: seed of `crash:p=` draws
  double pool_gb = 0;        // worker device pool (0 => the worker's default)

  // Compilation (real backend). The fake backend uses a fake compiler instead: every kernel
  // "compiles" (no library; compile_error faults fail it) after fake_compile_s per batch.
  int jobs = 0;              // parallel nvcc processes; 0 => from cores and memory
  int kernels_per_tu = 8;
  double mem_limit_gb = 0;   // compile memory budget; 0 => MemAvailable (too low on machines whose memory grows on use)
  double mem_per_kernel_gb = 0.75;  // compile memory budgeted per kernel of a TU (CompileOptions::mem_per_job_gb)
  std::string cache_dir = "build/kernel-cache";
  std::string cutlass_dir;   // empty => the CUTLASS the build was configured with
  std::string nvcc = "nvcc";
  double fake_compile_s = 0;
  bool real_compile = false;  // fake backend: compile with nvcc anyway (shutdown/compile-path tests)

  // Failure detection. A measurement (or group set-up, or worker start) that has not answered
  // within deadline_s is a timeout; so is a worker whose heartbeats stop for
  // heartbeat_timeout_s. A candidate failing (crash/timeout) max_attempts times is final and
  // quarantines its kernel: its remaining items are recorded `quarantined`. So does a kernel
  // whose launches left the worker's CUDA context unusable 3 times without one ok result.
  double deadline_s = 30;
  double heartbeat_timeout_s = 10;
  int max_attempts = 2;
  // > 0: a candidate whose warm-up mean exceeds cut_factor x min(cuBLAS, best so far in the
  // group) stops early with status `cut`.
  double cut_factor = 0;

  double time_budget_s = 0;        // 0 => no budget
  std::string checkpoint_path;     // empty => no checkpoints
  double checkpoint_every_s = 300;
  double progress_every_s = 10;    // progress line on stderr; 0 => none
  bool handle_signals = false;     // SIGINT/SIGTERM => clean stop (the CLI sets it)
  std::string command;             // the command line, for the run's provenance
};

struct CollectSummary {
  std::string run_uuid;
  size_t groups = 0, groups_done = 0;
  size_t items = 0;               // candidate items in the plan
  size_t pending_at_start = 0;    // items without a final row when the run started
  size_t remaining = 0;           // items still without a final row at the end
  std::map<std::string, size_t> rows;  // candidate rows written by this run, by status
  size_t cublas_rows = 0;         // cuBLAS reference rows written by this run (any status)
  size_t respawns = 0;            // workers restarted after a crash, hang or fatal error
  size_t kernels_compiled = 0, compile_errors = 0, kernels_quarantined = 0;
  std::string stop_reason;        // empty: finished; else "time budget" or "signal"
  // Queue entries and kernels the monitor examined to pick work and to settle compiles: a
  // measure of its bookkeeping, proportional to the items (tests/monitor/test_monitor_scaling.cpp).
  size_t scan_steps = 0;
  double seconds = 0;
  // True when every plan item has a final row (nothing left to resume).
  bool complete() const { return remaining == 0; }
};

// Runs (or resumes) a collection. Throws cks::Error on bad options, an unreadable plan, or
// when no worker can be started; the registry is left consistent in every case.
CollectSummary collect(const CollectOptions& options);

// Human-readable multi-line summary (what `cks collect` prints on stderr at the end).
std::string format_summary(const CollectSummary& s);

}  // namespace cks
