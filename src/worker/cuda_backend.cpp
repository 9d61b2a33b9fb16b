// The real CUDA backend of the GPU worker (docs/harness-gpu.md describes the protocol).
//
// One device memory pool is allocated at start-up and every group is laid out inside it:
//   [cuBLAS workspace][compare stats][FP32 reference D][R x A][R x B][R x D][workspace arena]
// R replicas of the operands are chosen so their working set is at least twice the L2 (and
// R >= 3 when the pool allows). A cursor rotates through the replicas across every launch of the
// group (cuBLAS and all candidates), so successive launches read different replicas and a replica
// is read again only after >= 2 x L2 of other data: no launch finds its operands in L2. Launch i
// of a measurement uses workspace slot i % 3 of the arena, so the three launches of a timed round
// use different workspaces. Each (replica, workspace) pair gets its own initialized kernel op:
// TMA descriptors are built once per measurement and slot, timed launches only run().
//
// Timing (the paper's protocol): 5 warm-up launches, then 5 rounds of 3 launches between two CUDA
// events; a round's per-launch time is its elapsed time / 3, and the mean and sample standard
// deviation are taken over the 5 rounds. The last 3 warm-up launches are measured like a round to
// decide an early cut. Before each round the stream is held by a gate kernel until the whole
// round is enqueued, and the stream-K workspaces of its 3 slots are reset; so the measured time
// holds the 3 kernels back to back, without host launch overhead and without workspace resets.
#ifdef CKS_HAVE_CUDA

#include <cublas_v2.h>
#include <cuda_profiler_api.h>
#include <cuda_runtime.h>
#include <dlfcn.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <functional>
#include <limits>
#include <map>
#include <numeric>
#include <stdexcept>

#include "cks/common.hpp"
#include "cks/kernel_lib_abi.h"
#include "worker/backend.hpp"
#include "worker/device_kernels.hpp"
#include "worker/fake.hpp"
#include "worker/nvml.hpp"

namespace cks::worker {

namespace {

constexpr int kWarmup = 5;       // warm-up launches; the last kPerRound of them are the cut estimate
constexpr int kRounds = 5;       // timed rounds
constexpr int kPerRound = 3;     // launches per timed round
constexpr int kLaunches = kWarmup + kRounds * kPerRound;
constexpr int kWorkspaceSlots = kPerRound;  // launch i uses workspace slot i % 3
constexpr size_t kAlign = 256;
constexpr size_t kMiB = size_t(1) << 20;
constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;
constexpr size_t kCublasWorkspace = 32 * kMiB;  // NVIDIA's recommendation for Hopper
constexpr double kDefaultPoolGb = 24;
constexpr double kMaxPoolFraction = 0.9;        // of the device's free memory
constexpr double kMinArenaFraction = 0.25;      // of the pool kept for kernel workspaces
constexpr size_t kMinArena = 1024 * kMiB;
constexpr int kMinReplicas = 3;
constexpr double kL2Multiple = 2.0;             // working set >= 2 x L2
constexpr uint64_t kGateTimeoutNs = 1'000'000'000;
// Correctness tolerance: max |d - ref| / max |ref| with ref the FP32 cuBLAS result of the same
// BF16 inputs. Rounding D to BF16 alone contributes <= 2^-8 (~0.004) of |d| <= max |ref|, and
// FP32 accumulation-order differences (split-K, stream-K) are far below that even at K = 16384;
// a kernel computing the wrong tile, skipping K blocks or leaving the poison in place lands near
// or above 1. NaN/Inf anywhere in D always fails.
constexpr double kTolerance = 2e-2;

size_t align_up(size_t x) { return (x + kAlign - 1) / kAlign * kAlign; }

void check(cudaError_t e, const char* what) {
  if (e != cudaSuccess)
    throw std::runtime_error(std::string(what) + ": " + cudaGetErrorName(e) + " (" + cudaGetErrorString(e) + ")");
}

void check_cublas(cublasStatus_t s, const char* what) {
  if (s != CUBLAS_STATUS_SUCCESS)
    throw std::runtime_error(std::string(what) + ": " + cublasGetStatusName(s) + " (" + cublasGetStatusString(s) + ")");
}

// After a failure: clear the (non-sticky) last error and see whether the context still works.
// A sticky error (illegal address, launch failure, ...) keeps failing every call.
bool context_broken() {
  (void)cudaGetLastError();
  return cudaDeviceSynchronize() != cudaSuccess;
}

// CUDA encodes versions as 1000 * major + 10 * minor (13000 => "13.0").
std::string cuda_version_string(int v) { return std::to_string(v / 1000) + "." + std::to_string((v / 10) % 100); }

std::string uuid_string(const cudaUUID_t& u) {
  const auto* b = reinterpret_cast<const unsigned char*>(u.bytes);
  char buf[64];
  std::snprintf(buf, sizeof buf, "GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", b[0], b[1],
                b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13], b[14], b[15]);
  return buf;
}

double mean_of(const std::vector<double>& v) { return std::accumulate(v.begin(), v.end(), 0.0) / v.size(); }

// Sample standard deviation (n - 1), the paper's empirical sigma over rounds.
double sample_std(const std::vector<double>& v) {
  if (v.size() < 2) return 0;
  const double m = mean_of(v);
  double ss = 0;
  for (double x : v) ss += (x - m) * (x - m);
  return std::sqrt(ss / static_cast<double>(v.size() - 1));
}

// A loaded kernel library. Libraries stay loaded for the worker's lifetime: each carries its own
// static CUDA runtime, and its modules load lazily (only measured kernels cost device memory).
struct KernelLibrary {
  void* handle = nullptr;
  const cks_kernel_lib* api = nullptr;
};

class CudaBackend final : public Backend {
 public:
  CudaBackend(int device, double pool_gb, const std::string& fault_spec);
  ~CudaBackend() override;
  DeviceInfo info() override;
  GroupResult setup_group(const GroupSpec& g) override;
  MeasureResult measure(const MeasureSpec& m) override;

