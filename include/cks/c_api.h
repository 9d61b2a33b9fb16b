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
 */
#ifndef CKS_C_API_H
#define CKS_C_API_H
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct cks_selector* cks_selector_handle;

/* One ranked candidate. Strings are NUL-terminated. */
typedef struct cks_selection {
  char kernel_id[24];  /* "k" + 16 hex digits (KernelDesc::id) */
  char knobs[48];      /* runtime knobs, e.g. "r=m,s=2,d=h,k=1" */
  char canonical[160]; /* kernel descriptor, e.g. "sm90_bf16_tn_128x128x64_2x1x1_s0_..." */
  double score;        /* the model's score; higher is better */
  int32_t tile_m, tile_n, tile_k, cluster_m, cluster_n, stages; /* stages 0 = automatic */
} cks_selection;

/* Loads a model file; model_path NULL selects the shipped default model (models/default.json,
 * or $CKS_MODEL). */
int cks_selector_create(const char* model_path, cks_selector_handle* out);
/* A selector ranking by the static efficiency score (no model), for the h200-sxm preset. */
int cks_selector_create_static(cks_selector_handle* out);
int cks_selector_free(cks_selector_handle handle);

/* Writes the best min(top_k, candidates) candidates of the problem, best first, into
 * results[0 .. *out_count). layout is "tn", "nt", "nn" or "tt". Cached per problem.
 * The problem is checked as `cks select` checks it (cks::check_problem in cks/catalogue.hpp, same
 * message): M, N, K in [1, 2^31-1]; the layout's contiguous dimensions multiples of 8 (tn: M, K;
 * nt: M, N; nn: M, K; tt: M, N, K; D is column-major, so M always). Otherwise -1. */
int cks_selector_select(cks_selector_handle handle, int64_t m, int64_t n, int64_t k, const char* layout, uint32_t top_k,
                        cks_selection* results, uint32_t* out_count);

/* The message of the last failure on this thread ("" if none). */
const char* cks_last_error(void);

#ifdef __cplusplus
}
#endif
#endif /* CKS_C_API_H */
