// The stream-K reduction probe's driver (scripts/device/reduction_probe/run_probe.sh builds it):
// for each case of cases.csv (make_probe.py), the case's kernel built twice (<id>_d.so: the
// generated ReductionMode::Deterministic; <id>_nd.so: Nondeterministic), each over the
// decomposition settings the stream-K scheduler takes, and cuBLAS (cublasGemmEx, BF16 in, FP32
// compute), interleaved over ROUNDS rounds; every result is checked against cuBLAS's D.
//   probe_main CASES.csv LIBDIR ROUNDS REPS > probe.csv
#include <cublas_v2.h>
#include <cuda_bf16.h>
#include <cuda_runtime.h>
#include <dlfcn.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

using ProbeFn = int (*)(int, int, int, const void*, const void*, void*, int, int, int, int, float*);

struct Case {
  std::string group, layout, kernel;
  int m, n, k, raster;
};

static void check(cudaError_t e, const char* what) {
  if (e != cudaSuccess) {
    std::fprintf(stderr, "probe_main: %s: %s\n", what, cudaGetErrorString(e));
    std::exit(1);
  }
}

__global__ void fill(__nv_bfloat16* p, size_t n, unsigned seed) {
  for (size_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
    unsigned h = (unsigned)i * 2654435761u ^ seed;
    h ^= h >> 13;
    h *= 0x5bd1e995u;
    h ^= h >> 15;
    p[i] = __float2bfloat16(((h & 0xffff) / 65535.0f) - 0.5f);
  }
}

static std::vector<float> to_host(const void* d, size_t n) {
  std::vector<__nv_bfloat16> h(n);
  check(cudaMemcpy(h.data(), d, n * 2, cudaMemcpyDeviceToHost), "copy D");
  std::vector<float> f(n);
  for (size_t i = 0; i < n; ++i) f[i] = __bfloat162float(h[i]);
  return f;
}

