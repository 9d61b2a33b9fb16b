// cuBLASLt for the runtime: the reference and fallback GEMM of cks_gemm in the project's layout
// convention (cks/catalogue.hpp; the GPU worker's cuBLAS reference maps them the same way):
// D (M x N, column-major, bf16) = alpha * op(A) * op(B) + beta * D, FP32 compute, where a
// row-major A (M x K) is the column-major K x M matrix transposed (CUBLAS_OP_T, lda = K) and a
// row-major B (K x N) the column-major N x K matrix transposed (CUBLAS_OP_T, ldb = N). So "tn" is
// (T, N), as in CUTLASS's naming.
#pragma once
#include <cublasLt.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "cks/catalogue.hpp"
#include "cks/common.hpp"

namespace cks::rt {

inline constexpr size_t kCublasWorkspace = size_t{32} << 20;  // NVIDIA's recommendation for Hopper

// Throws Error "<what>: <CUDA error name> (<description>)".
void cuda_check(cudaError_t e, const char* what);

// The heuristic found fewer algorithms than the one asked for (LtPlan's `algo`).
class LtAlgoNotFound : public Error {
 public:
  using Error::Error;
};

// One problem's matmul descriptors and heuristic algorithm, for operands aligned to `alignment`
// bytes (16 or more lets cuBLASLt use TMA kernels; 2 is any BF16 pointer). Immutable once built.
// `algo` = i: result i of cublasLtMatmulAlgoGetHeuristic asked for the top i + 1 (0: the top-1, one
// result asked for, as always); throws LtAlgoNotFound when it finds fewer than i + 1.
class LtPlan {
 public:
  LtPlan(cublasLtHandle_t handle, Layout layout, int64_t m, int64_t n, int64_t k, uint32_t alignment, int algo = 0);
  ~LtPlan();
  LtPlan(const LtPlan&) = delete;
  LtPlan& operator=(const LtPlan&) = delete;
  void run(const void* a, const void* b, void* d, float alpha, float beta, void* workspace, cudaStream_t stream) const;
  size_t workspace() const { return workspace_; }
  int algo() const { return algo_index_; }

 private:
  void release();
  cublasLtHandle_t handle_;
  cublasLtMatmulDesc_t op_ = nullptr;
  cublasLtMatrixLayout_t a_ = nullptr, b_ = nullptr, d_ = nullptr;
  cublasLtMatmulAlgo_t algo_{};
  size_t workspace_ = 0;
  int algo_index_ = 0;
  std::string what_;
};

// The largest of 256, 16, 2 that divides every pointer.
uint32_t alignment_of(const void* a, const void* b, const void* d);

// One cuBLASLt handle per device (created on first use on that device).
class CublasLt {
 public:
  CublasLt() = default;
  ~CublasLt();
  cublasLtHandle_t handle(int device);

 private:
  std::mutex mu_;
  std::map<int, cublasLtHandle_t> handles_;
};

}  // namespace cks::rt
