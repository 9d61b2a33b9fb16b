#include <cuda_bf16.h>

#include "worker/device_kernels.hpp"

namespace cks::worker::dev {

namespace {

constexpr int kThreads = 256;

// splitmix64: a counter-based generator, so element i needs no state from element i-1.
__device__ uint64_t splitmix64(uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

__global__ void fill_random_bf16_kernel(__nv_bfloat16* dst, size_t count, uint64_t seed) {
  const uint64_t key = splitmix64(seed);
  for (size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x; i < count;
       i += static_cast<size_t>(gridDim.x) * blockDim.x) {
    // u = (r + 0.5) / 2^24 in (0, 1), so 2u - 1 is in (-1, 1) and never 0; its smallest magnitude,
    // 2^-24, is still a normal BF16 number.
    const uint32_t r = static_cast<uint32_t>(splitmix64(key ^ i) >> 40);
    const float u = (static_cast<float>(r) + 0.5f) * (1.0f / 16777216.0f);
    dst[i] = __float2bfloat16_rn(2.0f * u - 1.0f);
  }
}

__global__ void compare_kernel(const __nv_bfloat16* d, const float* ref, size_t count, CompareStats* stats) {
  float max_err = 0.0f, max_ref = 0.0f;
  unsigned long long nonfinite = 0;
  for (size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x; i < count;
       i += static_cast<size_t>(gridDim.x) * blockDim.x) {
    const float v = __bfloat162float(d[i]);
    const float r = ref[i];
    max_ref = fmaxf(max_ref, fabsf(r));
    if (isfinite(v)) max_err = fmaxf(max_err, fabsf(v - r));
    else ++nonfinite;
  }
  // Warp reduction first, then one atomic per warp.
  for (int off = 16; off > 0; off >>= 1) {
    max_err = fmaxf(max_err, __shfl_down_sync(0xffffffffu, max_err, off));
    max_ref = fmaxf(max_ref, __shfl_down_sync(0xffffffffu, max_ref, off));
    nonfinite += __shfl_down_sync(0xffffffffu, nonfinite, off);
  }
  if ((threadIdx.x & 31) == 0) {
    atomicMax(&stats->max_abs_err_bits, __float_as_uint(max_err));
    atomicMax(&stats->max_abs_ref_bits, __float_as_uint(max_ref));
    if (nonfinite) atomicAdd(&stats->nonfinite, nonfinite);
  }
}

__global__ void gate_kernel(const volatile int* flag, uint64_t timeout_ns) {
  uint64_t start;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(start));
  while (*flag == 0) {
    uint64_t now;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
    if (now - start > timeout_ns) break;
    __nanosleep(1000);
  }
}

__global__ void fault_kernel(int fault, const char* valid) {
  if (fault == 0) {
    volatile int spin = 1;  // never cleared: the monitor's deadline ends the worker
    while (spin) __nanosleep(1000);
  } else if (fault == 1) {
    __trap();
  } else {
    unsigned int v;
    asm volatile("ld.global.u32 %0, [%1];" : "=r"(v) : "l"(valid + 1));
    if (v == 0x12345678u) asm volatile("trap;");  // keeps the load
  }
}

unsigned int grid_for(size_t count) {
  const size_t blocks = (count + kThreads - 1) / kThreads;
  return static_cast<unsigned int>(blocks < 4096 ? (blocks > 0 ? blocks : 1) : 4096);
}

}  // namespace

cudaError_t fill_random_bf16(void* dst, size_t count, uint64_t seed, cudaStream_t stream) {
  fill_random_bf16_kernel<<<grid_for(count), kThreads, 0, stream>>>(static_cast<__nv_bfloat16*>(dst), count, seed);
  return cudaGetLastError();
}

cudaError_t compare_bf16_f32(const void* d, const float* ref, size_t count, CompareStats* stats, cudaStream_t stream) {
  compare_kernel<<<grid_for(count), kThreads, 0, stream>>>(static_cast<const __nv_bfloat16*>(d), ref, count, stats);
  return cudaGetLastError();
}

cudaError_t launch_gate(const volatile int* flag, uint64_t timeout_ns, cudaStream_t stream) {
  gate_kernel<<<1, 1, 0, stream>>>(flag, timeout_ns);
  return cudaGetLastError();
}

cudaError_t inject_fault(InjectedFault fault, const void* valid_ptr, cudaStream_t stream) {
  fault_kernel<<<1, 1, 0, stream>>>(static_cast<int>(fault), static_cast<const char*>(valid_ptr));
  return cudaGetLastError();
}

}  // namespace cks::worker::dev
