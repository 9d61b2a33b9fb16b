// cuBLASLt for the runtime (runtime/gpu/cublaslt.hpp).
#include "runtime/gpu/cublaslt.hpp"

#include <vector>

#include "cks/common.hpp"

namespace cks::rt {

namespace {

void lt_check(cublasStatus_t s, const std::string& what) {
  if (s != CUBLAS_STATUS_SUCCESS)
    throw Error(what + ": " + cublasLtGetStatusName(s) + " (" + cublasLtGetStatusString(s) + ")");
}

}  // namespace

void cuda_check(cudaError_t e, const char* what) {
  if (e != cudaSuccess)
    throw Error(std::string(what) + ": " + cudaGetErrorName(e) + " (" + cudaGetErrorString(e) + ")");
}

uint32_t alignment_of(const void* a, const void* b, const void* d) {
  const uintptr_t bits = reinterpret_cast<uintptr_t>(a) | reinterpret_cast<uintptr_t>(b) | reinterpret_cast<uintptr_t>(d);
  if (bits % 256 == 0) return 256;
  if (bits % 16 == 0) return 16;
  return 2;
}

LtPlan::LtPlan(cublasLtHandle_t handle, Layout layout, int64_t m, int64_t n, int64_t k, uint32_t alignment, int algo)
    : handle_(handle), algo_index_(algo) {
  what_ = "cuBLASLt " + std::string(to_string(layout)) + " " + std::to_string(m) + "x" + std::to_string(n) + "x" +
          std::to_string(k);
  try {
    const bool at = a_row_major(layout), bt = b_row_major(layout);
    const cublasOperation_t ta = at ? CUBLAS_OP_T : CUBLAS_OP_N, tb = bt ? CUBLAS_OP_T : CUBLAS_OP_N;
    lt_check(cublasLtMatmulDescCreate(&op_, CUBLAS_COMPUTE_32F, CUDA_R_32F), what_ + ": matmul descriptor");
    lt_check(cublasLtMatmulDescSetAttribute(op_, CUBLASLT_MATMUL_DESC_TRANSA, &ta, sizeof ta), what_ + ": transa");
    lt_check(cublasLtMatmulDescSetAttribute(op_, CUBLASLT_MATMUL_DESC_TRANSB, &tb, sizeof tb), what_ + ": transb");
    // Stored matrices (column-major): A is M x K (lda M) or, row-major, K x M (lda K); B is K x N
    // (ldb K) or, row-major, N x K (ldb N); D is M x N (ldd M).
    lt_check(cublasLtMatrixLayoutCreate(&a_, CUDA_R_16BF, at ? k : m, at ? m : k, at ? k : m), what_ + ": layout A");
    lt_check(cublasLtMatrixLayoutCreate(&b_, CUDA_R_16BF, bt ? n : k, bt ? k : n, bt ? n : k), what_ + ": layout B");
    lt_check(cublasLtMatrixLayoutCreate(&d_, CUDA_R_16BF, m, n, m), what_ + ": layout D");
    cublasLtMatmulPreference_t pref = nullptr;
    lt_check(cublasLtMatmulPreferenceCreate(&pref), what_ + ": preference");
    struct PrefGuard {
      cublasLtMatmulPreference_t p;
      ~PrefGuard() { cublasLtMatmulPreferenceDestroy(p); }
    } guard{pref};
    const uint64_t ws = kCublasWorkspace;
    lt_check(cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws, sizeof ws),
             what_ + ": workspace preference");
    for (auto attr : {CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES,
                      CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES})
      lt_check(cublasLtMatmulPreferenceSetAttribute(pref, attr, &alignment, sizeof alignment), what_ + ": alignment");
    if (algo < 0) throw Error(what_ + ": algorithm index " + std::to_string(algo) + " is negative");
    std::vector<cublasLtMatmulHeuristicResult_t> results(static_cast<size_t>(algo) + 1);
    int found = 0;
    lt_check(cublasLtMatmulAlgoGetHeuristic(handle_, op_, a_, b_, d_, d_, pref, algo + 1, results.data(), &found),
             what_ + ": heuristic");
    if (found == 0) throw Error(what_ + ": the heuristic found no algorithm");
    if (found <= algo || (algo > 0 && results[static_cast<size_t>(algo)].state != CUBLAS_STATUS_SUCCESS))
      throw LtAlgoNotFound(what_ + ": the heuristic found " + std::to_string(found) + " algorithm(s), not the " +
                           std::to_string(algo + 1) + " needed for algorithm " + std::to_string(algo) +
                           " (alignment " + std::to_string(alignment) + ")");
    algo_ = results[static_cast<size_t>(algo)].algo;
    workspace_ = results[static_cast<size_t>(algo)].workspaceSize;
    if (algo > 0) what_ += " (algorithm " + std::to_string(algo) + ")";
  } catch (...) {
    release();
    throw;
  }
}

LtPlan::~LtPlan() { release(); }

void LtPlan::release() {
  if (d_) cublasLtMatrixLayoutDestroy(d_);
  if (b_) cublasLtMatrixLayoutDestroy(b_);
  if (a_) cublasLtMatrixLayoutDestroy(a_);
  if (op_) cublasLtMatmulDescDestroy(op_);
  d_ = b_ = a_ = nullptr;
  op_ = nullptr;
}

void LtPlan::run(const void* a, const void* b, void* d, float alpha, float beta, void* workspace,
                 cudaStream_t stream) const {
  lt_check(cublasLtMatmul(handle_, op_, &alpha, a, a_, b, b_, &beta, d, d_, d, d_, &algo_, workspace, workspace_, stream),
           what_);
}

CublasLt::~CublasLt() {
  for (auto& [device, h] : handles_) cublasLtDestroy(h);
}

cublasLtHandle_t CublasLt::handle(int device) {
  std::lock_guard lk(mu_);
  if (auto it = handles_.find(device); it != handles_.end()) return it->second;
  cublasLtHandle_t h = nullptr;
  lt_check(cublasLtCreate(&h), "cublasLtCreate");
  handles_[device] = h;
  return h;
}

}  // namespace cks::rt