 private:
  struct Replica {
    void *a = nullptr, *b = nullptr, *d = nullptr;
  };
  struct Group {
    GroupSpec spec;
    size_t replicas = 0;
    char *a = nullptr, *b = nullptr, *d = nullptr;  // replica r of A starts at a + r * a_stride
    size_t a_stride = 0, b_stride = 0, d_stride = 0;
    size_t cursor = 0;  // replica of the group's next launch
    float* ref = nullptr;
    dev::CompareStats* stats = nullptr;
    char* arena = nullptr;
    size_t arena_bytes = 0;
    size_t d_elems = 0;
    Replica replica(size_t r) const {
      r %= replicas;
      return {a + r * a_stride, b + r * b_stride, d + r * d_stride};
    }
  };
  using LaunchFn = std::function<void(int launch)>;

  char* carve(size_t& offset, size_t bytes) {
    char* p = pool_ + offset;
    offset += align_up(bytes);
    return p;
  }
  void sync();
  double timed_round(int first, const LaunchFn& prepare, const LaunchFn& launch);
  Timing run_protocol(const LaunchFn& prepare, const LaunchFn& launch, double cutoff_us, bool& cut);
  void cublas_gemm(const GroupSpec& g, const Replica& r, void* out, cudaDataType out_type);
  const KernelLibrary& library(const std::string& path);
  void sample_clocks(Timing& t) const;
  MeasureResult measure_candidate(const MeasureSpec& m);

