// cks/runtime.hpp — a thin C++ wrapper over the GEMM runtime's C API (cks/runtime.h), header only:
// RAII for the handle, exceptions (cks::RuntimeError, one line) for the -1 returns.
//
//   cks::RuntimeOptions o;
//   o.bundle_dir("/opt/bundles/llm").mode("autotune");
//   cks::Runtime rt(o);
//   rt.gemm(m, n, k, "tn", A, B, D, 1.0f, 0.0f, stream);   // stream: a cudaStream_t (or nullptr)
//   cks::DispatchInfo what = rt.query(m, n, k, "tn");      // what.source: "bundle", "tuned", ...
//
// The wrapper adds no state: every call is the C function of the same name. Link -lcks_runtime
// (CMake: cks::runtime; pkg-config: cks-runtime).
#pragma once
#include <cstdint>
#include <stdexcept>
#include <string>

#include "cks/runtime.h"

namespace cks {

class RuntimeError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

namespace detail {
inline void runtime_check(int rc) {
  if (rc != 0) throw RuntimeError(cks_runtime_last_error());
}
}  // namespace detail

// cks_runtime_options with setters; strings are copied, so temporaries are fine.
class RuntimeOptions {
 public:
  RuntimeOptions() { cks_runtime_options_init(&o_); }
  RuntimeOptions& mode(std::string v) { return set(mode_, std::move(v)); }
  RuntimeOptions& bundle_dir(std::string v) { return set(bundle_, std::move(v)); }
  RuntimeOptions& model_path(std::string v) { return set(model_, std::move(v)); }
  RuntimeOptions& tuning_file(std::string v) { return set(tuning_, std::move(v)); }
  RuntimeOptions& kernel_cache(std::string v) { return set(cache_, std::move(v)); }
  RuntimeOptions& compile_on_miss(bool v) { o_.compile_on_miss = v ? 1 : 0; return *this; }
  RuntimeOptions& compile_jobs(int v) { o_.compile_jobs = v; return *this; }
  RuntimeOptions& autotune_top(int v) { o_.autotune_top = v; return *this; }
  RuntimeOptions& autotune_rounds(int v) { o_.autotune_rounds = v; return *this; }
  RuntimeOptions& autotune_lt_algos(int v) { o_.autotune_lt_algos = v; return *this; }
  RuntimeOptions& autotune_host_us(int v) { o_.autotune_host_us = v; return *this; }
  RuntimeOptions& autotune_lt_margin_pct(int v) { o_.autotune_lt_margin_pct = v; return *this; }
  RuntimeOptions& autotune_lt_margin_us(int v) { o_.autotune_lt_margin_us = v; return *this; }
  RuntimeOptions& select_depth(int v) { o_.select_depth = v; return *this; }
  RuntimeOptions& verbose(bool v) { o_.verbose = v ? 1 : 0; return *this; }
  RuntimeOptions& strict(bool v) { o_.strict = v ? 1 : 0; return *this; }
  RuntimeOptions& nondeterministic(bool v) { o_.nondeterministic = v ? 1 : 0; return *this; }
  // The C struct, its strings pointing into this object.
  const cks_runtime_options* get() {
    o_.mode = mode_.set ? mode_.value.c_str() : nullptr;
    o_.bundle_dir = bundle_.set ? bundle_.value.c_str() : nullptr;
    o_.model_path = model_.set ? model_.value.c_str() : nullptr;
    o_.tuning_file = tuning_.set ? tuning_.value.c_str() : nullptr;
    o_.kernel_cache = cache_.set ? cache_.value.c_str() : nullptr;
    return &o_;
  }

 private:
  struct Text {
    bool set = false;
    std::string value;
  };
  RuntimeOptions& set(Text& t, std::string v) {
    t.set = true;
    t.value = std::move(v);
    return *this;
  }
  cks_runtime_options o_;
  Text mode_, bundle_, model_, tuning_, cache_;
};

struct DispatchInfo {
  std::string source, mode, kernel_id, knobs, reason;
  int rank = 0;
  bool compile_pending = false;
  double tuned_us = 0, cublas_us = 0;
  uint64_t calls = 0;
};

class Runtime {
 public:
  Runtime() : Runtime(RuntimeOptions()) {}
  explicit Runtime(RuntimeOptions options) { detail::runtime_check(cks_runtime_create(options.get(), &h_)); }
  ~Runtime() { cks_runtime_free(h_); }
  Runtime(const Runtime&) = delete;
  Runtime& operator=(const Runtime&) = delete;
  Runtime(Runtime&& o) noexcept : h_(o.h_) { o.h_ = nullptr; }
  Runtime& operator=(Runtime&& o) noexcept {
    if (this != &o) {
      cks_runtime_free(h_);
      h_ = o.h_;
      o.h_ = nullptr;
    }
    return *this;
  }

  // D (m x n, column-major, bf16) = alpha * A * B + beta * D in `layout`'s majors, on `stream`.
  void gemm(int64_t m, int64_t n, int64_t k, const std::string& layout, const void* a, const void* b, void* d,
            float alpha = 1.0f, float beta = 0.0f, void* stream = nullptr) {
    detail::runtime_check(cks_gemm(h_, m, n, k, layout.c_str(), a, b, d, alpha, beta, stream));
  }
  void set_mode(const std::string& mode) { detail::runtime_check(cks_runtime_set_mode(h_, mode.c_str())); }
  std::string mode() const {
    const char* m = nullptr;
    detail::runtime_check(cks_runtime_get_mode(h_, &m));
    return m;
  }
  DispatchInfo query(int64_t m, int64_t n, int64_t k, const std::string& layout) const {
    cks_dispatch_info i{};
    detail::runtime_check(cks_runtime_query(h_, m, n, k, layout.c_str(), &i));
    return {i.source, i.mode, i.kernel_id, i.knobs, i.reason, i.rank, i.compile_pending != 0, i.tuned_us, i.cublas_us, i.calls};
  }
  // Waits up to timeout_s for background compiles; the number still running.
  int wait_compiles(double timeout_s) {
    int32_t pending = 0;
    detail::runtime_check(cks_runtime_wait_compiles(h_, timeout_s, &pending));
    return pending;
  }
  std::string describe() const {
    const char* j = nullptr;
    detail::runtime_check(cks_runtime_describe(h_, &j));
    return j;
  }
  cks_runtime_handle handle() const { return h_; }

 private:
  cks_runtime_handle h_ = nullptr;
};

}  // namespace cks
