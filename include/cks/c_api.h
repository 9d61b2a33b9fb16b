/* cks/c_api.h — C API of the kernel selector, for bindings (ctypes, cffi, other languages).
 *
 * Every function returns 0 on success and -1 on failure; cks_last_error() then describes the
 * failure (thread-local, valid until the next failing call on the same thread). No C++
 * exception crosses this boundary. A selector handle may be used from several threads.
 *
 *   cks_selector_handle h;
 *   if (cks_selector_create(NULL, &h) != 0) fprintf(stderr, "%s\n", cks_last_error());
 *   cks_selection top[4]; uint32_t n;
 *   cks_selector_select(h, 4096, 4096, 4096, "tn", 4, top, &n);
 *   cks_selector_free(h);
 *
 * Installed, this is the one header of libcks.so (docs/library.md): link with -lcks, or
 * find_package(cks) and target cks::cks, or pkg-config cks. The library exports only the cks_*
 * functions below and finds its data (the default model, the hardware presets) in
 * <prefix>/share/cks beside <prefix>/lib, or where $CKS_MODEL / $CKS_DATA_DIR say.
 */
#ifndef CKS_C_API_H
#define CKS_C_API_H
#include <stdint.h>

/* Exported from libcks.so (built with -fvisibility=hidden and a version script). */
#if defined(__GNUC__) || defined(__clang__)
#define CKS_API __attribute__((visibility("default")))
#else
#define CKS_API
#endif

#ifdef __cplusplus
extern "C" {
#endif

typedef struct cks_selector* cks_selector_handle;

/* One ranked candidate. Strings are NUL-terminated. */
typedef struct cks_selection {
  char kernel_id[24];  /* "k" + 16 hex digits (KernelDesc::id) */
  char knobs[48];      /* runtime knobs, e.g. "r=m,s=2,d=h,k=1" */
  char canonical[160]; /* kernel descriptor, e.g. "sm90_bf16_tn_128x128x64_2x1x1_s0_..."; a swapped
                          kernel's ends with "+swap" (it runs D^T = B^T A^T on the caller's operands;
                          the tile fields below are its CUTLASS kernel's, tile M along N), a
                          sliced-K kernel's with "+slicek" (K slices into FP32 partials, then a
                          fixed-order reduction; the knobs' k= is the slice count) */
  double score;        /* the model's score; higher is better */
  int32_t tile_m, tile_n, tile_k, cluster_m, cluster_n, stages; /* stages 0 = automatic */
} cks_selection;

/* Loads a model file; model_path NULL selects the shipped default model: $CKS_MODEL, else
 * models/default.json in $CKS_DATA_DIR, in the installed share/cks, in the source tree
 * (cks_data_path("model") says which). Orientations: $CKS_ORIENTATIONS ("own" or "both"), else
 * "both" (cks_selector_create_with). */
CKS_API int cks_selector_create(const char* model_path, cks_selector_handle* out);
/* The same with the orientations ranked: "both" (the problem and its transposed problem, whose
 * picks are swapped kernels, where that orientation's static estimate leads; docs/catalogue.md,
 * "Swapped kernels") or "own" (the problem's layout only); NULL: $CKS_ORIENTATIONS, else "both". */
CKS_API int cks_selector_create_with(const char* model_path, const char* orientations, cks_selector_handle* out);
/* A selector ranking by the static efficiency score (no model), for the h200-sxm preset. */
CKS_API int cks_selector_create_static(cks_selector_handle* out);
CKS_API int cks_selector_free(cks_selector_handle handle);

/* Writes the best min(top_k, candidates) candidates of the problem, best first, into
 * results[0 .. *out_count). layout is "tn", "nt", "nn" or "tt". Cached per problem.
 * The problem is checked as `cks select` checks it (cks::check_problem in cks/catalogue.hpp, same
 * message): M, N, K in [1, 2^31-1]; the layout's contiguous dimensions multiples of 8 (tn: M, K;
 * nt: M, N; nn: M, K; tt: M, N, K; D is column-major, so M always). Otherwise -1. */
CKS_API int cks_selector_select(cks_selector_handle handle, int64_t m, int64_t n, int64_t k, const char* layout, uint32_t top_k,
                            cks_selection* results, uint32_t* out_count);

/* The message of the last failure on this thread ("" if none). */
CKS_API const char* cks_last_error(void);

/* The library's version, e.g. "0.1.0" (the project version; the soname carries its major). */
CKS_API const char* cks_version(void);

/* The file the library reads for `what`: "model" (the default model of cks_selector_create(NULL))
 * or "hw_presets" (the hardware presets). Writes a NUL-terminated path (valid until the next call
 * on this thread) to *out; -1 when `what` is unknown or no such file exists. */
CKS_API int cks_data_path(const char* what, const char** out);

#ifdef __cplusplus
}
#endif
#endif /* CKS_C_API_H */
