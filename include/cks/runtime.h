/* cks/runtime.h — the GEMM runtime: run the selector's pick (C API of libcks_runtime.so).
 *
 *   cks_runtime_handle rt;
 *   cks_runtime_options o;
 *   cks_runtime_options_init(&o);
 *   o.bundle_dir = "/opt/bundles/llm";           // built by `cks bundle` (or $CKS_BUNDLE)
 *   if (cks_runtime_create(&o, &rt) != 0) fprintf(stderr, "%s\n", cks_runtime_last_error());
 *   // D (M x N, column-major, bf16) = alpha * op(A) * op(B), on `stream` (a cudaStream_t; NULL: the default stream)
 *   if (cks_gemm(rt, m, n, k, "tn", A, B, D, 1.0f, 0.0f, stream) != 0) fprintf(stderr, "%s\n", cks_runtime_last_error());
 *   cks_runtime_free(rt);
 *
 * Layouts are the project's (cks/catalogue.hpp): the first letter is A (M x K), the second B (K x N);
 * 't' = row-major, 'n' = column-major; D is always column-major (ldd = M). In BLAS terms
 * "tn" is D = op(A) op(B) with op(A) = transpose of a column-major K x M matrix (lda = K) and op(B)
 * = B (ldb = K): cublasGemmEx(CUBLAS_OP_T, CUBLAS_OP_N, M, N, K, ...). Leading dimensions are the
 * packed ones (A: K if row-major else M; B: N if row-major else K). Operands are BF16 on the
 * current CUDA device; accumulation in FP32.
 *
 * Modes (cks_runtime_set_mode, options.mode, $CKS_MODE):
 *   "select"    the model's top-1 for the problem when a bundle (or the compile cache) holds it;
 *               otherwise cuBLASLt (cks_runtime_query says why), and, with the compile cache on,
 *               the pick is compiled in the background and used once ready;
 *   "autotune"  on the first call of a problem: times the model's top-k candidates and cuBLASLt's
 *               first algorithms, interleaved, keeps the fastest and appends it to the tuning
 *               file, which later processes reuse; with the compile cache on, candidates no bundle
 *               holds are compiled in the background first (cuBLASLt meanwhile), and the first call
 *               after they are settled tunes;
 *   "cublas"    cuBLASLt only (the reference).
 * What the CUTLASS kernels cannot run (M or a contiguous dimension not a multiple of 8, pointers
 * not 16-byte aligned, beta != 0) runs on cuBLASLt in every mode, and the query says so; with
 * options.strict (or $CKS_STRICT=1) such a call fails with that reason in select and autotune modes.
 * A row product (M = 1, N > 1) runs as the column problem (N, 1, K): D (1 x N) and A (1 x K) are
 * contiguous whatever their letters, so D^T = B^T A^T, B first with its other letter and A as a K x 1
 * column ("tn" for a B letter n, else "nn"); bundles (`cks bundle`), the tuning file and the query
 * know the problem by that form.
 *
 * Every function returns 0 on success and -1 on failure; cks_runtime_last_error() then holds one
 * line (thread-local, valid until the next failing call on the same thread). No C++ exception
 * crosses this boundary. A handle may be used from several threads and streams at once; calls are
 * asynchronous (stream-ordered) except the call of a problem in autotune mode that tunes it, which
 * times candidates on a private stream and waits for them. docs/library.md, "The GEMM runtime".
 */
#ifndef CKS_RUNTIME_H
#define CKS_RUNTIME_H
#include <stdint.h>

#if defined(__GNUC__) || defined(__clang__)
#define CKS_RUNTIME_API __attribute__((visibility("default")))
#else
#define CKS_RUNTIME_API
#endif