  int device_ = 0;
  cudaDeviceProp prop_{};
  cudaStream_t stream_ = nullptr;
  cudaEvent_t ev_start_ = nullptr, ev_stop_ = nullptr, ev_sync_ = nullptr;
  cublasHandle_t cublas_ = nullptr;
  char* pool_ = nullptr;
  size_t pool_bytes_ = 0;
  volatile int* gate_host_ = nullptr;
  int* gate_dev_ = nullptr;
  std::unique_ptr<Nvml> nvml_;
  std::optional<Group> group_;
  std::map<std::string, KernelLibrary> libraries_;
  fake::FaultSpec faults_;  // device faults injected in place of launches (fake.hpp, cuda_injectable)
};

CudaBackend::CudaBackend(int device, double pool_gb, const std::string& fault_spec)
    : device_(device), faults_(fake::FaultSpec::parse(fault_spec)) {
  for (const auto& f : faults_.faults)
    if (!fake::cuda_injectable(f.kind))
      throw Error("the cuda backend injects only hang, launch_error and misaligned faults ('" + f.kernel_id + "')");
  int count = 0;
  check(cudaGetDeviceCount(&count), "cudaGetDeviceCount");
  if (device < 0 || device >= count)
    throw Error("no CUDA device " + std::to_string(device) + " (" + std::to_string(count) + " visible)");
  check(cudaSetDevice(device), "cudaSetDevice");
  check(cudaGetDeviceProperties(&prop_, device), "cudaGetDeviceProperties");
  check(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking), "cudaStreamCreate");
  // Blocking-sync events: a waiting worker sleeps instead of spinning a core the compile pool needs.
  check(cudaEventCreateWithFlags(&ev_start_, cudaEventBlockingSync), "cudaEventCreate");
  check(cudaEventCreateWithFlags(&ev_stop_, cudaEventBlockingSync), "cudaEventCreate");
  check(cudaEventCreateWithFlags(&ev_sync_, cudaEventBlockingSync | cudaEventDisableTiming), "cudaEventCreate");

  size_t free_b = 0, total_b = 0;
  check(cudaMemGetInfo(&free_b, &total_b), "cudaMemGetInfo");
  const double want_gb = pool_gb > 0 ? pool_gb : std::min(kDefaultPoolGb, kMaxPoolFraction * free_b / kGiB);
  pool_bytes_ = static_cast<size_t>(want_gb * kGiB) / kAlign * kAlign;
  if (pool_bytes_ < 2 * kMinArena)
    throw Error("device pool of " + format_double(want_gb) + " GiB is too small (at least " +
                format_double(2 * kMinArena / kGiB) + " GiB)");
  if (pool_bytes_ > free_b)
    throw Error("device pool of " + format_double(want_gb) + " GiB exceeds the " + format_double(free_b / kGiB) +
                " GiB free on device " + std::to_string(device));
  void* pool = nullptr;
  check(cudaMalloc(&pool, pool_bytes_), "cudaMalloc(device pool)");
  pool_ = static_cast<char*>(pool);

  void* gate = nullptr;
  check(cudaHostAlloc(&gate, sizeof(int), cudaHostAllocMapped), "cudaHostAlloc(gate)");
  gate_host_ = static_cast<volatile int*>(gate);
  *gate_host_ = 1;
  check(cudaHostGetDevicePointer(reinterpret_cast<void**>(&gate_dev_), gate, 0), "cudaHostGetDevicePointer");

  check_cublas(cublasCreate(&cublas_), "cublasCreate");
  // cublasSetStream resets the workspace, so the stream goes first.
  check_cublas(cublasSetStream(cublas_, stream_), "cublasSetStream");
  check_cublas(cublasSetWorkspace(cublas_, pool_, kCublasWorkspace), "cublasSetWorkspace");

  char bus_id[32] = {0};
  check(cudaDeviceGetPCIBusId(bus_id, sizeof bus_id, device), "cudaDeviceGetPCIBusId");
  nvml_ = std::make_unique<Nvml>(bus_id);
}

CudaBackend::~CudaBackend() {
  // Best effort: the process is ending; errors here change nothing.
  if (cublas_) cublasDestroy(cublas_);
  if (gate_host_) cudaFreeHost(const_cast<int*>(gate_host_));
  if (pool_) cudaFree(pool_);
  for (auto e : {ev_start_, ev_stop_, ev_sync_})
    if (e) cudaEventDestroy(e);
  if (stream_) cudaStreamDestroy(stream_);
}

DeviceInfo CudaBackend::info() {
  DeviceInfo d;
  d.backend = "cuda";
  d.gpu_name = prop_.name;
  d.gpu_uuid = uuid_string(prop_.uuid);
  d.device = device_;
  d.sm_count = prop_.multiProcessorCount;
  d.l2_bytes = static_cast<double>(prop_.l2CacheSize);
  d.pool_bytes = pool_bytes_;
  int v = 0;
  d.driver_version = nvml_->driver_version();
  if (d.driver_version.empty() && cudaDriverGetVersion(&v) == cudaSuccess) d.driver_version = cuda_version_string(v);
  if (cudaRuntimeGetVersion(&v) == cudaSuccess) d.cuda_runtime_version = cuda_version_string(v);
  if (cublasGetVersion(cublas_, &v) == CUBLAS_STATUS_SUCCESS)  // 10000 * major + 100 * minor + patch
    d.cublas_version = std::to_string(v / 10000) + "." + std::to_string((v / 100) % 100) + "." + std::to_string(v % 100);
  return d;
}

