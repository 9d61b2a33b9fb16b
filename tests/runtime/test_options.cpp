// The runtime's configuration (options over environment over defaults) and the checks of one call
// (runtime/options.hpp): pure functions, no GPU.
#include <gtest/gtest.h>

#include <cstddef>
#include <map>
#include <tuple>

#include "cks/common.hpp"
#include "runtime/options.hpp"

using namespace cks;
using namespace cks::rt;

namespace {

EnvLookup env_of(std::map<std::string, std::string> vars) {
  return [vars = std::move(vars)](const char* name) -> std::optional<std::string> {
    if (auto it = vars.find(name); it != vars.end()) return it->second;
    return std::nullopt;
  };
}

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

cks_runtime_options defaults() {
  cks_runtime_options o;
  init_options(&o);
  return o;
}

}  // namespace

TEST(RuntimeOptions, DefaultsComeFromTheCacheHome) {
  const RuntimeConfig c = resolve_config(nullptr, env_of({{"HOME", "/home/u"}}));
  EXPECT_EQ(c.mode, Mode::select);
  EXPECT_EQ(c.bundle_dir, "");
  EXPECT_EQ(c.model_path, "");
  EXPECT_EQ(c.tuning_file, "/home/u/.cache/cks/tuning.csv");
  EXPECT_EQ(c.kernel_cache, "/home/u/.cache/cks/kernels");
  EXPECT_TRUE(c.compile_on_miss);
  EXPECT_EQ(c.compile_jobs, 1);
  EXPECT_EQ(c.autotune_top, 4);
  EXPECT_EQ(c.autotune_rounds, 5);
  EXPECT_EQ(c.autotune_lt_algos, 4);
  EXPECT_EQ(c.select_depth, 1);
  EXPECT_FALSE(c.verbose);
  EXPECT_FALSE(c.strict);
  // XDG_CACHE_HOME wins over HOME; a relative one is ignored (XDG base directory spec).
  EXPECT_EQ(resolve_config(nullptr, env_of({{"HOME", "/home/u"}, {"XDG_CACHE_HOME", "/x"}})).tuning_file, "/x/cks/tuning.csv");
  EXPECT_EQ(resolve_config(nullptr, env_of({{"HOME", "/home/u"}, {"XDG_CACHE_HOME", "rel"}})).tuning_file,
            "/home/u/.cache/cks/tuning.csv");
}

TEST(RuntimeOptions, EnvironmentOverDefaultsOptionsOverEnvironment) {
  const auto env = env_of({{"HOME", "/h"},
                           {"CKS_MODE", "autotune"},
                           {"CKS_BUNDLE", "/b"},
                           {"CKS_MODEL", "/m.json"},
                           {"CKS_TUNING_FILE", "/t.csv"},
                           {"CKS_KERNEL_CACHE", "/kc"},
                           {"CKS_COMPILE", "0"},
                           {"CKS_RUNTIME_VERBOSE", "1"},
                           {"CKS_STRICT", "1"}});
  RuntimeConfig c = resolve_config(nullptr, env);
  EXPECT_EQ(c.mode, Mode::autotune);
  EXPECT_EQ(c.bundle_dir, "/b");
  EXPECT_EQ(c.model_path, "/m.json");
  EXPECT_EQ(c.tuning_file, "/t.csv");
  EXPECT_EQ(c.kernel_cache, "/kc");
  EXPECT_FALSE(c.compile_on_miss);
  EXPECT_TRUE(c.verbose);
  EXPECT_TRUE(c.strict);
  cks_runtime_options o = defaults();
  o.mode = "cublas";
  o.bundle_dir = "";  // explicitly none, whatever CKS_BUNDLE says
  o.tuning_file = "/mine.csv";
  o.compile_on_miss = 1;
  o.verbose = 0;
  o.strict = 0;
  o.autotune_top = 8;
  o.autotune_rounds = 3;
  o.autotune_lt_algos = 4;
  o.select_depth = 2;
  o.compile_jobs = 4;
  c = resolve_config(&o, env);
  EXPECT_EQ(c.mode, Mode::cublas);
  EXPECT_EQ(c.bundle_dir, "");
  EXPECT_EQ(c.tuning_file, "/mine.csv");
  EXPECT_TRUE(c.compile_on_miss);
  EXPECT_FALSE(c.verbose);
  EXPECT_FALSE(c.strict);
  EXPECT_EQ(c.autotune_top, 8);
  EXPECT_EQ(c.autotune_rounds, 3);
  EXPECT_EQ(c.autotune_lt_algos, 4);
  EXPECT_EQ(c.select_depth, 2);
  EXPECT_EQ(c.compile_jobs, 4);
  // Both files given: no cache home needed.
  o.kernel_cache = "/k";
  EXPECT_NO_THROW(resolve_config(&o, env_of({})));
}

