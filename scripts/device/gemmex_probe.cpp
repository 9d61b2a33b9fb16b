// cuBLASLt's heuristic algorithms against cublasGemmEx on given problems (issue 17): the runtime's
// own cuBLASLt plans (runtime/gpu/cublaslt.hpp: LtPlan, algorithms 0-7) and cublasGemmEx
// (CUBLAS_GEMM_DEFAULT, the call torch.matmul makes), timed interleaved with CUDA events on rotating
// operand copies (a working set of at least twice the L2). Built here, run on the H200:
//   g++ -std=c++20 -O2 -Iinclude -Isrc -I$CUDA/include scripts/device/gemmex_probe.cpp
//       src/runtime/gpu/cublaslt.cpp build/libcks_core.a -L$CUDA/lib64 -lcublasLt -lcublas -lcudart
//       -static-libstdc++ -static-libgcc -o .carry/bin/gemmex_probe
// Session 28 ran it (an earlier form that called cublasGemmEx through a runtime plan, the same call
// with the workspace set per call; data/device_checks/20261204_session28_gemmex_probe/).
//   ./gemmex_probe ROUNDS LAYOUT:MxNxK ...        (prints CSV: problem, candidate, median us, min us)
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include <cublas_v2.h>

#include "runtime/gpu/cublaslt.hpp"

using namespace cks;
using namespace cks::rt;

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: gemmex_probe ROUNDS LAYOUT:MxNxK ...\n");
    return 2;
  }
  const int rounds = std::atoi(argv[1]);
  CublasLt lt;
  cudaStream_t s;
  cuda_check(cudaStreamCreate(&s), "stream");
  void* ws = nullptr;
  cuda_check(cudaMalloc(&ws, kCublasWorkspace), "workspace");
  cublasHandle_t gemm = nullptr;  // as torch's: its stream and a 32 MiB workspace of its own
  void* gemm_ws = nullptr;
  cuda_check(cudaMalloc(&gemm_ws, kCublasWorkspace), "workspace");
  if (cublasCreate(&gemm) != CUBLAS_STATUS_SUCCESS || cublasSetStream(gemm, s) != CUBLAS_STATUS_SUCCESS ||
      cublasSetWorkspace(gemm, gemm_ws, kCublasWorkspace) != CUBLAS_STATUS_SUCCESS) {
    std::fprintf(stderr, "cuBLAS handle set-up failed\n");
    return 1;
  }
  int l2 = 0;
  cuda_check(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, 0), "l2");
  std::printf("problem,candidate,median_us,min_us,inner\n");
  for (int a = 2; a < argc; ++a) {
    const std::string spec = argv[a];
    const Layout layout = parse_layout(spec.substr(0, 2));
    long m = 0, n = 0, k = 0;
    if (std::sscanf(spec.c_str() + 3, "%ldx%ldx%ld", &m, &n, &k) != 3) {
      std::fprintf(stderr, "bad problem %s\n", spec.c_str());
      return 2;
    }
    const size_t per = 2 * size_t(m) * k + 2 * size_t(k) * n + 2 * size_t(m) * n;
    const int reps = std::clamp(int(2.0 * l2 / per) + 1, 1, 8);
    std::vector<char*> bufs;
    for (int r = 0; r < reps; ++r) {
      char* p = nullptr;
      cuda_check(cudaMalloc(&p, per + 1024), "operands");
      cuda_check(cudaMemset(p, 0, per + 1024), "memset");
      bufs.push_back(p);
    }
    auto al = [](size_t x) { return (x + 255) / 256 * 256; };
    std::vector<std::unique_ptr<LtPlan>> plans;  // then cublasGemmEx, index plans.size()
    std::vector<std::string> names;
    for (int j = 0; j < 8; ++j) {
      try {
        plans.push_back(std::make_unique<LtPlan>(lt.handle(0), layout, m, n, k, 256, j));
        names.push_back("lt" + std::to_string(j));
      } catch (const LtAlgoNotFound&) {
        break;
      }
    }
    names.push_back("gemmex");
    const bool at = a_row_major(layout), bt = b_row_major(layout);
    size_t cursor = 0;
    auto launch = [&](size_t i) {
      char* p = bufs[cursor++ % bufs.size()];
      char* b = p + al(2 * size_t(m) * k);
      char* d = b + al(2 * size_t(k) * n);
      if (i < plans.size()) return plans[i]->run(p, b, d, 1.0f, 0.0f, ws, s);
      const float one = 1.0f, zero = 0.0f;
      if (cublasGemmEx(gemm, at ? CUBLAS_OP_T : CUBLAS_OP_N, bt ? CUBLAS_OP_T : CUBLAS_OP_N, int(m), int(n), int(k), &one, p,
                       CUDA_R_16BF, int(at ? k : m), b, CUDA_R_16BF, int(bt ? n : k), &zero, d, CUDA_R_16BF, int(m),
                       CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT) != CUBLAS_STATUS_SUCCESS)
        throw Error("cublasGemmEx failed on " + spec);
    };
    const size_t cands = names.size();
    std::vector<int> inner(cands, 1);
    cudaEvent_t e0, e1;
    cudaEventCreate(&e0);
    cudaEventCreate(&e1);
    for (size_t i = 0; i < cands; ++i) {
      launch(i);
      launch(i);
      cudaEventRecord(e0, s);
      launch(i);
      cudaEventRecord(e1, s);
      cudaEventSynchronize(e1);
      float ms = 0;
      cudaEventElapsedTime(&ms, e0, e1);
      inner[i] = std::clamp(int(200.0 / std::max(1.0, 1000.0 * ms)), 1, 64);
    }
    std::vector<std::vector<double>> us(cands);
    for (int r = 0; r < rounds; ++r)
      for (size_t j = 0; j < cands; ++j) {
        const size_t i = (j + r) % cands;
        cudaEventRecord(e0, s);
        for (int x = 0; x < inner[i]; ++x) launch(i);
        cudaEventRecord(e1, s);
        cudaEventSynchronize(e1);
        float ms = 0;
        cudaEventElapsedTime(&ms, e0, e1);
        us[i].push_back(1000.0 * ms / inner[i]);
      }
    for (size_t i = 0; i < cands; ++i) {
      auto v = us[i];
      std::sort(v.begin(), v.end());
      std::printf("%s,%s,%.2f,%.2f,%d\n", spec.c_str(), names[i].c_str(), v[v.size() / 2], v[0], inner[i]);
    }
    std::fflush(stdout);
    for (char* p : bufs) cudaFree(p);
  }
  return 0;
}