int main(int argc, char** argv) {
  if (argc < 5) {
    std::fprintf(stderr, "usage: probe_main CASES.csv LIBDIR ROUNDS REPS\n");
    return 2;
  }
  const std::string libdir = argv[2];
  const int rounds = std::atoi(argv[3]), reps = std::atoi(argv[4]);
  std::vector<Case> cases;
  {
    std::ifstream in(argv[1]);
    std::string line;
    std::getline(in, line);
    while (std::getline(in, line)) {
      std::stringstream ss(line);
      Case c;
      std::string f[9];
      for (auto& x : f) std::getline(ss, x, ',');
      c.group = f[0], c.layout = f[1], c.m = std::stoi(f[2]), c.n = std::stoi(f[3]), c.k = std::stoi(f[4]);
      c.kernel = f[5], c.raster = std::stoi(f[6]);
      cases.push_back(c);
    }
  }
  std::map<std::string, ProbeFn> fns;
  for (const auto& c : cases)
    for (const char* mode : {"d", "nd"}) {
      const std::string key = c.kernel + "_" + mode;
      if (fns.count(key)) continue;
      void* h = dlopen((libdir + "/" + key + ".so").c_str(), RTLD_NOW | RTLD_LOCAL);
      if (!h) {
        std::fprintf(stderr, "probe_main: %s\n", dlerror());
        return 1;
      }
      fns[key] = reinterpret_cast<ProbeFn>(dlsym(h, "probe"));
    }
  size_t maxa = 0, maxb = 0, maxd = 0;
  for (const auto& c : cases) {
    maxa = std::max(maxa, (size_t)c.m * c.k);
    maxb = std::max(maxb, (size_t)c.k * c.n);
    maxd = std::max(maxd, (size_t)c.m * c.n);
  }
  void *A, *B, *D, *R;
  check(cudaMalloc(&A, maxa * 2), "A");
  check(cudaMalloc(&B, maxb * 2), "B");
  check(cudaMalloc(&D, maxd * 2), "D");
  check(cudaMalloc(&R, maxd * 2), "R");
  fill<<<1024, 256>>>((__nv_bfloat16*)A, maxa, 1);
  fill<<<1024, 256>>>((__nv_bfloat16*)B, maxb, 2);
  check(cudaDeviceSynchronize(), "fill");
  cublasHandle_t blas;
  cublasCreate(&blas);
  cudaEvent_t e0, e1;
  cudaEventCreate(&e0);
  cudaEventCreate(&e1);
  // decomposition (0 heuristic, 3 stream-K, 2 split-K) x splits
  const std::vector<std::pair<int, int>> settings = {{0, 1}, {3, 1}, {2, 2}, {2, 4}, {2, 8}, {2, 16}, {2, 32}};
  std::printf("group,layout,m,n,k,kernel,mode,decomposition,splits,round,us,tflops,rc,max_rel_err\n");
  for (int round = 0; round < rounds; ++round)
    for (const auto& c : cases) {
      // cuBLAS: D (M x N, column-major) = op(A) op(B); layout[0] is A's (t: row-major M x K),
      // layout[1] B's (t: row-major K x N).
      const bool at = c.layout[0] == 't', bt = c.layout[1] == 't';
      const float one = 1.0f, zero = 0.0f;
      auto blas_run = [&] {
        return cublasGemmEx(blas, at ? CUBLAS_OP_T : CUBLAS_OP_N, bt ? CUBLAS_OP_T : CUBLAS_OP_N, c.m, c.n, c.k, &one, A,
                            CUDA_R_16BF, at ? c.k : c.m, B, CUDA_R_16BF, bt ? c.n : c.k, &zero, R, CUDA_R_16BF, c.m,
                            CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT);
      };
      std::vector<float> t;
      for (int i = 0; i < reps + 5; ++i) {
        cudaEventRecord(e0);
        blas_run();
        cudaEventRecord(e1);
        cudaEventSynchronize(e1);
        float ms;
        cudaEventElapsedTime(&ms, e0, e1);
        if (i >= 5) t.push_back(ms * 1000);
      }
      std::sort(t.begin(), t.end());
      const double flop = 2.0 * c.m * c.n * c.k;
      const float cub = t[t.size() / 2];
      std::printf("%s,%s,%d,%d,%d,cublas,cublas,0,0,%d,%.3f,%.2f,0,0\n", c.group.c_str(), c.layout.c_str(), c.m, c.n, c.k,
                  round, cub, flop / cub * 1e-6);
      const std::vector<float> ref = round == 0 ? to_host(R, (size_t)c.m * c.n) : std::vector<float>();
      float refmax = 0;
      for (float v : ref) refmax = std::max(refmax, std::fabs(v));
      for (const auto& [dec, splits] : settings)
        for (const char* mode : {"d", "nd"}) {
          float us = 0;
          check(cudaMemset(D, 0, (size_t)c.m * c.n * 2), "clear D");
          const int rc = fns[c.kernel + "_" + mode](c.m, c.n, c.k, A, B, D, c.raster, dec, splits, reps, &us);
          check(cudaDeviceSynchronize(), "probe");
          double err = 0;
          if (rc == 0 && round == 0) {
            const auto got = to_host(D, (size_t)c.m * c.n);
            for (size_t i = 0; i < got.size(); ++i) err = std::max(err, (double)std::fabs(got[i] - ref[i]));
            err /= std::max(refmax, 1e-6f);
          }
          std::printf("%s,%s,%d,%d,%d,%s,%s,%d,%d,%d,%.3f,%.2f,%d,%.5f\n", c.group.c_str(), c.layout.c_str(), c.m, c.n,
                      c.k, c.kernel.c_str(), mode, dec, splits, round, rc == 0 ? us : 0.0f,
                      rc == 0 ? flop / us * 1e-6 : 0.0, rc, err);
        }
      std::fflush(stdout);
    }
  return 0;
}
