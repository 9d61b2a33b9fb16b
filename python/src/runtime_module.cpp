// cks._runtime: the GEMM runtime's Python extension (used by cks.torch), over libcks_runtime.so
// through its header-only C++ wrapper (cks/runtime.hpp). A module of its own so that `import cks`
// never loads the CUDA runtime or cuBLASLt: only `import cks.torch` (after torch, whose CUDA
// libraries it then shares) loads this one. Operands and streams are raw addresses (ints); the
// caller (cks.torch) owns the memory. Errors: RuntimeError with the runtime's one line.
#include <nanobind/nanobind.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>

#include <cstdint>
#include <optional>
#include <string>

#include "cks/runtime.hpp"

namespace nb = nanobind;
using namespace nb::literals;

namespace {

using Text = std::optional<std::string>;
using Flag = std::optional<bool>;
using Count = std::optional<int>;

nb::dict query(const cks::Runtime& rt, int64_t m, int64_t n, int64_t k, const std::string& layout) {
  const cks::DispatchInfo i = rt.query(m, n, k, layout);
  nb::dict d;
  d["source"] = i.source;
  d["mode"] = i.mode;
  d["kernel_id"] = i.kernel_id;
  d["knobs"] = i.knobs;
  d["reason"] = i.reason;
  d["rank"] = i.rank;
  d["compile_pending"] = i.compile_pending;
  d["tuned_us"] = i.tuned_us;
  d["cublas_us"] = i.cublas_us;
  d["calls"] = i.calls;
  return d;
}

}  // namespace

NB_MODULE(_runtime, m) {
  m.doc() = "The GEMM runtime's C API (libcks_runtime.so); use cks.torch, not this module.";
  nb::class_<cks::Runtime>(m, "Runtime")
      // Options left as None keep the runtime's default (the environment variable, else built in).
      .def("__init__",
           [](cks::Runtime* self, const Text& mode, const Text& bundle_dir, const Text& model_path, const Text& tuning_file,
              const Text& kernel_cache, Flag compile_on_miss, Count compile_jobs, Count autotune_top, Count autotune_rounds,
              Count select_depth, Flag verbose, Flag strict, Count autotune_lt_algos, Count autotune_host_us,
              Count autotune_lt_margin_pct, Count autotune_lt_margin_us, Flag nondeterministic) {
             cks::RuntimeOptions o;
             if (mode) o.mode(*mode);
             if (bundle_dir) o.bundle_dir(*bundle_dir);
             if (model_path) o.model_path(*model_path);
             if (tuning_file) o.tuning_file(*tuning_file);
             if (kernel_cache) o.kernel_cache(*kernel_cache);
             if (compile_on_miss) o.compile_on_miss(*compile_on_miss);
             if (compile_jobs) o.compile_jobs(*compile_jobs);
             if (autotune_top) o.autotune_top(*autotune_top);
             if (autotune_rounds) o.autotune_rounds(*autotune_rounds);
             if (select_depth) o.select_depth(*select_depth);
             if (verbose) o.verbose(*verbose);
             if (strict) o.strict(*strict);
             if (autotune_lt_algos) o.autotune_lt_algos(*autotune_lt_algos);
             if (autotune_host_us) o.autotune_host_us(*autotune_host_us);
             if (autotune_lt_margin_pct) o.autotune_lt_margin_pct(*autotune_lt_margin_pct);
             if (autotune_lt_margin_us) o.autotune_lt_margin_us(*autotune_lt_margin_us);
             if (nondeterministic) o.nondeterministic(*nondeterministic);
             nb::gil_scoped_release unlocked;  // reads the bundle index and (autotune) the tuning file
             new (self) cks::Runtime(std::move(o));
           },
           nb::kw_only(), "mode"_a = nb::none(), "bundle_dir"_a = nb::none(), "model_path"_a = nb::none(),
           "tuning_file"_a = nb::none(), "kernel_cache"_a = nb::none(), "compile_on_miss"_a = nb::none(),
           "compile_jobs"_a = nb::none(), "autotune_top"_a = nb::none(), "autotune_rounds"_a = nb::none(),
           "select_depth"_a = nb::none(), "verbose"_a = nb::none(), "strict"_a = nb::none(),
           "autotune_lt_algos"_a = nb::none(), "autotune_host_us"_a = nb::none(),
           "autotune_lt_margin_pct"_a = nb::none(), "autotune_lt_margin_us"_a = nb::none(),
           "nondeterministic"_a = nb::none())
      // D (m x n, column-major) = alpha * A * B + beta * D in the layout's majors; a, b, d device
      // addresses, stream a cudaStream_t as an int (0: the legacy default stream).
      .def(
          "gemm",
          [](cks::Runtime& rt, int64_t m, int64_t n, int64_t k, const std::string& layout, uintptr_t a, uintptr_t b,
             uintptr_t d, float alpha, float beta, uintptr_t stream) {
            nb::gil_scoped_release unlocked;  // autotune's first call of a problem times candidates
            rt.gemm(m, n, k, layout, reinterpret_cast<const void*>(a), reinterpret_cast<const void*>(b),
                    reinterpret_cast<void*>(d), alpha, beta, reinterpret_cast<void*>(stream));
          },
          "m"_a, "n"_a, "k"_a, "layout"_a, "a"_a, "b"_a, "d"_a, "alpha"_a = 1.0f, "beta"_a = 0.0f, "stream"_a = 0)
      .def("query", &query, "m"_a, "n"_a, "k"_a, "layout"_a)
      .def_prop_rw("mode", &cks::Runtime::mode, &cks::Runtime::set_mode)
      .def(
          "wait_compiles",
          [](cks::Runtime& rt, double timeout_s) {
            nb::gil_scoped_release unlocked;
            return rt.wait_compiles(timeout_s);
          },
          "timeout_s"_a)
      .def("describe", &cks::Runtime::describe);
}
