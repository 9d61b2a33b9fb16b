// The GEMM runtime's configuration (include/cks/runtime.h): the C options struct and the
// environment resolved into one RuntimeConfig, and the checks of one cks_gemm call. No CUDA here:
// libcks_runtime.so (src/runtime/gpu/) and the unit tests share it.
#pragma once
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include "cks/catalogue.hpp"
#include "cks/runtime.h"

namespace cks::rt {

inline constexpr int kMaxLtAlgos = 8;  // autotune_lt_algos, at most

enum class Mode { select = 0, autotune = 1, cublas = 2 };
inline constexpr int kModes = 3;
std::string_view to_string(Mode m);
// Throws Error "unknown mode 'x' (expected select, autotune or cublas)".
Mode parse_mode(std::string_view s);

struct RuntimeConfig {
  Mode mode = Mode::select;
  std::string bundle_dir;     // "" = no bundle
  std::string model_path;     // "" = the shipped default model (libcks's lookup)
  std::string orientations = "both";  // the selector's: "both" or "own" (cks_selector_create_with)
  std::string tuning_file;
  std::string kernel_cache;
  bool compile_on_miss = true;
  int compile_jobs = 1;
  int autotune_top = 4;
  int autotune_rounds = 5;
  int autotune_lt_algos = 4;  // cuBLASLt heuristic algorithms autotune times (1: the top-1 only; lease 22: 4)
  int autotune_host_us = 0;   // the caller's host time per call beyond cks_gemm's (> 0: autotune counts the host)
  int autotune_lt_margin_pct = 0;  // cuBLASLt must beat the fastest kernel by this % + autotune_lt_margin_us
  int autotune_lt_margin_us = 0;
  int select_depth = 1;
  bool verbose = false;
  bool strict = false;  // calls the kernels cannot run are errors (select, autotune), not cuBLASLt calls
  bool nondeterministic = false;  // stream-K picks run the nondeterministic reduction (opt-in)
};

// The environment as the runtime reads it (getenv in the library, a map in the tests);
// nullopt = unset.
using EnvLookup = std::function<std::optional<std::string>(const char* name)>;
EnvLookup process_env();

// cks_runtime_options_init: every field its default (NULL, -1), struct_size set.
void init_options(cks_runtime_options* o);

// Options (NULL: every default) over the environment over the built-in defaults. Throws Error
// with one line on a bad value: an unknown mode (option or $CKS_MODE), a struct_size this library
// does not know, counts out of range, $CKS_COMPILE / $CKS_RUNTIME_VERBOSE not 0 or 1, no home for
// the cache files ($XDG_CACHE_HOME and $HOME unset or relative).
RuntimeConfig resolve_config(const cks_runtime_options* options, const EnvLookup& env);

// The cache folder: $XDG_CACHE_HOME/cks, else $HOME/.cache/cks (XDG base directories: a relative
// $XDG_CACHE_HOME is ignored). Throws Error when neither is usable.
std::string cache_home(const EnvLookup& env);

// --- One call ---------------------------------------------------------------------------------
// Throws Error for what no backend can run: a layout name other than tn/nt/nn/tt, M, N or K
// outside [1, 2^31-1], a NULL operand.
Layout check_call(int64_t m, int64_t n, int64_t k, const char* layout, const void* a, const void* b, const void* d);

// A row product (M = 1, N > 1) as the runtime runs it: D (1 x N) and A (1 x K) are contiguous rows
// whatever their layout letters, so D = A B is the column D^T (N x 1) = B^T A^T, the problem (N, 1, K)
// with B first (as B^T: its other letter) and A second ("n": a K x 1 column); D's memory is the same.
// The kernels need the contiguous dimension of A and D, the runtime's M, in multiples of 8, so only
// this form of a row product can run on them (lease 24: as (1, N, K) all 75 ran on cuBLASLt).
// Rewrites the arguments and returns true for such a problem; false (nothing changed) otherwise.
bool as_column_problem(int64_t& m, int64_t& n, Layout& layout, const void*& a, const void*& b);
// Why the CUTLASS kernels cannot run a checked call ("" when they can): the catalogue's problem
// check (cks::check_problem: the layout's contiguous dimensions multiples of 8), an operand not
// 16-byte aligned (TMA), beta != 0 (the kernels have no C operand). Such calls run on cuBLASLt.
std::string kernel_limit(int64_t m, int64_t n, int64_t k, Layout layout, const void* a, const void* b, const void* d,
                         float beta);

}  // namespace cks::rt
