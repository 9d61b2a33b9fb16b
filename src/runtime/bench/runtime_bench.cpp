// cks_runtime_bench — the GEMM runtime measured on the GPU in one process (issue 17, item 6;
// scripts/device/runtime_check.sh runs it on the H200):
//
//   per problem (layout, M, N, K of a shapes CSV), with one runtime handle per mode (select,
//   autotune, cublas) over the same bundle:
//   * first-call latency of each mode (cks_gemm + synchronize, wall clock): a bundle hit (select),
//     the tuning (autotune), cuBLASLt's plan (cublas); then what each dispatched to (the query);
//   * correctness of each mode against an FP32 cuBLAS reference of the same BF16 operands: max |d -
//     ref| / max |ref| (D poisoned with NaN first), as the GPU worker checks kernels;
//   * time per call of each mode, interleaved: `reps` repetitions, in each every mode once (rotated
//     order) as a batch of calls between two CUDA events, on rotating copies of the operands (working
//     set >= 2 x L2), the stream held by a launch gate until the batch is enqueued (no host gaps);
//     the median over repetitions, and TFLOP/s; a mode's ratio to cuBLASLt is the median of the
//     per-repetition ratios (paired: the GPU's clock moves between repetitions, not within one);
//   * for small problems, the host cost of a cached call (us per cks_gemm into a gated stream, no
//     synchronization, `--overhead-calls` calls in batches), beside the bare kernel launch through the
//     kernel library's ABI (the same op) and cuBLASLt mode: the runtime's dispatch overhead.
//
// Writes OUT/runtime_bench.csv (one row per problem), OUT/runtime_bench.json (the summary: geomean
// ratios, worst shapes, sources, overhead) and progress on stderr. --max-seconds stops early (the
// problems done so far are written).
#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <dlfcn.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <numeric>
#include <sstream>
#include <string>
#include <vector>

#include "cks/common.hpp"
#include "cks/files.hpp"
#include "cks/kernel_lib_abi.h"
#include "cks/runtime.hpp"
#include "runtime/bundle.hpp"
#include "runtime/options.hpp"
#include "worker/device_kernels.hpp"

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;
namespace dev = cks::worker::dev;