void CudaBackend::sync() {
  check(cudaEventRecord(ev_sync_, stream_), "cudaEventRecord");
  check(cudaEventSynchronize(ev_sync_), "synchronize");
}

void CudaBackend::sample_clocks(Timing& t) const {
  const Nvml::Sample s = nvml_->sample();
  t.sm_clock_mhz = s.sm_clock_mhz;
  t.mem_clock_mhz = s.mem_clock_mhz;
  t.temp_c = s.temp_c;
  t.power_w = s.power_w;
}

// Launches first .. first+2 between the two events and returns the per-launch time in us.
double CudaBackend::timed_round(int first, const LaunchFn& prepare, const LaunchFn& launch) {
  for (int j = 0; j < kPerRound; ++j) prepare(first + j);
  *gate_host_ = 0;
  // Whatever happens below, the gate opens again (else the stream waits for its timeout).
  struct Release {
    volatile int* g;
    ~Release() {
      std::atomic_thread_fence(std::memory_order_seq_cst);
      *g = 1;
    }
  } release{gate_host_};
  const auto t0 = std::chrono::steady_clock::now();
  check(dev::launch_gate(gate_dev_, kGateTimeoutNs, stream_), "launch gate");
  check(cudaEventRecord(ev_start_, stream_), "cudaEventRecord");
  for (int j = 0; j < kPerRound; ++j) launch(first + j);
  check(cudaEventRecord(ev_stop_, stream_), "cudaEventRecord");
  const double enqueue_ns = std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - t0).count();
  std::atomic_thread_fence(std::memory_order_seq_cst);
  *gate_host_ = 1;
  check(cudaEventSynchronize(ev_stop_), "kernel execution");
  if (enqueue_ns >= static_cast<double>(kGateTimeoutNs))
    throw std::runtime_error("harness: enqueuing a timed round took " + format_double(enqueue_ns / 1e6) +
                             " ms, longer than the launch gate holds the stream");
  float ms = 0;
  check(cudaEventElapsedTime(&ms, ev_start_, ev_stop_), "cudaEventElapsedTime");
  return ms * 1000.0 / kPerRound;
}

// The paper's protocol over launches 0 .. kWarmup + kRounds*kPerRound - 1. `cut` is set (and the
// warm-up estimate returned, n = 0) when cutoff_us > 0 and the warm-up round exceeds it.
Timing CudaBackend::run_protocol(const LaunchFn& prepare, const LaunchFn& launch, double cutoff_us, bool& cut) {
  cut = false;
  Timing t;
  for (int i = 0; i < kWarmup - kPerRound; ++i) {
    prepare(i);
    launch(i);
  }
  const double warm_us = timed_round(kWarmup - kPerRound, prepare, launch);
  if (cutoff_us > 0 && warm_us > cutoff_us) {
    cut = true;
    t.mean_us = warm_us;
    sample_clocks(t);
    return t;
  }
  std::vector<double> rounds;
  for (int r = 0; r < kRounds; ++r) rounds.push_back(timed_round(kWarmup + r * kPerRound, prepare, launch));
  t.mean_us = mean_of(rounds);
  t.std_us = sample_std(rounds);
  t.n = kRounds;
  sample_clocks(t);
  return t;
}

// D (MxN, column-major) = A * B in cuBLAS's column-major terms: a row-major A (MxK) is a
// column-major KxM matrix used transposed (lda = K); a row-major B (KxN) is a column-major NxK
// one used transposed (ldb = N). So "tn" is (CUBLAS_OP_T, CUBLAS_OP_N), as in CUTLASS's naming.
void CudaBackend::cublas_gemm(const GroupSpec& g, const Replica& r, void* out, cudaDataType out_type) {
  const bool at = a_row_major(g.layout), bt = b_row_major(g.layout);
  const float alpha = 1.0f, beta = 0.0f;
  check_cublas(cublasGemmEx(cublas_, at ? CUBLAS_OP_T : CUBLAS_OP_N, bt ? CUBLAS_OP_T : CUBLAS_OP_N, g.m, g.n, g.k,
                            &alpha, r.a, CUDA_R_16BF, at ? g.k : g.m, r.b, CUDA_R_16BF, bt ? g.n : g.k, &beta, out,
                            out_type, g.m, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT),
               "cublasGemmEx");
}

