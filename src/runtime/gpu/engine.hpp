// The GEMM runtime's engine (libcks_runtime.so; include/cks/runtime.h is its C API): dispatch of
// one cks_gemm call to a bundled, tuned or compiled CUTLASS kernel or to cuBLASLt.
//
// Dispatch cache. One Entry per (mode, device, layout, M, N, K), found under a shared lock and
// resolved once under the entry's mutex (concurrent first calls of a problem wait for one
// resolution; one that throws leaves the entry for the next call to resolve).
// An entry's Choice is immutable; a compile that finishes later installs a new one (atomic
// pointer; old choices live as long as the engine, so a thread still using one is safe).
//
// Kernel ops. The ABI's initialize() binds A, B, D, alpha, the workspace and builds the TMA
// descriptors; a Choice keeps the last kOpSlots initialized ops by (A, B, D, alpha, stream,
// workspace), so a repeated call costs a lookup, the ABI's reset_workspace (a no-op but for
// stream-K) and run(); a call with new pointers re-initializes (microseconds) and evicts the
// least recently used op.
//
// Workspaces. Stream-K / split-K kernels need a workspace: one per (device, stream), grown with
// cudaMallocAsync / cudaFreeAsync on that stream (stream-ordered), its calls serialized by a mutex
// (a grown workspace invalidates the ops bound to the old one: their key holds the pointer).
// cuBLASLt gets 32 MiB per (device, stream).
#pragma once
#include <cuda_runtime.h>

#include <atomic>
#include <map>
#include <memory>
#include <mutex>
#include <shared_mutex>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "cks/kernel_lib_abi.h"
#include "cks/runtime.h"
#include "runtime/bundle.hpp"
#include "runtime/compile_service.hpp"
#include "runtime/gpu/cublaslt.hpp"
#include "runtime/options.hpp"
#include "runtime/tuning.hpp"

typedef struct cks_selector* cks_selector_handle;

namespace cks::rt {

// A loaded kernel library: dlopen()ed once per process and never closed (each carries its own
// static CUDA runtime; its kernels' modules load lazily).
struct KernelLib {
  std::string path;
  const cks_kernel_lib* api = nullptr;
};
const KernelLib& load_kernel_library(const std::string& path);  // throws Error

enum class Source { bundle, tuned, compiled, cublas };
std::string_view to_string(Source s);

// One candidate of a problem, as ranked: the model's or the bundle index's.
struct Candidate {
  std::string kernel_id, canonical, knobs;
  int rank = 0;
  bool variant = false;
};

class Engine {
 public:
  explicit Engine(RuntimeConfig config);
  ~Engine();
  Engine(const Engine&) = delete;
  Engine& operator=(const Engine&) = delete;

  void gemm(int64_t m, int64_t n, int64_t k, Layout layout, const void* a, const void* b, void* d, float alpha,
            float beta, cudaStream_t stream);
  void set_mode(Mode m);
  Mode mode() const { return mode_.load(std::memory_order_relaxed); }
  cks_dispatch_info query(int64_t m, int64_t n, int64_t k, Layout layout) const;
  int wait_compiles(double timeout_s);
  std::string describe() const;

 private:
  struct Op;
  struct OpSlot;
  struct Choice;
  struct Entry;
  struct StreamWorkspace;
  struct Key {
    int mode, device, layout;
    int64_t m, n, k;
    bool operator<(const Key& o) const {
      return std::tie(mode, device, layout, m, n, k) < std::tie(o.mode, o.device, o.layout, o.m, o.n, o.k);
    }
  };
  struct Call {
    int64_t m, n, k;
    Layout layout;
    const void* a;
    const void* b;
    void* d;
    float alpha, beta;
    cudaStream_t stream;
    int device;
  };

  Entry& entry(const Key& key);
  void resolve(Entry& e, const Call& c);
  std::vector<Candidate> ranking(const Call& c, size_t depth, std::string& note);
  // The ranking with the opt-in nondeterministic reduction applied (config_.nondeterministic).
  std::vector<Candidate> with_reduction(std::vector<Candidate> ranked) const;
  // The candidate as a runnable kernel choice, or nullptr with `why` (not bundled, compiling, ...).
  // `compile`: start compiling a pick no bundle holds (select and autotune); *compiling says it did.
  std::unique_ptr<Choice> kernel_choice(const Candidate& cand, const Call& c, Source source, std::string& why,
                                        bool compile, bool* compiling = nullptr);
  std::unique_ptr<Choice> cublas_choice(std::string reason) const;
  std::unique_ptr<Choice> autotune(Entry& e, const Call& c, const std::vector<Candidate>& ranked, std::string& note);
  void maybe_upgrade(Entry& e, const Call& c);
  // Autotune's deferred tuning (Entry::retune): true when the entry waits for or ran it.
  bool maybe_retune(Entry& e, const Call& c, CompileService& cs, uint64_t generation);
  void run_choice(const Choice& ch, Entry& e, const Call& c);
  void run_kernel(const Choice& ch, const Call& c);
  // The kernel library's problem for a call on operands (a, b, d): the call's own or a replica's.
  static cks_problem kernel_problem(const Choice& ch, const Call& c, const void* a, const void* b, void* d);
  void run_cublas(Entry& e, const Call& c, int algo = 0);  // algo: the heuristic's index (256-byte-aligned calls)
  StreamWorkspace& stream_workspace(int device, cudaStream_t stream);
  int sm_count(int device);
  const std::string& model_hash();
  CompileService* compiler(std::string& why);
  TuningTable& tuning();
  cudaStream_t tuning_stream(int device);

  RuntimeConfig config_;
  std::atomic<Mode> mode_;
  std::optional<BundleIndex> bundle_;
  std::string bundle_note_;          // why the bundle's rankings are not used ("" when they are)

  mutable std::shared_mutex entries_mu_;
  std::map<Key, std::unique_ptr<Entry>> entries_;

  mutable std::mutex model_mu_;
  bool model_hashed_ = false;
  std::string model_file_, model_hash_;
  std::mutex selector_mu_;
  bool selector_tried_ = false;
  cks_selector_handle selector_ = nullptr;
  std::string selector_error_;

  std::mutex compile_mu_;
  bool compile_checked_ = false;
  std::string compile_unavailable_;
  std::unique_ptr<CompileService> compiler_;

  std::mutex tuning_mu_;
  std::unique_ptr<TuningTable> tuning_;
  std::string gpu_name_;

  std::mutex device_mu_;
  std::map<int, int> sm_counts_;
  std::map<int, cudaStream_t> tuning_streams_;
  std::map<std::pair<int, cudaStream_t>, std::unique_ptr<StreamWorkspace>> workspaces_;
  std::unique_ptr<CublasLt> cublas_;
};

}  // namespace cks::rt