// The selector's orientations: "both" by default, $CKS_ORIENTATIONS over it, the option over both;
// anything else is one line naming where it came from.
TEST(RuntimeOptions, OrientationsDefaultToBoth) {
  EXPECT_EQ(resolve_config(nullptr, env_of({{"HOME", "/h"}})).orientations, "both");
  EXPECT_EQ(resolve_config(nullptr, env_of({{"HOME", "/h"}, {"CKS_ORIENTATIONS", "own"}})).orientations, "own");
  cks_runtime_options o = defaults();
  o.orientations = "both";
  EXPECT_EQ(resolve_config(&o, env_of({{"HOME", "/h"}, {"CKS_ORIENTATIONS", "own"}})).orientations, "both");
  EXPECT_EQ(error_of([] { resolve_config(nullptr, env_of({{"HOME", "/h"}, {"CKS_ORIENTATIONS", "sideways"}})); }),
            "$CKS_ORIENTATIONS: 'sideways' is not own or both");
  o.orientations = "Both";
  EXPECT_EQ(error_of([&] { resolve_config(&o, env_of({{"HOME", "/h"}})); }), "orientations: 'Both' is not own or both");
}

TEST(RuntimeOptions, BadValuesAreOneClearLine) {
  EXPECT_EQ(error_of([] { resolve_config(nullptr, env_of({{"HOME", "/h"}, {"CKS_MODE", "fast"}})); }),
            "$CKS_MODE: unknown mode 'fast' (expected select, autotune or cublas)");
  cks_runtime_options o = defaults();
  o.mode = "Select";
  EXPECT_EQ(error_of([&] { resolve_config(&o, env_of({{"HOME", "/h"}})); }),
            "unknown mode 'Select' (expected select, autotune or cublas)");
  EXPECT_EQ(error_of([] { resolve_config(nullptr, env_of({{"HOME", "/h"}, {"CKS_COMPILE", "yes"}})); }),
            "$CKS_COMPILE must be 0 or 1 (got 'yes')");
  o = defaults();
  o.autotune_rounds = 0;
  EXPECT_EQ(error_of([&] { resolve_config(&o, env_of({{"HOME", "/h"}})); }),
            "runtime option autotune_rounds must be in [1, 1024] or -1 for the default (got 0)");
  // autotune_lt_algos: the cuBLASLt heuristic's first 1 to 8 algorithms; -1 (init) is 4.
  EXPECT_EQ(defaults().autotune_lt_algos, -1);
  for (int v : {1, 8}) {
    o = defaults();
    o.autotune_lt_algos = v;
    EXPECT_EQ(resolve_config(&o, env_of({{"HOME", "/h"}})).autotune_lt_algos, v);
  }
  for (int v : {0, 9, 1024}) {
    o = defaults();
    o.autotune_lt_algos = v;
    EXPECT_EQ(error_of([&] { resolve_config(&o, env_of({{"HOME", "/h"}})); }),
              "runtime option autotune_lt_algos must be in [1, 8] or -1 for the default (got " + std::to_string(v) + ")");
  }
  o = defaults();
  o.compile_on_miss = 2;
  EXPECT_EQ(error_of([&] { resolve_config(&o, env_of({{"HOME", "/h"}})); }),
            "runtime option compile_on_miss must be 0, 1 or -1 (got 2)");
  // autotune_host_us: the caller's own host time per call, 0 to 1000 us; -1 (init) is 0.
  EXPECT_EQ(defaults().autotune_host_us, -1);
  EXPECT_EQ(resolve_config(nullptr, env_of({{"HOME", "/h"}})).autotune_host_us, 0);
  o = defaults();
  o.autotune_host_us = 8;
  EXPECT_EQ(resolve_config(&o, env_of({{"HOME", "/h"}})).autotune_host_us, 8);
  o.autotune_host_us = 1001;
  EXPECT_EQ(error_of([&] { resolve_config(&o, env_of({{"HOME", "/h"}})); }),
            "runtime option autotune_host_us must be in [0, 1000] or -1 for the default (got 1001)");
  // autotune_lt_margin_pct (0 to 100) and autotune_lt_margin_us (0 to 1000); -1 (init) is 0.
  EXPECT_EQ(defaults().autotune_lt_margin_pct, -1);
  EXPECT_EQ(defaults().autotune_lt_margin_us, -1);
  EXPECT_EQ(resolve_config(nullptr, env_of({{"HOME", "/h"}})).autotune_lt_margin_pct, 0);
  EXPECT_EQ(resolve_config(nullptr, env_of({{"HOME", "/h"}})).autotune_lt_margin_us, 0);
  o = defaults();
  o.autotune_lt_margin_pct = 3;
  o.autotune_lt_margin_us = 1;
  EXPECT_EQ(resolve_config(&o, env_of({{"HOME", "/h"}})).autotune_lt_margin_pct, 3);
  EXPECT_EQ(resolve_config(&o, env_of({{"HOME", "/h"}})).autotune_lt_margin_us, 1);
  o.autotune_lt_margin_pct = 101;
  EXPECT_EQ(error_of([&] { resolve_config(&o, env_of({{"HOME", "/h"}})); }),
            "runtime option autotune_lt_margin_pct must be in [0, 100] or -1 for the default (got 101)");
  o = defaults();
  o.autotune_lt_margin_us = 1001;
  EXPECT_EQ(error_of([&] { resolve_config(&o, env_of({{"HOME", "/h"}})); }),
            "runtime option autotune_lt_margin_us must be in [0, 1000] or -1 for the default (got 1001)");
  o = defaults();
  o.struct_size = 8;
  EXPECT_NE(error_of([&] { resolve_config(&o, env_of({{"HOME", "/h"}})); }).find("struct_size is 8"), std::string::npos);
  EXPECT_NE(error_of([] { resolve_config(nullptr, env_of({})); }).find("no cache folder for the runtime"), std::string::npos);
  // A mode name full of control characters comes back escaped, on one line.
  o = defaults();
  o.mode = "a\nb";
  EXPECT_EQ(error_of([&] { resolve_config(&o, env_of({{"HOME", "/h"}})); }),
            "unknown mode 'a\\nb' (expected select, autotune or cublas)");
}