namespace {

constexpr uint64_t kGateTimeoutNs = 2'000'000'000;
constexpr int kModes = 3;
const char* kModeNames[kModes] = {"select", "autotune", "cublas"};

void check(cudaError_t e, const char* what) {
  if (e != cudaSuccess) throw cks::Error(std::string(what) + ": " + cudaGetErrorName(e) + " (" + cudaGetErrorString(e) + ")");
}
void check_cublas(cublasStatus_t s, const char* what) {
  if (s != CUBLAS_STATUS_SUCCESS) throw cks::Error(std::string(what) + ": " + cublasGetStatusName(s));
}
double seconds_since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

struct Problem {
  cks::Layout layout;
  int64_t m, n, k;
  std::string name() const {
    return std::string(cks::to_string(layout)) + " " + std::to_string(m) + "x" + std::to_string(n) + "x" + std::to_string(k);
  }
};

// m, n, k and layout columns by name (layout may be missing: --layouts); any M (decode M = 1 runs on cuBLASLt).
std::vector<Problem> read_problems(const std::string& path, const std::vector<cks::Layout>& layouts) {
  std::ifstream in(path);
  if (!in) throw cks::Error("cannot read shapes file '" + path + "'");
  std::string line;
  if (!std::getline(in, line)) throw cks::Error(path + ": empty");
  std::map<std::string, size_t> col;
  const auto header = cks::csv_fields(line);
  for (size_t i = 0; i < header.size(); ++i) col[header[i]] = i;
  for (const char* c : {"m", "n", "k"})
    if (!col.count(c)) throw cks::Error(path + ": no '" + c + "' column");
  std::vector<Problem> out;
  for (size_t ln = 2; std::getline(in, line); ++ln) {
    if (line.find_first_not_of(" \r\t") == std::string::npos) continue;
    const auto f = cks::csv_fields(line);
    if (f.size() != header.size()) throw cks::Error(path + ":" + std::to_string(ln) + ": wrong field count");
    std::vector<cks::Layout> ls = layouts;
    if (col.count("layout")) {
      const cks::Layout l = cks::parse_layout(f[col["layout"]]);
      if (!layouts.empty() && std::find(layouts.begin(), layouts.end(), l) == layouts.end()) continue;
      ls = {l};
    }
    if (ls.empty()) ls = {cks::Layout::tn};
    for (cks::Layout l : ls) {
      Problem p{l, std::stoll(f[col["m"]]), std::stoll(f[col["n"]]), std::stoll(f[col["k"]])};
      static const int dummy = 0;
      cks::rt::check_call(p.m, p.n, p.k, std::string(cks::to_string(l)).c_str(), &dummy, &dummy, &dummy);
      out.push_back(p);
    }
  }
  return out;
}

struct Operands {
  std::vector<void*> a, b, d;  // replicas
  float* ref = nullptr;
  dev::CompareStats* stats = nullptr;
  std::vector<void*> owned;
  ~Operands() {
    for (void* p : owned) cudaFree(p);
  }
};

struct Row {
  Problem p;
  double flops = 0;
  std::string source[kModes], kernel[kModes], knobs[kModes], reason[kModes];
  double err[kModes] = {-1, -1, -1};
  double us[kModes] = {0, 0, 0};
  double first_ms[kModes] = {0, 0, 0};
  double host_us[kModes] = {-1, -1, -1};
  double raw_launch_us = -1;
  // Median over the repetitions of cuBLASLt's time / the mode's time within the same repetition
  // (select, autotune): paired, so a clock drift between repetitions cancels.
  double paired[2] = {0, 0};
  int replicas = 0, inner[kModes] = {0, 0, 0};
  std::string error;
};

double geomean(const std::vector<double>& v) {
  if (v.empty()) return 0;
  double s = 0;
  for (double x : v) s += std::log(x);
  return std::exp(s / static_cast<double>(v.size()));
}

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const size_t h = v.size() / 2;
  return v.size() % 2 ? v[h] : 0.5 * (v[h - 1] + v[h]);
}

class Bench {
 public:
  struct Options {
    std::string bundle, out, tuning_file, model;
    int reps = 9;
    int overhead_calls = 10000;
    int overhead_limit = 6;
    double overhead_max_us = 30;
    double target_batch_us = 300;
    double max_seconds = 0;
    double mem_gb = 8;
    int lt_algos = -1;  // autotune_lt_algos; -1: the runtime's default
    int autotune_top = -1;     // autotune_top; -1: the runtime's default
    int autotune_rounds = -1;  // autotune_rounds; -1: the runtime's default
  };