// Copies replica 0 of an operand over replicas 1..n-1 (contiguous, `stride` apart) by doubling:
// log2(n) copies however small the operand is.
void replicate(char* base, size_t stride, size_t n, cudaStream_t stream) {
  for (size_t have = 1; have < n; have *= 2) {
    const size_t count = std::min(have, n - have);
    check(cudaMemcpyAsync(base + have * stride, base, count * stride, cudaMemcpyDeviceToDevice, stream), "replicate");
  }
}

GroupResult CudaBackend::setup_group(const GroupSpec& g) {
  GroupResult res;
  group_.reset();
  try {
    check_problem(g.m, g.n, g.k, g.layout);
  } catch (const Error& e) {
    throw Error("group " + std::to_string(g.group_id) + ": " + e.what());
  }
  const size_t m = g.m, n = g.n, k = g.k;
  Group grp;
  grp.spec = g;
  grp.d_elems = m * n;
  grp.a_stride = align_up(2 * m * k);
  grp.b_stride = align_up(2 * k * n);
  grp.d_stride = align_up(2 * m * n);
  const size_t replica_bytes = grp.a_stride + grp.b_stride + grp.d_stride;
  const size_t fixed = align_up(kCublasWorkspace) + align_up(sizeof(dev::CompareStats)) + align_up(4 * m * n);
  const size_t min_arena = std::max(kMinArena, static_cast<size_t>(kMinArenaFraction * pool_bytes_));
  const size_t room = pool_bytes_ > fixed + min_arena ? pool_bytes_ - fixed - min_arena : 0;
  const size_t fit = room / replica_bytes;
  const size_t for_l2 = static_cast<size_t>(std::ceil(kL2Multiple * prop_.l2CacheSize / replica_bytes));
  grp.replicas = std::min(std::max<size_t>(kMinReplicas, for_l2), fit);
  if (grp.replicas == 0) {
    res.status = "too_large";
    res.error = "one replica of A, B and D (" + format_double(replica_bytes / kGiB) + " GiB) does not fit the " +
                format_double(pool_bytes_ / kGiB) + " GiB device pool (raise --pool-gb)";
    return res;
  }
  size_t off = align_up(kCublasWorkspace);  // the cuBLAS workspace sits at the pool's start
  grp.stats = reinterpret_cast<dev::CompareStats*>(carve(off, sizeof(dev::CompareStats)));
  grp.ref = reinterpret_cast<float*>(carve(off, 4 * m * n));
  grp.a = carve(off, grp.replicas * grp.a_stride);
  grp.b = carve(off, grp.replicas * grp.b_stride);
  grp.d = carve(off, grp.replicas * grp.d_stride);
  grp.arena = pool_ + off;
  grp.arena_bytes = pool_bytes_ - off;

  // Random operands in replica 0 (A and B from distinct streams of the group's seed), copied to
  // the others: every replica holds the same problem, so one reference serves all.
  check(dev::fill_random_bf16(grp.a, m * k, g.seed * 2 + 0, stream_), "fill A");
  check(dev::fill_random_bf16(grp.b, k * n, g.seed * 2 + 1, stream_), "fill B");
  replicate(grp.a, grp.a_stride, grp.replicas, stream_);
  replicate(grp.b, grp.b_stride, grp.replicas, stream_);

  // The FP32 reference, then cuBLAS's own default choice timed under the same protocol.
  cublas_gemm(g, grp.replica(0), grp.ref, CUDA_R_32F);
  bool cut = false;
  const size_t base = grp.cursor;
  res.cublas = run_protocol([](int) {},
                            [&](int i) {
                              const Replica r = grp.replica(base + i);
                              cublas_gemm(g, r, r.d, CUDA_R_16BF);
                            },
                            0, cut);
  grp.cursor += kLaunches;
  res.status = "ok";
  res.cublas_algo = "cublasGemmEx CUBLAS_GEMM_DEFAULT, CUBLAS_COMPUTE_32F";
  res.replicas = static_cast<int>(grp.replicas);
  group_ = std::move(grp);
  return res;
}

