// cks/compile.hpp — code generation for kernel batches and the parallel nvcc compile pool
// with its executable cache (the paper's optimizations 1, 2 and 5).
#pragma once
#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "cks/catalogue.hpp"

namespace cks {

// Source of one translation unit holding `kernels` behind the cks_kernel_lib ABI
// (include/cks/kernel_lib_abi.h).
std::string generate_tu(const std::vector<KernelDesc>& kernels);

// A complete, self-contained CUDA file for one kernel (`cks emit`, docs/library.md): the defines
// that must precede the CUTLASS headers (NDEBUG, CUTE_SM90_EXTENDED_MMA_SHAPES_ENABLED) and a guard
// for -arch=sm_90a, the nvcc command line as a comment, the includes, the kernel-library ABI types
// and the runtime part that generate_tu() emits, the kernel's type (cutlass_type) and an
// `extern "C"` host function `function` that builds the CUTLASS arguments with `knobs` applied
// and runs the kernel. Needs only the CUTLASS 4.2 headers and the CUDA toolkit. A sliced-K kernel
// (KernelDesc::sliced) gets the sliced-K runtime part too, and its host function sizes and takes the
// workspace (the FP32 partials, then CUTLASS's own), runs the batched GEMM over the K slices and
// launches slice_reduce into D.
// Throws Error when the knobs are neither a setting of the kernel (knob_settings, KnobScope::measurable)
// nor CUTLASS's defaults (RuntimeKnobs{}; a sliced-K kernel has none: its slice count is a knob), or
// `function` is not a C identifier.
std::string generate_standalone(const KernelDesc& k, const RuntimeKnobs& knobs, const std::string& function = "run_gemm");
// The knobs `cks emit` bakes in without --knobs: CUTLASS's defaults (RuntimeKnobs{}), or for a
// sliced-K kernel its first setting (knob_settings: the fewest slices, r=m,s=1,d=sk,k=2 for a
// persistent kernel, r=h,... for the basic one).
RuntimeKnobs standalone_default_knobs(const KernelDesc& k);
// The nvcc flags of a standalone file compiled to an object: nvcc_flags() without the ones that
// make the cache's shared libraries (-shared, -Xcompiler=-fPIC, hidden visibility, -Xptxas=-v).
std::vector<std::string> standalone_nvcc_flags();

struct CompileOptions {
  std::string cutlass_dir;            // contains include/ and tools/util/include/
  std::string cache_dir = "build/kernel-cache";
  std::string nvcc = "nvcc";
  int jobs = 0;                       // parallel nvcc processes; 0 => from cores and memory
  double mem_per_job_gb = 0.75;       // per kernel in a TU (8 kernels ~ 6 GB)
  double mem_limit_gb = 0;            // 0 => MemAvailable
  int kernels_per_tu = 8;
  std::vector<std::string> extra_flags;  // appended to nvcc
  std::string cuda_version;           // recorded in the library hash (e.g. "13.0")
  std::string cutlass_version = "4.2.0";
};

// nvcc flags used for every TU (hashed into the library name):
// -O3 -DNDEBUG -std=c++17 -gencode=arch=compute_90a,code=sm_90a --expt-relaxed-constexpr
// -Xcompiler=-fPIC -shared -Xptxas=-v
std::vector<std::string> nvcc_flags(const CompileOptions& o);

struct KernelCompileInfo {
  std::string kernel_id;
  std::string canonical;
  std::string status;           // "ok" or "compile_error"
  std::string error;            // first error lines (compile_error)
  std::string lib_path;         // the .so holding it (ok)
  int index = -1;               // index inside the library (ok)
  int registers = -1;           // from ptxas -v
  int spill_store_bytes = -1, spill_load_bytes = -1;
  int smem_bytes = -1;          // static smem from ptxas -v
  double compile_seconds = 0;   // the TU's wall time divided by its kernels
  std::string kernel_key;       // library hash of this kernel alone (same flags and versions):
                                // finds it in any cached library, whatever TU it was built in
};

struct LibraryResult {
  std::string lib_path;
  std::string lib_hash;         // hash of member canonicals + flags + versions
  bool cached = false;          // reused from the cache, no compile
  double seconds = 0;
  std::vector<KernelCompileInfo> kernels;
};

// Parallel compile pool. submit() returns at once; finished libraries (or per-kernel
// compile errors, attributed by bisection of a failing TU) come out of next().
class CompilePool {
 public:
  explicit CompilePool(CompileOptions o);
  ~CompilePool();  // waits for / kills running nvcc
  CompilePool(const CompilePool&) = delete;
  CompilePool& operator=(const CompilePool&) = delete;

  void submit(std::vector<KernelDesc> batch);
  // Serves each kernel of `kernels` that a cached library holds (found by its own key, whatever
  // translation unit built it) as a finished, cached result, so a caller can cut only the rest
  // into translation units: cut first, a plan half served by a carried cache left TUs of one or
  // two kernels, each paying nvcc's fixed front-end cost (lease 13). Which kernels were served.
  std::vector<bool> take_cached(const std::vector<KernelDesc>& kernels);
  // Next finished library; waits up to `timeout`. nullopt on timeout or when nothing pending.
  std::optional<LibraryResult> next(std::chrono::milliseconds timeout);
  size_t pending() const;  // batches submitted and not yet returned by next()
  int jobs() const;

 private:
  struct Impl;
  Impl* impl_;
};

// Library file name for a batch: "<cache_dir>/cks_<hash>.so".
std::string library_hash(const std::vector<KernelDesc>& kernels, const CompileOptions& o);

// Locating the toolchain and headers (the binaries are built on one machine and run on another).
// The nvcc executable: `nvcc` if it names a file or is in PATH, else $CUDA_HOME/bin/nvcc or
// /usr/local/cuda/bin/nvcc for the default name; "" when not found.
std::string find_nvcc(const std::string& nvcc = "nvcc");
// nvcc's version, e.g. "13.0.88" ("" when nvcc is not found).
std::string nvcc_version(const std::string& nvcc = "nvcc");
// CUTLASS root (holding include/cutlass): $CKS_CUTLASS_DIR, the configured third_party/cutlass,
// or ../../third_party/cutlass next to the executable; "" when none exists.
std::string default_cutlass_dir();
// Directory holding cks/kernel_lib_abi.h for generated TUs: $CKS_INCLUDE_DIR, the source tree's
// include/, an installed prefix's include/ (beside its share/cks), or ../../include next to the
// executable; "" when none exists.
std::string kernel_abi_include_dir();

}  // namespace cks