// The opt-in nondeterministic reduction: off by default, $CKS_NONDETERMINISTIC over that, the option
// over both; a program built against the header before the field (struct_size ending there) gets
// the default or the environment's, and its other fields are read.
TEST(RuntimeOptions, NondeterministicIsOptInAndOlderStructsStillRead) {
  EXPECT_FALSE(resolve_config(nullptr, env_of({{"HOME", "/h"}})).nondeterministic);
  EXPECT_TRUE(resolve_config(nullptr, env_of({{"HOME", "/h"}, {"CKS_NONDETERMINISTIC", "1"}})).nondeterministic);
  cks_runtime_options o = defaults();
  o.nondeterministic = 0;
  EXPECT_FALSE(resolve_config(&o, env_of({{"HOME", "/h"}, {"CKS_NONDETERMINISTIC", "1"}})).nondeterministic);
  o.nondeterministic = 1;
  EXPECT_TRUE(resolve_config(&o, env_of({{"HOME", "/h"}})).nondeterministic);
  EXPECT_NE(error_of([] { resolve_config(nullptr, env_of({{"HOME", "/h"}, {"CKS_NONDETERMINISTIC", "yes"}})); })
                .find("CKS_NONDETERMINISTIC"),
            std::string::npos);
  o = defaults();
  o.nondeterministic = 1;  // beyond the older struct: never read
  o.strict = 1;
  o.orientations = "own";
  o.struct_size = offsetof(cks_runtime_options, nondeterministic);
  RuntimeConfig c = resolve_config(&o, env_of({{"HOME", "/h"}}));
  EXPECT_FALSE(c.nondeterministic);
  EXPECT_TRUE(c.strict);
  EXPECT_EQ(c.orientations, "own");
  EXPECT_TRUE(resolve_config(&o, env_of({{"HOME", "/h"}, {"CKS_NONDETERMINISTIC", "1"}})).nondeterministic);
  o.struct_size = offsetof(cks_runtime_options, nondeterministic) - 8;
  EXPECT_NE(error_of([&] { resolve_config(&o, env_of({{"HOME", "/h"}})); }).find("struct_size is"), std::string::npos);
}

TEST(RuntimeOptions, ModesRoundTrip) {
  for (Mode m : {Mode::select, Mode::autotune, Mode::cublas}) EXPECT_EQ(parse_mode(to_string(m)), m);
}