const KernelLibrary& CudaBackend::library(const std::string& path) {
  if (auto it = libraries_.find(path); it != libraries_.end()) return it->second;
  KernelLibrary lib;
  lib.handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!lib.handle) throw Error("cannot load kernel library " + path + ": " + dlerror());
  auto get = reinterpret_cast<const cks_kernel_lib* (*)()>(dlsym(lib.handle, "cks_kernel_lib_get"));
  lib.api = get ? get() : nullptr;
  if (!lib.api || lib.api->abi_version != CKS_KERNEL_LIB_ABI_VERSION)
    throw Error("kernel library " + path + " does not export ABI version " + std::to_string(CKS_KERNEL_LIB_ABI_VERSION));
  return libraries_.emplace(path, lib).first->second;
}

// Any failure of the harness or the kernel is a launch_error; it is fatal (the worker must be
// restarted) when it left the CUDA context unusable.
MeasureResult CudaBackend::measure(const MeasureSpec& m) {
  try {
    return measure_candidate(m);
  } catch (const std::exception& e) {
    MeasureResult r;
    r.status = "launch_error";
    r.error = e.what();
    r.fatal = context_broken();
    return r;
  }
}

MeasureResult CudaBackend::measure_candidate(const MeasureSpec& m) {
  MeasureResult res;
  if (!group_) {
    res.status = "launch_error";
    res.error = "measure before any group was set up";
    return res;
  }
  const cks_kernel_lib& lib = *library(m.lib_path).api;
  if (m.index < 0 || m.index >= lib.count())
    throw Error("kernel index " + std::to_string(m.index) + " out of range in " + m.lib_path);
  if (!m.kernel_id.empty() && m.kernel_id != lib.kernel_id(m.index))
    throw Error(m.lib_path + " holds " + lib.kernel_id(m.index) + " at index " + std::to_string(m.index) + ", not " +
                m.kernel_id);

  Group& grp = *group_;
  const size_t base = grp.cursor;  // launch i reads replica base + i
  grp.cursor += kLaunches;
  auto problem = [&](const Replica& r) {
    cks_problem p{};
    p.m = grp.spec.m;
    p.n = grp.spec.n;
    p.k = grp.spec.k;
    p.A = r.a;
    p.B = r.b;
    p.D = r.d;
    p.alpha = 1.0f;
    p.beta = 0.0f;
    p.knobs = {static_cast<int>(m.knobs.raster), m.knobs.max_swizzle, static_cast<int>(m.knobs.decomposition),
               m.knobs.splits, static_cast<int>(m.knobs.reduction)};
    p.device_id = device_;
    p.sm_count = prop_.multiProcessorCount;
    return p;
  };
  const cks_problem p0 = problem(grp.replica(base));
  const int ci = lib.can_implement(m.index, &p0);
  if (ci != CKS_OK) {
    res.status = "cannot_implement";
    res.error = ci == CKS_CANNOT_IMPLEMENT ? "CUTLASS can_implement() rejected the problem"
                                           : "the runtime knobs " + m.knobs.canonical() + " do not apply to this kernel";
    return res;
  }
  const size_t ws = align_up(lib.workspace_size(m.index, &p0));
  if (ws * kWorkspaceSlots > grp.arena_bytes) {
    res.status = "cannot_implement";
    res.error = "workspace of " + std::to_string(ws) + " bytes x " + std::to_string(kWorkspaceSlots) +
                " slots exceeds the pool's workspace arena of " + std::to_string(grp.arena_bytes) + " bytes";
    return res;
  }

  // One op per (replica, workspace slot) pair a launch uses, built on first use.
  struct Ops {
    const cks_kernel_lib& lib;
    std::map<std::pair<size_t, int>, cks_op> ops;
    ~Ops() {
      for (auto& [key, op] : ops) lib.destroy(op);
    }
  } ops{lib, {}};
  auto op_for = [&](int launch) {
    const std::pair<size_t, int> key{(base + launch) % grp.replicas, launch % kWorkspaceSlots};
    if (auto it = ops.ops.find(key); it != ops.ops.end()) return it->second;
    const cks_problem p = problem(grp.replica(key.first));
    cks_op op = nullptr;
    const int st = lib.initialize(m.index, &p, ws ? grp.arena + key.second * ws : nullptr, stream_, &op);
    if (st == CKS_CANNOT_IMPLEMENT) throw Error("CUTLASS initialize() rejected the problem");
    if (st != CKS_OK) throw std::runtime_error("kernel initialize() failed (status " + std::to_string(st) + ")");
    return ops.ops.emplace(key, op).first->second;
  };
  const LaunchFn prepare = [&](int i) {
    if (lib.reset_workspace(op_for(i), stream_) != CKS_OK) throw std::runtime_error("workspace reset failed");
  };
  // The library's own CUDA runtime saw the launch error; this one only sees sticky errors later.
  // An injected fault (--fault) launches a faulting device kernel instead of run().
  const auto fault = faults_.measure_fault(m.kernel_id, m.knobs.canonical());
  const LaunchFn launch = [&](int i) {
    if (fault) {
      const dev::InjectedFault kind = fault->kind == fake::FaultKind::hang           ? dev::InjectedFault::hang
                                      : fault->kind == fake::FaultKind::misaligned ? dev::InjectedFault::misaligned
                                                                                     : dev::InjectedFault::trap;
      check(dev::inject_fault(kind, grp.replica(base).a, stream_), "injected fault");
      return;
    }
    if (lib.run(op_for(i), stream_) != CKS_OK) throw std::runtime_error("CUTLASS run() could not launch the kernel");
  };

  if (m.check) {
    // Poisoned output (0xFFFF is a BF16 NaN), one launch, then compare with the reference.
    const Replica r = grp.replica(base);
    check(cudaMemsetAsync(r.d, 0xFF, grp.d_elems * 2, stream_), "poison D");
    check(cudaMemsetAsync(grp.stats, 0, sizeof(dev::CompareStats), stream_), "clear stats");
    prepare(0);
    launch(0);
    check(dev::compare_bf16_f32(r.d, grp.ref, grp.d_elems, grp.stats, stream_), "compare");
    dev::CompareStats st{};
    check(cudaMemcpyAsync(&st, grp.stats, sizeof st, cudaMemcpyDeviceToHost, stream_), "read stats");
    sync();
    float max_err = 0, max_ref = 0;
    std::memcpy(&max_err, &st.max_abs_err_bits, sizeof max_err);
    std::memcpy(&max_ref, &st.max_abs_ref_bits, sizeof max_ref);
    res.max_rel_err = st.nonfinite > 0 ? std::numeric_limits<double>::infinity()
                                       : max_err / std::max(max_ref, std::numeric_limits<float>::min());
    if (st.nonfinite > 0 || !(res.max_rel_err <= kTolerance)) {
      res.status = "incorrect";
      res.error = st.nonfinite > 0 ? std::to_string(st.nonfinite) + " of " + std::to_string(grp.d_elems) +
                                         " outputs are NaN/Inf (not written, or overflowed)"
                                   : "max |d - ref| / max |ref| = " + format_double(res.max_rel_err) + " > " +
                                         format_double(kTolerance);
      return res;
    }
  }

  bool cut = false;
  res.timing = run_protocol(prepare, launch, m.cutoff_us, cut);
  res.status = cut ? "cut" : "ok";
  if (m.profile && !cut) {
    const int i = kLaunches - 1;  // a replica the timed rounds used; its ops already exist
    prepare(i);
    sync();
    check(cudaProfilerStart(), "cudaProfilerStart");
    launch(i);
    sync();
    check(cudaProfilerStop(), "cudaProfilerStop");
  }
  if (cut)
    res.error = "warm-up round " + format_double(res.timing.mean_us) + " us > cut-off " + format_double(m.cutoff_us) + " us";
  return res;
}

}  // namespace

std::unique_ptr<Backend> make_cuda_backend(int device, double pool_gb, const std::string& fault_spec) {
  return std::make_unique<CudaBackend>(device, pool_gb, fault_spec);
}

}  // namespace cks::worker

#endif  // CKS_HAVE_CUDA