  explicit Bench(Options o) : o_(std::move(o)) {
    check(cudaGetDevice(&device_), "cudaGetDevice");
    check(cudaGetDeviceProperties(&prop_, device_), "cudaGetDeviceProperties");
    check(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking), "cudaStreamCreate");
    check(cudaEventCreate(&ev0_), "cudaEventCreate");
    check(cudaEventCreate(&ev1_), "cudaEventCreate");
    void* gate = nullptr;
    check(cudaHostAlloc(&gate, sizeof(int), cudaHostAllocMapped), "cudaHostAlloc (gate)");
    gate_host_ = static_cast<volatile int*>(gate);
    *gate_host_ = 1;
    check(cudaHostGetDevicePointer(reinterpret_cast<void**>(&gate_dev_), gate, 0), "cudaHostGetDevicePointer");
    check_cublas(cublasCreate(&cublas_), "cublasCreate");
    check_cublas(cublasSetStream(cublas_, stream_), "cublasSetStream");
    for (int i = 0; i < kModes; ++i) {
      cks::RuntimeOptions ro;
      ro.mode(kModeNames[i]).bundle_dir(o_.bundle).compile_on_miss(false);
      if (!o_.tuning_file.empty()) ro.tuning_file(o_.tuning_file);
      if (!o_.model.empty()) ro.model_path(o_.model);
      if (o_.lt_algos > 0) ro.autotune_lt_algos(o_.lt_algos);
      if (o_.autotune_top >= 0) ro.autotune_top(o_.autotune_top);
      if (o_.autotune_rounds > 0) ro.autotune_rounds(o_.autotune_rounds);
      const auto t0 = Clock::now();
      rt_[i] = std::make_unique<cks::Runtime>(ro);
      create_ms_[i] = seconds_since(t0) * 1e3;
    }
    std::fprintf(stderr, "cks_runtime_bench: %s, %d SMs, L2 %d MB; runtime: %s\n", prop_.name, prop_.multiProcessorCount,
                 prop_.l2CacheSize >> 20, rt_[0]->describe().c_str());
    if (!o_.bundle.empty()) bundle_ = cks::rt::BundleIndex::load(o_.bundle);
  }

  ~Bench() {
    *gate_host_ = 1;
    cudaStreamSynchronize(stream_);
    rt_[0].reset();
    rt_[1].reset();
    rt_[2].reset();
    cublasDestroy(cublas_);
    cudaFreeHost(const_cast<int*>(gate_host_));
    cudaEventDestroy(ev0_);
    cudaEventDestroy(ev1_);
    cudaStreamDestroy(stream_);
  }

  Row run(const Problem& p) {
    Row r;
    r.p = p;
    r.flops = 2.0 * static_cast<double>(p.m) * static_cast<double>(p.n) * static_cast<double>(p.k);
    try {
      measure(p, r);
    } catch (const std::exception& e) {
      r.error = cks::one_line(e.what(), 400);
      *gate_host_ = 1;
      cudaStreamSynchronize(stream_);
      (void)cudaGetLastError();
    }
    return r;
  }

  nlohmann::json info() const {
    return {{"gpu", prop_.name},
            {"sm_count", prop_.multiProcessorCount},
            {"l2_bytes", prop_.l2CacheSize},
            {"runtime", nlohmann::json::parse(rt_[0]->describe())},
            {"create_ms", {{"select", create_ms_[0]}, {"autotune", create_ms_[1]}, {"cublas", create_ms_[2]}}}};
  }

  const Options& options() const { return o_; }
  int overhead_done = 0;

 private:
  void sync() { check(cudaStreamSynchronize(stream_), "cudaStreamSynchronize"); }

  // The C API itself (no std::string per call: the host cost measured is the runtime's).
  void call(int mode, const Problem& p, const Operands& ops, size_t r) {
    static const char* names[] = {"tn", "nt", "nn", "tt"};
    if (cks_gemm(rt_[mode]->handle(), p.m, p.n, p.k, names[static_cast<int>(p.layout)], ops.a[r], ops.b[r], ops.d[r], 1.0f,
                 0.0f, stream_) != 0)
      throw cks::Error(std::string(kModeNames[mode]) + ": " + cks_runtime_last_error());
  }

  void alloc(const Problem& p, Operands& ops, Row& row) {
    const size_t a = 2 * static_cast<size_t>(p.m) * p.k, b = 2 * static_cast<size_t>(p.k) * p.n,
                 d = 2 * static_cast<size_t>(p.m) * p.n, per = a + b + d;
    const double l2 = prop_.l2CacheSize;
    int reps = static_cast<int>(std::ceil(2.0 * l2 / static_cast<double>(per))) + 1;
    reps = std::clamp(reps, 1, 8);  // <= the runtime's 8 cached ops per choice
    while (reps > 1 && static_cast<double>(reps) * per > o_.mem_gb * 1e9) --reps;
    row.replicas = reps;
    auto get = [&](size_t bytes) {
      void* ptr = nullptr;
      check(cudaMalloc(&ptr, std::max<size_t>(bytes, 256)), "cudaMalloc (operands)");
      ops.owned.push_back(ptr);
      return ptr;
    };
    for (int r = 0; r < reps; ++r) {
      ops.a.push_back(get(a));
      ops.b.push_back(get(b));
      ops.d.push_back(get(d));
    }
    ops.ref = static_cast<float*>(get(4 * static_cast<size_t>(p.m) * p.n));
    ops.stats = static_cast<dev::CompareStats*>(get(sizeof(dev::CompareStats)));
    const uint64_t seed = static_cast<uint64_t>(p.m * 1000003 + p.n * 1009 + p.k) * 4 + static_cast<uint64_t>(p.layout);
    check(dev::fill_random_bf16(ops.a[0], a / 2, seed * 2, stream_), "fill A");
    check(dev::fill_random_bf16(ops.b[0], b / 2, seed * 2 + 1, stream_), "fill B");
    for (int r = 1; r < reps; ++r) {
      check(cudaMemcpyAsync(ops.a[r], ops.a[0], a, cudaMemcpyDeviceToDevice, stream_), "copy A");
      check(cudaMemcpyAsync(ops.b[r], ops.b[0], b, cudaMemcpyDeviceToDevice, stream_), "copy B");
    }
    // The FP32 reference (the GPU worker's mapping of the layouts onto cuBLAS).
    const bool at = cks::a_row_major(p.layout), bt = cks::b_row_major(p.layout);
    const float alpha = 1.0f, beta = 0.0f;
    check_cublas(cublasGemmEx(cublas_, at ? CUBLAS_OP_T : CUBLAS_OP_N, bt ? CUBLAS_OP_T : CUBLAS_OP_N, static_cast<int>(p.m),
                              static_cast<int>(p.n), static_cast<int>(p.k), &alpha, ops.a[0], CUDA_R_16BF,
                              static_cast<int>(at ? p.k : p.m), ops.b[0], CUDA_R_16BF, static_cast<int>(bt ? p.n : p.k),
                              &beta, ops.ref, CUDA_R_32F, static_cast<int>(p.m), CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT),
                 "cublasGemmEx (reference)");
    sync();
  }

  double compare(const Problem& p, const Operands& ops, size_t r) {
    const size_t elems = static_cast<size_t>(p.m) * p.n;
    check(cudaMemsetAsync(ops.stats, 0, sizeof(dev::CompareStats), stream_), "clear stats");
    check(dev::compare_bf16_f32(ops.d[r], ops.ref, elems, ops.stats, stream_), "compare");
    dev::CompareStats st{};
    check(cudaMemcpyAsync(&st, ops.stats, sizeof st, cudaMemcpyDeviceToHost, stream_), "read stats");
    sync();
    if (st.nonfinite > 0) return std::numeric_limits<double>::infinity();
    float err = 0, ref = 0;
    std::memcpy(&err, &st.max_abs_err_bits, sizeof err);
    std::memcpy(&ref, &st.max_abs_ref_bits, sizeof ref);
    return err / std::max(ref, std::numeric_limits<float>::min());
  }

  // `count` calls of `fn(i)` between two events, the stream gated until all are enqueued; us per call.
  template <class Fn>
  double timed_batch(int count, Fn&& fn) {
    *gate_host_ = 0;
    struct Open {
      volatile int* g;
      ~Open() { *g = 1; }
    } open{gate_host_};
    check(dev::launch_gate(gate_dev_, kGateTimeoutNs, stream_), "launch gate");
    check(cudaEventRecord(ev0_, stream_), "cudaEventRecord");
    for (int i = 0; i < count; ++i) fn(i);
    check(cudaEventRecord(ev1_, stream_), "cudaEventRecord");
    std::atomic_thread_fence(std::memory_order_seq_cst);
    *gate_host_ = 1;
    check(cudaEventSynchronize(ev1_), "timed batch");
    float ms = 0;
    check(cudaEventElapsedTime(&ms, ev0_, ev1_), "cudaEventElapsedTime");
    return 1000.0 * ms / count;
  }

  // Host microseconds per call of fn(i), `total` calls in gated batches of at most 256 (the GPU
  // runs nothing while a batch is enqueued, so no back-pressure from a full launch queue).
  template <class Fn>
  double host_cost(int total, Fn&& fn) {
    double host = 0;
    int done = 0;
    while (done < total) {
      const int batch = std::min(256, total - done);
      *gate_host_ = 0;
      check(dev::launch_gate(gate_dev_, kGateTimeoutNs, stream_), "launch gate");
      const auto t0 = Clock::now();
      for (int i = 0; i < batch; ++i) fn(i);
      host += seconds_since(t0);
      std::atomic_thread_fence(std::memory_order_seq_cst);
      *gate_host_ = 1;
      sync();
      done += batch;
    }
    return host * 1e6 / total;
  }

  void measure(const Problem& p, Row& row) {
    Operands ops;
    alloc(p, ops, row);
    const std::string layout(cks::to_string(p.layout));
    // 1. First calls (each mode's first call of this problem), then what they dispatched to.
    for (int mode : {0, 1, 2}) {
      check(cudaMemsetAsync(ops.d[0], 0xFF, 2 * static_cast<size_t>(p.m) * p.n, stream_), "poison D");
      sync();
      const auto t0 = Clock::now();
      call(mode, p, ops, 0);
      sync();
      row.first_ms[mode] = seconds_since(t0) * 1e3;
      row.err[mode] = compare(p, ops, 0);  // 2. correctness of that call
      const cks::DispatchInfo q = rt_[mode]->query(p.m, p.n, p.k, layout);
      row.source[mode] = q.source;
      row.kernel[mode] = q.kernel_id;
      row.knobs[mode] = q.knobs;
      row.reason[mode] = q.reason;
    }
    // 3. Interleaved timing. Batch sizes from one gated warm batch per mode.
    const size_t reps = ops.a.size();
    size_t cursor = 0;
    for (int mode = 0; mode < kModes; ++mode) {
      const double est = timed_batch(static_cast<int>(reps), [&](int i) { call(mode, p, ops, static_cast<size_t>(i) % reps); });
      row.inner[mode] = std::clamp(static_cast<int>(std::ceil(o_.target_batch_us / std::max(est, 0.5))), 2, 200);
    }
    std::vector<double> per[kModes];
    for (int rep = 0; rep < o_.reps; ++rep)
      for (int j = 0; j < kModes; ++j) {
        const int mode = (j + rep) % kModes;
        per[mode].push_back(timed_batch(row.inner[mode], [&](int) { call(mode, p, ops, cursor++ % reps); }));
      }
    for (int mode = 0; mode < kModes; ++mode) row.us[mode] = median(per[mode]);
    for (int mode = 0; mode < 2; ++mode) {
      std::vector<double> ratio;
      for (size_t rep = 0; rep < per[mode].size(); ++rep)
        if (per[mode][rep] > 0) ratio.push_back(per[2][rep] / per[mode][rep]);
      row.paired[mode] = median(ratio);
    }
    // 4. Host cost of cached calls on small problems.
    if (o_.overhead_calls > 0 && overhead_done < o_.overhead_limit && row.us[0] <= o_.overhead_max_us) {
      ++overhead_done;
      for (int mode : {0, 2}) row.host_us[mode] = host_cost(o_.overhead_calls, [&](int) { call(mode, p, ops, 0); });
      row.raw_launch_us = raw_launch_cost(p, row, ops);
    }
  }

  // The same kernel launched through its library's ABI directly (one op, run() only): what a
  // call costs without the runtime. -1 when select mode did not run a bundled kernel.
  double raw_launch_cost(const Problem& p, const Row& row, const Operands& ops) {
    if (!bundle_ || row.kernel[0].empty()) return -1;
    const auto it = bundle_->kernels.find(row.kernel[0]);
    if (it == bundle_->kernels.end() || !it->second.ok()) return -1;
    // RTLD_NOLOAD|NOW: the runtime has loaded it; the same handle, the same kernel module.
    const std::string path = (fs::path(o_.bundle) / it->second.library).string();
    void* h = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!h) return -1;
    auto get = reinterpret_cast<const cks_kernel_lib* (*)()>(dlsym(h, "cks_kernel_lib_get"));
    const cks_kernel_lib* api = get ? get() : nullptr;
    if (!api) return -1;
    const cks::RuntimeKnobs kn = cks::RuntimeKnobs::from_canonical(row.knobs[0]);
    cks_problem pr{};
    pr.m = static_cast<int>(p.m);
    pr.n = static_cast<int>(p.n);
    pr.k = static_cast<int>(p.k);
    pr.A = ops.a[0];
    pr.B = ops.b[0];
    pr.D = ops.d[0];
    pr.alpha = 1.0f;
    pr.knobs = {static_cast<int>(kn.raster), kn.max_swizzle, static_cast<int>(kn.decomposition), kn.splits,
                static_cast<int>(kn.reduction)};
    pr.device_id = device_;
    pr.sm_count = prop_.multiProcessorCount;
    const size_t ws_bytes = api->workspace_size(it->second.index, &pr);
    void* ws = nullptr;
    if (ws_bytes > 0) check(cudaMalloc(&ws, ws_bytes), "cudaMalloc (raw workspace)");
    cks_op op = nullptr;
    double us = -1;
    if (api->initialize(it->second.index, &pr, ws, stream_, &op) == CKS_OK) {
      us = host_cost(o_.overhead_calls, [&](int) {
        if (ws_bytes > 0) api->reset_workspace(op, stream_);
        api->run(op, stream_);
      });
      api->destroy(op);
    }
    sync();
    if (ws) cudaFree(ws);
    return us;
  }

  Options o_;
  int device_ = 0;
  cudaDeviceProp prop_{};
  cudaStream_t stream_ = nullptr;
  cudaEvent_t ev0_ = nullptr, ev1_ = nullptr;
  volatile int* gate_host_ = nullptr;
  int* gate_dev_ = nullptr;
  cublasHandle_t cublas_ = nullptr;
  std::unique_ptr<cks::Runtime> rt_[kModes];
  double create_ms_[kModes] = {0, 0, 0};
  std::optional<cks::rt::BundleIndex> bundle_;
};

