/* C ABI of the Model B training plugin (libcks_mlp_torch.so, built when libtorch is found).
 * cks loads it with dlopen for `cks train --model mlp`, so cks never depends on libtorch. */
#ifndef CKS_MLP_PLUGIN_H
#define CKS_MLP_PLUGIN_H
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Trains an MLP on encoded rows z (rows x width, row-major; standardised numerics then one-hot
 * categoricals), targets y = T / T*_g, band grades, and groups [group_begin[g], group_begin[g+1])
 * (groups + 1 offsets). options_json: {"objective", "hidden", "epochs", "learning_rate",
 * "pair_cap", "needle_top", "seed", "threads"} and optionally "dropout" (0), "weight_decay" (0: Adam, > 0:
 * AdamW) and "batch_rows" (2048). On success returns 0 and *out_json =
 * {"layers": [{"weight": [[...] x out], "bias": [...]}, ...]} (first layer on z, ReLU between
 * layers, last layer one output); on failure returns non-zero and *out_json = an error message.
 * Free *out_json with cks_mlp_free. progress may be NULL. */
typedef int (*cks_mlp_train_fn)(const float* z, uint64_t rows, uint64_t width, const float* y, const int32_t* grade,
                                const uint64_t* group_begin, uint64_t groups, const char* options_json,
                                void (*progress)(uint64_t done, uint64_t total), char** out_json);
typedef void (*cks_mlp_free_fn)(char* p);

#ifdef __cplusplus
}
#endif
#endif
