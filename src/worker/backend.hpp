// The GPU worker's backend interface: the real CUDA backend (cuda_backend.cpp) and the fake
// backend used for fault injection in tests (fake_backend.cpp) both implement it.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "cks/catalogue.hpp"

namespace cks::worker {

struct DeviceInfo {
  std::string backend;      // "cuda" | "fake"
  std::string gpu_name, gpu_uuid, driver_version, cuda_runtime_version, cublas_version;
  int device = 0;
  int sm_count = 0;
  double l2_bytes = 0;
  size_t pool_bytes = 0;    // device memory pool allocated once
};

struct GroupSpec {
  int64_t group_id = 0;
  int m = 0, n = 0, k = 0;
  Layout layout = Layout::tn;
  uint64_t seed = 0;        // random BF16 operand data
};

// Timing of one candidate (or cuBLAS) under the paper's protocol: 5 warm-up launches, then 5
// rounds of 3 timed launches with CUDA events; mean/std over the 5 per-launch round times.
struct Timing {
  double mean_us = 0, std_us = 0;
  int n = 0;                // timed rounds
  double sm_clock_mhz = 0, mem_clock_mhz = 0, temp_c = 0, power_w = 0;  // NVML, NaN/0 if absent
};

struct GroupResult {
  std::string status;       // "ok" or an error status
  std::string error;
  Timing cublas;            // cuBLAS default heuristic on the same buffers
  std::string cublas_algo;  // description of the algorithm cuBLAS picked, if known
  int replicas = 0;         // operand replicas in the pool (working set > L2)
};

struct MeasureSpec {
  int64_t measurement_id = 0;
  std::string lib_path;     // kernel library (.so)
  int index = 0;            // kernel index inside it
  std::string kernel_id;
  RuntimeKnobs knobs;
  bool check = true;        // compare against the cuBLAS reference (first time in a group)
  double cutoff_us = 0;     // >0: stop early (status "cut") if the warm-up mean exceeds this
  // After an ok measurement, one more launch bracketed by cudaProfilerStart/Stop, alone in the
  // profiler's range (its workspace reset happens before the range): what `ncu
  // --profile-from-start off` profiles in `cks-worker --profile` (the counter study).
  bool profile = false;
};

struct MeasureResult {
  // ok | cannot_implement | launch_error | incorrect | cut   (crash/timeout are decided by
  // the monitor, never by the worker)
  std::string status;
  std::string error;
  Timing timing;
  double max_rel_err = -1;  // vs cuBLAS (when checked)
  bool fatal = false;       // the CUDA context is unusable (sticky error): exit after reporting
};

class Backend {
 public:
  virtual ~Backend() = default;
  virtual DeviceInfo info() = 0;
  virtual GroupResult setup_group(const GroupSpec& g) = 0;
  virtual MeasureResult measure(const MeasureSpec& m) = 0;
};

// Real CUDA backend (only when built with CKS_HAVE_CUDA). pool_gb = device pool size;
// fault_spec: device faults to inject (worker/fake.hpp, cuda_injectable; empty: none).
std::unique_ptr<Backend> make_cuda_backend(int device, double pool_gb, const std::string& fault_spec = {});
// Fake backend: synthetic throughputs, faults injected by spec (see fake_backend.cpp).
std::unique_ptr<Backend> make_fake_backend(const std::string& fault_spec, uint64_t seed);

}  // namespace cks::worker
