/* cks/kernel_lib_abi.h — the C ABI every generated kernel library (.so) exports.
 *
 * One translation unit holds N CUTLASS kernels; a single entry point dispatches by kernel
 * index inside the batch (the paper's batched compilation). The GPU worker dlopen()s the
 * library and talks to it only through this header. Keep it C: it is an ABI boundary. */
#ifndef CKS_KERNEL_LIB_ABI_H
#define CKS_KERNEL_LIB_ABI_H
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* 2: cks_knobs.reduction (session 35); libraries of version 1 are rebuilt, never loaded. */
#define CKS_KERNEL_LIB_ABI_VERSION 2

typedef enum {
  CKS_OK = 0,
  CKS_CANNOT_IMPLEMENT = 1, /* can_implement() rejected the problem / knobs */
  CKS_LAUNCH_ERROR = 2,     /* initialize() or run() returned an error */
  CKS_BAD_INDEX = 3,
  CKS_BAD_ARGUMENT = 4
} cks_status;

/* Runtime knobs (values mirror cks::RuntimeKnobs). */
typedef struct {
  int raster;        /* 0 heuristic, 1 along M, 2 along N */
  int max_swizzle;   /* 1, 2, 4, 8 */
  int decomposition; /* 0 heuristic, 1 data-parallel, 2 split-K, 3 stream-K */
  int splits;        /* split-K factor */
  int reduction;     /* 0 deterministic, 1 nondeterministic (stream-K only) */
} cks_knobs;

/* One GEMM problem on device buffers: D(MxN, col-major) = alpha * A(MxK) * B(KxN) + beta*C.
 * Leading dimensions follow the kernel's compiled layout; C may be NULL (C = void kernels). */
typedef struct {
  int m, n, k;
  const void* A; /* bf16 */
  const void* B; /* bf16 */
  void* D;       /* bf16 */
  float alpha, beta;
  cks_knobs knobs;
  int device_id;
  int sm_count;   /* passed to CUTLASS's KernelHardwareInfo */
} cks_problem;

typedef struct cks_op_s* cks_op; /* initialized kernel: params (TMA descriptors) built once */

typedef struct {
  int abi_version;
  int (*count)(void);
  const char* (*kernel_id)(int index);   /* cks::KernelDesc::id() */
  const char* (*canonical)(int index);   /* cks::KernelDesc::canonical() */
  int (*can_implement)(int index, const cks_problem* p);
  size_t (*workspace_size)(int index, const cks_problem* p);
  /* Builds the kernel's Params (incl. TMA descriptors) for this problem and buffer slot, and
   * initializes the workspace (stream-K barrier flags are zeroed here). */
  int (*initialize)(int index, const cks_problem* p, void* workspace, void* stream, cks_op* out);
  /* Re-zeroes the workspace for the next launch (needed by stream-K between launches). */
  int (*reset_workspace)(cks_op op, void* stream);
  int (*run)(cks_op op, void* stream);
  void (*destroy)(cks_op op);
} cks_kernel_lib;

/* The one exported symbol. */
const cks_kernel_lib* cks_kernel_lib_get(void);

#ifdef __cplusplus
}
#endif
#endif