TEST(RuntimeCall, RejectsWhatNoBackendCanRun) {
  const int x = 0;
  const void* p = &x;
  EXPECT_EQ(check_call(8, 8, 8, "nt", p, p, const_cast<void*>(p)), Layout::nt);
  EXPECT_EQ(error_of([&] { check_call(8, 8, 8, "xy", p, p, const_cast<void*>(p)); }),
            "unknown layout 'xy' (expected tn, nt, nn or tt)");
  EXPECT_EQ(error_of([&] { check_call(8, 8, 8, nullptr, p, p, const_cast<void*>(p)); }), "layout must not be NULL");
  EXPECT_EQ(error_of([&] { check_call(0, 8, 8, "tn", p, p, const_cast<void*>(p)); }), "M must be positive (got 0)");
  EXPECT_EQ(error_of([&] { check_call(8, -3, 8, "tn", p, p, const_cast<void*>(p)); }), "N must be positive (got -3)");
  EXPECT_EQ(error_of([&] { check_call(8, 8, int64_t{1} << 31, "tn", p, p, const_cast<void*>(p)); }),
            "K is too large (got 2147483648, at most 2^31-1)");
  EXPECT_EQ(error_of([&] { check_call(8, 8, 8, "tn", p, nullptr, const_cast<void*>(p)); }), "B must not be NULL");
  // M = 1 (decode) is a valid call: cuBLASLt runs it.
  EXPECT_NO_THROW(check_call(1, 4096, 4096, "tn", p, p, const_cast<void*>(p)));
}

TEST(RuntimeCall, KernelLimitsSendTheCallToCublas) {
  alignas(256) static char buf[1024];
  void* a = buf;
  EXPECT_EQ(kernel_limit(64, 64, 64, Layout::tn, a, a, a, 0.0f), "");
  // The catalogue's check and message (cks::check_problem): M contiguous in D.
  EXPECT_EQ(kernel_limit(1, 4096, 4096, Layout::tn, a, a, a, 0.0f).rfind("M must be a multiple of 8 for layout tn (got 1)", 0), 0u);
  EXPECT_EQ(kernel_limit(8, 12, 8, Layout::tt, a, a, a, 0.0f).rfind("N must be a multiple of 8 for layout tt", 0), 0u);
  EXPECT_EQ(kernel_limit(8, 12, 8, Layout::tn, a, a, a, 0.0f), "");  // N is free in tn
  EXPECT_EQ(kernel_limit(64, 64, 64, Layout::tn, a, buf + 8, a, 0.0f), "B is not 16-byte aligned (TMA needs it)");
  EXPECT_EQ(kernel_limit(64, 64, 64, Layout::tn, a, a, a, 1.0f), "beta != 0 (the CUTLASS kernels have no C operand)");
}

TEST(RuntimeCall, ARowProductRunsAsAColumn) {
  // (1, N, K): D = A B is D^T (N x 1) = B^T A^T, B first with its other letter, A a K x 1 column.
  alignas(256) static const char x[16] = {}, y[16] = {};
  for (auto [in, out] : {std::pair{Layout::tn, Layout::tn}, std::pair{Layout::nn, Layout::tn},
                         std::pair{Layout::nt, Layout::nn}, std::pair{Layout::tt, Layout::nn}}) {
    int64_t m = 1, n = 6144;
    Layout l = in;
    const void* a = x;
    const void* b = y;
    EXPECT_NE(kernel_limit(m, n, 4096, l, a, b, a, 0.0f), "") << to_string(in);  // as (1, 6144, 4096): never
    EXPECT_TRUE(as_column_problem(m, n, l, a, b));
    EXPECT_EQ(std::tuple(m, n, l, a, b), std::tuple(int64_t{6144}, int64_t{1}, out, static_cast<const void*>(y),
                                                    static_cast<const void*>(x)));
    EXPECT_EQ(kernel_limit(m, n, 4096, l, a, b, a, 0.0f), "") << to_string(in);  // as (6144, 1, 4096): the kernels
  }
  // Nothing else changes: M > 1, or a 1 x 1 product.
  for (auto [m0, n0] : {std::pair<int64_t, int64_t>{8, 6144}, std::pair<int64_t, int64_t>{1, 1}}) {
    int64_t m = m0, n = n0;
    Layout l = Layout::nt;
    const void* a = x;
    const void* b = y;
    EXPECT_FALSE(as_column_problem(m, n, l, a, b));
    EXPECT_EQ(std::tuple(m, n, l, a, b), std::tuple(m0, n0, Layout::nt, static_cast<const void*>(x), static_cast<const void*>(y)));
  }
}