#ifdef __cplusplus
extern "C" {
#endif

typedef struct cks_runtime* cks_runtime_handle;

/* Options of cks_runtime_create. Fill with cks_runtime_options_init() first, then set fields:
 * NULL strings and negative numbers mean "the default" (an environment variable, else built in). */
typedef struct cks_runtime_options {
  uint32_t struct_size;        /* sizeof(cks_runtime_options); set by cks_runtime_options_init */
  const char* mode;            /* "select", "autotune" or "cublas"; NULL: $CKS_MODE, else "select" */
  const char* bundle_dir;      /* a `cks bundle` folder (index.json); NULL: $CKS_BUNDLE, else none; "" none */
  const char* model_path;      /* selector model; NULL: $CKS_MODEL, else the shipped default model */
  const char* tuning_file;     /* NULL: $CKS_TUNING_FILE, else $XDG_CACHE_HOME/cks/tuning.csv
                                  ($HOME/.cache when XDG_CACHE_HOME is unset) */
  const char* kernel_cache;    /* compile cache; NULL: $CKS_KERNEL_CACHE, else $XDG_CACHE_HOME/cks/kernels */
  int32_t compile_on_miss;     /* 1: compile a pick no bundle holds in the background (needs nvcc and the
                                  CUTLASS headers: $CKS_CUTLASS_DIR); 0: never; -1: $CKS_COMPILE (0 or 1),
                                  else 1 */
  int32_t compile_jobs;        /* parallel nvcc processes of the compile cache; -1: 1 */
  int32_t autotune_top;        /* candidates timed besides cuBLASLt; -1: 4 */
  int32_t autotune_rounds;     /* interleaved timing rounds; -1: 5 */
  int32_t select_depth;        /* select: the best of the model's first N picks the bundle holds; -1: 1 */
  int32_t verbose;             /* 1: one line on stderr per problem dispatched; -1: $CKS_RUNTIME_VERBOSE, else 0 */
  int32_t strict;              /* 1: in select and autotune modes a call the CUTLASS kernels cannot run (see
                                  above) fails with that reason instead of running on cuBLASLt;
                                  -1: $CKS_STRICT, else 0 */
  int32_t autotune_lt_algos;   /* cuBLASLt algorithms autotune times: the heuristic's first N (1 to 8);
                                  -1: 4 */
  int32_t autotune_host_us;    /* the caller's own host time per call in microseconds (0 to 1000), beyond
                                  cks_gemm's. When > 0, autotune also measures each candidate's launch
                                  cost and compares time per call, max(GPU time, launch cost + this):
                                  a product the caller's host bounds goes to the cheaper launch;
                                  -1: 0 (GPU time only; cks.torch sets 8) */
  int32_t autotune_lt_margin_pct; /* autotune: cuBLASLt (any algorithm) wins only when its time per call
                                  beats the fastest kernel's by more than this many percent plus
                                  autotune_lt_margin_us (0 to 100); -1: 0. cks.torch sets 3: from Python,
                                  back-to-back calls on cuBLASLt cost more than autotune's timing says
                                  (docs/library.md, "The caller's host time") */
  int32_t autotune_lt_margin_us;  /* the margin's fixed part in microseconds (0 to 1000); -1: 0; cks.torch: 1 */
  const char* orientations;    /* the selector's orientations (cks_selector_create_with): "both" (swapped kernels
                                  where the transposed problem's static estimate leads) or "own";
                                  NULL: $CKS_ORIENTATIONS, else "both" */
  int32_t nondeterministic;    /* 1: stream-K kernels run the nondeterministic reduction (the splits of a tile
                                  add concurrently): as fast or faster at the same setting, but results may
                                  differ in the last bits from run to run; 0: the bitwise reproducible
                                  deterministic reduction; -1: $CKS_NONDETERMINISTIC, else 0. A tuning-file
                                  winner timed with it is tuned again by a process without it. Added after
                                  `orientations`: a struct_size that ends before this field (a program built
                                  against the earlier header) is accepted and gets the default. */
} cks_runtime_options;

/* What a problem dispatched to (cks_runtime_query). Strings are NUL-terminated. */
typedef struct cks_dispatch_info {
  char source[16];     /* "bundle" (a bundled kernel), "tuned" (autotune's winner, this process or the
                          tuning file), "compiled" (the compile cache), "cublas", or "none" (not called yet) */
  char mode[16];       /* the mode the information belongs to */
  char kernel_id[24];  /* "k" + 16 hex digits; "" for cuBLASLt */
  char knobs[48];      /* e.g. "r=m,s=2,d=h,k=1"; "" for cuBLASLt */
  char reason[320];    /* why this source, e.g. "the model's top-1 kadf5... is not in the bundle" */
  int32_t rank;        /* the kernel's rank in the model's ranking (1 = top-1); 0 for cuBLASLt */
  int32_t compile_pending; /* 1: the pick is being compiled; cuBLASLt runs meanwhile */
  double tuned_us;     /* autotune: the winner's time per call in microseconds; 0 otherwise */
  double cublas_us;    /* autotune: cuBLASLt's time per call; 0 otherwise */
  uint64_t calls;      /* calls of this problem in this mode on this device so far */
} cks_dispatch_info;

/* Sets every field of the caller's struct, `size` bytes (its sizeof), to its default (NULL, -1)
 * and struct_size to `size`: a library newer than the caller's header writes only the fields the
 * caller's struct has. The macro cks_runtime_options_init(o) below passes sizeof(*o). */
CKS_RUNTIME_API void cks_runtime_options_init_size(cks_runtime_options* options, uint32_t size);
/* The entry point of programs built against the header before `nondeterministic` (session 36):
 * fills that struct only (the fields before `nondeterministic`). Programs built against this
 * header call cks_runtime_options_init_size through the macro. */
CKS_RUNTIME_API void cks_runtime_options_init(cks_runtime_options* options);
#define cks_runtime_options_init(options) cks_runtime_options_init_size((options), (uint32_t)sizeof(*(options)))

/* Creates a runtime: checks the options and the environment, reads the bundle index and (autotune)
 * the tuning file. Touches no GPU: CUDA is first used by the first cks_gemm. options NULL: defaults. */
CKS_RUNTIME_API int cks_runtime_create(const cks_runtime_options* options, cks_runtime_handle* out);
/* Frees the handle, its workspaces (cudaFree: waits for the device) and its cuBLASLt plans; NULL is
 * a no-op. No other thread may use the handle meanwhile. */
CKS_RUNTIME_API int cks_runtime_free(cks_runtime_handle handle);

/* "select", "autotune" or "cublas". Each mode keeps its own dispatch cache. */
CKS_RUNTIME_API int cks_runtime_set_mode(cks_runtime_handle handle, const char* mode);
/* The current mode (a static string). */
CKS_RUNTIME_API int cks_runtime_get_mode(cks_runtime_handle handle, const char** mode);

/* D (m x n, column-major) = alpha * A * B + beta * D in the layout's majors (see above), BF16, on the
 * current device, enqueued on `stream` (cudaStream_t; NULL = the legacy default stream).
 * m, n, k in [1, 2^31-1]; A, B, D device pointers, not NULL; layout "tn", "nt", "nn" or "tt". */
CKS_RUNTIME_API int cks_gemm(cks_runtime_handle handle, int64_t m, int64_t n, int64_t k, const char* layout,
                             const void* A, const void* B, void* D, float alpha, float beta, void* stream);

/* What the problem dispatched to in the current mode on the current device ("none" before its
 * first call). */
CKS_RUNTIME_API int cks_runtime_query(cks_runtime_handle handle, int64_t m, int64_t n, int64_t k, const char* layout,
                                      cks_dispatch_info* out);

/* Waits up to timeout_s seconds for the background compiles to finish; *pending (may be NULL)
 * receives the number still running. */
CKS_RUNTIME_API int cks_runtime_wait_compiles(cks_runtime_handle handle, double timeout_s, int32_t* pending);

/* The runtime's configuration as one line of JSON (mode, bundle, model hash, tuning file, compile
 * cache, ...); valid until the next call on this thread. */
CKS_RUNTIME_API int cks_runtime_describe(cks_runtime_handle handle, const char** json);

/* The message of the last failure of a cks_runtime_* / cks_gemm call on this thread ("" if none). */
CKS_RUNTIME_API const char* cks_runtime_last_error(void);

#ifdef __cplusplus
}
#endif
#endif /* CKS_RUNTIME_H */
