// Device helpers of the CUDA backend (device_kernels.cu): operand fill, output comparison and
// the launch gate. Host-callable launchers; every one is asynchronous on `stream`.
#pragma once
#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

namespace cks::worker::dev {

// Fills `count` BF16 values with uniform random numbers in (-1, 1), never zero: element i is a
// function of (seed, i) only, so a group's operands are reproducible from its seed.
cudaError_t fill_random_bf16(void* dst, size_t count, uint64_t seed, cudaStream_t stream);

// Comparison of a BF16 result with an FP32 reference, accumulated on the device into a
// CompareStats that the caller zeroed. Absolute values are kept as float bit patterns so that
// atomicMax on unsigned orders them (valid for non-negative floats).
struct CompareStats {
  unsigned int max_abs_err_bits;      // max |d - ref| over elements where d is finite
  unsigned int max_abs_ref_bits;      // max |ref|
  unsigned long long nonfinite;       // elements of d that are NaN or Inf
};
cudaError_t compare_bf16_f32(const void* d, const float* ref, size_t count, CompareStats* stats, cudaStream_t stream);

// Holds the stream until *flag (host memory mapped to the device) becomes non-zero, or for at
// most timeout_ns. Enqueued before a timed round, it lets the host enqueue the whole round before
// the GPU starts, so launch overhead on the host never shows up as gaps in the measured time.
cudaError_t launch_gate(const volatile int* flag, uint64_t timeout_ns, cudaStream_t stream);

// A device fault injected in place of a kernel launch (cks-worker --fault with the cuda backend,
// the fault-path check on the GPU): a kernel that spins forever (hang), executes a trap
// (cudaErrorLaunchFailure, sticky) or loads a 4-byte word from `valid_ptr` + 1
// (cudaErrorMisalignedAddress, sticky). `valid_ptr`: device memory of at least 8 bytes.
enum class InjectedFault { hang, trap, misaligned };
cudaError_t inject_fault(InjectedFault fault, const void* valid_ptr, cudaStream_t stream);

}  // namespace cks::worker::dev