std::string num(double v) { return v < 0 || !std::isfinite(v) ? (std::isinf(v) ? "inf" : "") : cks::format_double(v); }

void write_outputs(const std::string& out, const std::vector<Row>& rows, const nlohmann::json& info, double wall_s,
                   size_t planned) {
  std::ostringstream csv;
  csv << "layout,m,n,k,flops";
  for (const char* m : kModeNames)
    csv << "," << m << "_source," << m << "_kernel," << m << "_knobs," << m << "_max_rel_err," << m << "_us," << m
        << "_tflops," << m << "_first_call_ms," << m << "_host_us_per_call";
  csv << ",select_vs_cublas,autotune_vs_cublas,raw_launch_us,replicas,error,select_reason,autotune_reason\n";
  std::vector<double> ratio_sel, ratio_auto;
  double worst_sel = 1e9, worst_auto = 1e9, max_err[kModes] = {0, 0, 0};
  std::string worst_sel_p, worst_auto_p;
  std::map<std::string, int> sources[kModes];
  std::vector<double> first_bundle_ms, host_sel, host_cublas, raw;
  int errors = 0;
  for (const auto& r : rows) {
    csv << cks::to_string(r.p.layout) << "," << r.p.m << "," << r.p.n << "," << r.p.k << "," << cks::format_double(r.flops);
    for (int m = 0; m < kModes; ++m) {
      const double tf = r.us[m] > 0 ? r.flops / (r.us[m] * 1e6) : -1;
      csv << "," << r.source[m] << "," << r.kernel[m] << "," << cks::csv_escape(r.knobs[m]) << "," << num(r.err[m]) << ","
          << num(r.us[m]) << "," << num(tf) << "," << num(r.first_ms[m]) << "," << num(r.host_us[m]);
    }
    const bool ok = r.error.empty() && r.us[0] > 0 && r.us[1] > 0 && r.us[2] > 0;
    const double rs = ok ? r.paired[0] : -1, ra = ok ? r.paired[1] : -1;
    csv << "," << num(rs) << "," << num(ra) << "," << num(r.raw_launch_us) << "," << r.replicas << ","
        << cks::csv_escape(r.error) << "," << cks::csv_escape(r.reason[0]) << "," << cks::csv_escape(r.reason[1]) << "\n";
    if (!r.error.empty()) {
      ++errors;
      continue;
    }
    for (int m = 0; m < kModes; ++m) {
      sources[m][r.source[m]]++;
      max_err[m] = std::max(max_err[m], r.err[m]);
    }
    if (ok) {
      ratio_sel.push_back(rs);
      ratio_auto.push_back(ra);
      if (rs < worst_sel) worst_sel = rs, worst_sel_p = r.p.name();
      if (ra < worst_auto) worst_auto = ra, worst_auto_p = r.p.name();
    }
    if (r.source[0] == "bundle") first_bundle_ms.push_back(r.first_ms[0]);
    if (r.host_us[0] > 0) host_sel.push_back(r.host_us[0]);
    if (r.host_us[2] > 0) host_cublas.push_back(r.host_us[2]);
    if (r.raw_launch_us > 0) raw.push_back(r.raw_launch_us);
  }
  cks::write_file_atomic(out + "/runtime_bench.csv", csv.str());
  nlohmann::json s = info;
  s["problems_planned"] = planned;
  s["problems_measured"] = rows.size();
  s["problems_failed"] = errors;
  s["wall_seconds"] = wall_s;
  s["select_vs_cublas"] = {{"geomean", geomean(ratio_sel)}, {"min", ratio_sel.empty() ? 0 : worst_sel}, {"min_problem", worst_sel_p},
                           {"n", ratio_sel.size()}};
  s["autotune_vs_cublas"] = {{"geomean", geomean(ratio_auto)}, {"min", ratio_auto.empty() ? 0 : worst_auto},
                             {"min_problem", worst_auto_p}, {"n", ratio_auto.size()},
                             {"below_0.98", std::count_if(ratio_auto.begin(), ratio_auto.end(), [](double x) { return x < 0.98; })}};
  s["max_rel_err"] = {{"select", max_err[0]}, {"autotune", max_err[1]}, {"cublas", max_err[2]}};
  for (int m = 0; m < kModes; ++m) s["sources"][kModeNames[m]] = sources[m];
  s["first_call_ms_bundle_hit"] = {{"median", median(first_bundle_ms)},
                                   {"max", first_bundle_ms.empty() ? 0 : *std::max_element(first_bundle_ms.begin(), first_bundle_ms.end())},
                                   {"n", first_bundle_ms.size()}};
  s["host_us_per_call"] = {{"select_median", median(host_sel)}, {"cublas_median", median(host_cublas)},
                           {"raw_launch_median", median(raw)}, {"select_minus_raw", raw.empty() ? 0 : median(host_sel) - median(raw)},
                           {"n", host_sel.size()}};
  cks::write_file_atomic(out + "/runtime_bench.json", s.dump(1) + "\n");
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"cks_runtime_bench: the GEMM runtime's modes on the GPU (correctness, TFLOP/s, first call, dispatch overhead)"};
  Bench::Options o;
  std::string shapes;
  std::vector<std::string> layouts;
  app.add_option("--shapes", shapes, "problems: a CSV with m, n, k (and layout) columns")->required();
  app.add_option("--layouts", layouts, "only these layouts (for a file without a layout column: these)")->delimiter(',');
  app.add_option("--bundle", o.bundle, "bundle folder (cks bundle --out)");
  app.add_option("--model", o.model, "selector model (default: the runtime's)");
  app.add_option("--tuning-file", o.tuning_file, "autotune results file (default: the runtime's)");
  app.add_option("--out", o.out, "output folder")->required();
  app.add_option("--reps", o.reps, "interleaved timing repetitions")->capture_default_str();
  app.add_option("--target-batch-us", o.target_batch_us, "GPU time of one timed batch")->capture_default_str();
  app.add_option("--overhead-calls", o.overhead_calls, "calls timed for the host cost (0: skip)")->capture_default_str();
  app.add_option("--overhead-limit", o.overhead_limit, "problems whose host cost is measured, at most")->capture_default_str();
  app.add_option("--overhead-max-us", o.overhead_max_us, "only problems whose select-mode call takes at most this")->capture_default_str();
  app.add_option("--max-seconds", o.max_seconds, "stop after this many seconds (0: no limit)")->capture_default_str();
  app.add_option("--mem-gb", o.mem_gb, "operand copies of one problem, at most")->capture_default_str();
  app.add_option("--autotune-lt-algos", o.lt_algos,
                 "cuBLASLt heuristic algorithms autotune times, 1 to 8 (default: the runtime's, 4)");
  app.add_option("--autotune-top", o.autotune_top,
                 "ranked kernels autotune times besides cuBLASLt (default: the runtime's, 4)");
  app.add_option("--autotune-rounds", o.autotune_rounds,
                 "interleaved timing rounds of autotune (default: the runtime's, 5)");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  }
  const auto t0 = Clock::now();
  try {
    std::vector<cks::Layout> ls;
    for (const auto& l : layouts) ls.push_back(cks::parse_layout(l));
    const std::vector<Problem> problems = read_problems(shapes, ls);
    if (problems.empty()) throw cks::Error("no problems in " + shapes);
    fs::create_directories(o.out);
    Bench bench(o);
    std::vector<Row> rows;
    auto last = Clock::now();
    for (size_t i = 0; i < problems.size(); ++i) {
      if (o.max_seconds > 0 && seconds_since(t0) > o.max_seconds) {
        std::fprintf(stderr, "cks_runtime_bench: --max-seconds %.0f reached after %zu of %zu problems\n", o.max_seconds, i,
                     problems.size());
        break;
      }
      rows.push_back(bench.run(problems[i]));
      const Row& r = rows.back();
      if (!r.error.empty())
        std::fprintf(stderr, "cks_runtime_bench: %s: error: %s\n", r.p.name().c_str(), r.error.c_str());
      if (seconds_since(last) > 10 || i + 1 == problems.size()) {
        std::fprintf(stderr, "cks_runtime_bench: %zu/%zu problems (%.0f s); last %s: select %s %.1f us, autotune %s %.1f us, cublas %.1f us\n",
                     i + 1, problems.size(), seconds_since(t0), r.p.name().c_str(), r.source[0].c_str(), r.us[0],
                     r.source[1].c_str(), r.us[1], r.us[2]);
        last = Clock::now();
        write_outputs(o.out, rows, bench.info(), seconds_since(t0), problems.size());
      }
    }
    write_outputs(o.out, rows, bench.info(), seconds_since(t0), problems.size());
    std::fprintf(stderr, "cks_runtime_bench: wrote %s/runtime_bench.csv and runtime_bench.json (%.0f s)\n", o.out.c_str(),
                 seconds_since(t0));
  } catch (const std::exception& e) {
    std::fprintf(stderr, "cks_runtime_bench: error: %s\n", cks::one_line(e.what()).c_str());
    return 1;
  }
  return 0;
}
