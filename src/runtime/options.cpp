// The runtime's configuration and call checks (runtime/options.hpp).
#include "runtime/options.hpp"

#include "cks/selector.hpp"

#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <utility>

#include "cks/common.hpp"
#include "cks/selector.hpp"

namespace cks::rt {

namespace {

constexpr int kMaxCount = 1024;  // autotune candidates and rounds, select depth, compile jobs

// A count option: -1 (or any negative) takes `def`; otherwise in [lo, hi].
int count_option(int32_t v, int def, int lo, const char* name, int hi = kMaxCount) {
  if (v < 0) return def;
  if (v < lo || v > hi)
    throw Error(std::string("runtime option ") + name + " must be in [" + std::to_string(lo) + ", " +
                std::to_string(hi) + "] or -1 for the default (got " + std::to_string(v) + ")");
  return v;
}

// A 0/1 switch from the options (-1: unset) or an environment variable ("0" or "1").
bool switch_option(int32_t v, const char* option, const char* var, bool def, const EnvLookup& env) {
  if (v == 0 || v == 1) return v == 1;
  if (v >= 0) throw Error(std::string("runtime option ") + option + " must be 0, 1 or -1 (got " + std::to_string(v) + ")");
  const auto e = env(var);
  if (!e || e->empty()) return def;
  if (*e == "0" || *e == "1") return *e == "1";
  throw Error(std::string("$") + var + " must be 0 or 1 (got '" + one_line(*e, 80) + "')");
}

// A string option: the field when not NULL, else the environment variable when set and not
// empty, else `def`.
std::string string_option(const char* v, const char* var, const std::string& def, const EnvLookup& env) {
  if (v) return v;
  if (const auto e = env(var); e && !e->empty()) return *e;
  return def;
}

}  // namespace

std::string_view to_string(Mode m) {
  switch (m) {
    case Mode::select: return "select";
    case Mode::autotune: return "autotune";
    case Mode::cublas: return "cublas";
  }
  return "?";
}

Mode parse_mode(std::string_view s) {
  for (Mode m : {Mode::select, Mode::autotune, Mode::cublas})
    if (s == to_string(m)) return m;
  throw Error("unknown mode '" + one_line(s, 80) + "' (expected select, autotune or cublas)");
}

EnvLookup process_env() {
  return [](const char* name) -> std::optional<std::string> {
    const char* v = std::getenv(name);
    if (!v) return std::nullopt;
    return std::string(v);
  };
}

std::string cache_home(const EnvLookup& env) {
  if (const auto x = env("XDG_CACHE_HOME"); x && !x->empty() && (*x)[0] == '/') return *x + "/cks";
  if (const auto h = env("HOME"); h && !h->empty() && (*h)[0] == '/') return *h + "/.cache/cks";
  throw Error("no cache folder for the runtime: set XDG_CACHE_HOME or HOME (absolute paths), or give the tuning file "
              "and the kernel cache explicitly");
}

void init_options(cks_runtime_options* o) {
  *o = cks_runtime_options{};
  o->struct_size = sizeof(cks_runtime_options);
  o->compile_on_miss = o->compile_jobs = o->autotune_top = o->autotune_rounds = o->select_depth = o->verbose = -1;
  o->strict = o->autotune_lt_algos = o->autotune_host_us = o->autotune_lt_margin_pct = o->autotune_lt_margin_us = -1;
  o->nondeterministic = -1;
}

RuntimeConfig resolve_config(const cks_runtime_options* o, const EnvLookup& env) {
  cks_runtime_options defaults;
  init_options(&defaults);
  if (!o) o = &defaults;
  // The struct of the header before `nondeterministic` (session 36) ends at that field: its fields
  // are read, the later ones keep their defaults.
  constexpr uint32_t kFirstSize = offsetof(cks_runtime_options, nondeterministic);
  if (o->struct_size != sizeof(cks_runtime_options) && o->struct_size != kFirstSize)
    throw Error("cks_runtime_options.struct_size is " + std::to_string(o->struct_size) + ", this library's is " +
                std::to_string(sizeof(cks_runtime_options)) + " (call cks_runtime_options_init first)");
  cks_runtime_options full;
  if (o->struct_size != sizeof(cks_runtime_options)) {
    init_options(&full);
    std::memcpy(static_cast<void*>(&full), o, o->struct_size);
    full.struct_size = sizeof(cks_runtime_options);
    o = &full;
  }
  RuntimeConfig c;
  if (o->mode) {
    c.mode = parse_mode(o->mode);
  } else if (const auto m = env("CKS_MODE"); m && !m->empty()) {
    try {
      c.mode = parse_mode(*m);
    } catch (const Error& e) {
      throw Error(std::string("$CKS_MODE: ") + e.what());
    }
  }
  c.bundle_dir = string_option(o->bundle_dir, "CKS_BUNDLE", "", env);
  c.model_path = string_option(o->model_path, "CKS_MODEL", "", env);
  c.orientations = string_option(o->orientations, "CKS_ORIENTATIONS", "both", env);
  if (c.orientations.empty()) c.orientations = "both";
  parse_orientations(c.orientations, o->orientations ? "orientations" : "$CKS_ORIENTATIONS");  // one line on a bad value
  // The cache folder is needed only when neither file is given.
  std::string home;
  const auto home_or_throw = [&] {
    if (home.empty()) home = cache_home(env);
    return home;
  };
  c.tuning_file = string_option(o->tuning_file, "CKS_TUNING_FILE", "", env);
  if (c.tuning_file.empty()) c.tuning_file = home_or_throw() + "/tuning.csv";
  c.kernel_cache = string_option(o->kernel_cache, "CKS_KERNEL_CACHE", "", env);
  if (c.kernel_cache.empty()) c.kernel_cache = home_or_throw() + "/kernels";
  c.compile_on_miss = switch_option(o->compile_on_miss, "compile_on_miss", "CKS_COMPILE", true, env);
  c.verbose = switch_option(o->verbose, "verbose", "CKS_RUNTIME_VERBOSE", false, env);
  c.strict = switch_option(o->strict, "strict", "CKS_STRICT", false, env);
  c.nondeterministic = switch_option(o->nondeterministic, "nondeterministic", "CKS_NONDETERMINISTIC", false, env);
  c.compile_jobs = count_option(o->compile_jobs, 1, 1, "compile_jobs");
  c.autotune_top = count_option(o->autotune_top, 4, 0, "autotune_top");
  c.autotune_rounds = count_option(o->autotune_rounds, 5, 1, "autotune_rounds");
  c.autotune_lt_algos = count_option(o->autotune_lt_algos, 4, 1, "autotune_lt_algos", kMaxLtAlgos);
  c.autotune_host_us = count_option(o->autotune_host_us, 0, 0, "autotune_host_us", 1000);
  c.autotune_lt_margin_pct = count_option(o->autotune_lt_margin_pct, 0, 0, "autotune_lt_margin_pct", 100);
  c.autotune_lt_margin_us = count_option(o->autotune_lt_margin_us, 0, 0, "autotune_lt_margin_us", 1000);
  c.select_depth = count_option(o->select_depth, 1, 1, "select_depth");
  return c;
}

bool as_column_problem(int64_t& m, int64_t& n, Layout& layout, const void*& a, const void*& b) {
  if (m != 1 || n <= 1) return false;
  // The new A is B^T: B column-major ('n', K x N) is a row-major N x K ('t'), and the other way round.
  const bool b_col = layout == Layout::tn || layout == Layout::nn;
  layout = b_col ? Layout::tn : Layout::nn;
  std::swap(m, n);
  std::swap(a, b);
  return true;
}

Layout check_call(int64_t m, int64_t n, int64_t k, const char* layout, const void* a, const void* b, const void* d) {
  if (!layout) throw Error("layout must not be NULL");
  const Layout l = parse_layout(layout);
  for (auto [name, v] : {std::pair{"M", m}, std::pair{"N", n}, std::pair{"K", k}}) {
    if (v <= 0) throw Error(std::string(name) + " must be positive (got " + std::to_string(v) + ")");
    if (v > kMaxProblemDim)
      throw Error(std::string(name) + " is too large (got " + std::to_string(v) + ", at most 2^31-1)");
  }
  if (!a || !b || !d) throw Error(std::string(!a ? "A" : !b ? "B" : "D") + " must not be NULL");
  return l;
}

std::string kernel_limit(int64_t m, int64_t n, int64_t k, Layout layout, const void* a, const void* b, const void* d,
                         float beta) {
  try {
    check_problem(m, n, k, layout);
  } catch (const Error& e) {
    return e.what();
  }
  for (auto [name, p] : {std::pair{"A", a}, std::pair{"B", b}, std::pair{"D", d}})
    if (reinterpret_cast<uintptr_t>(p) % 16 != 0) return std::string(name) + " is not 16-byte aligned (TMA needs it)";
  if (beta != 0.0f) return "beta != 0 (the CUTLASS kernels have no C operand)";
  return "";
}

}  // namespace cks::rt
