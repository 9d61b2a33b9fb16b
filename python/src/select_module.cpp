// cks._cks: the selector's Python extension (python/cks/__init__.py wraps it), over the C API of
// libcks.so (cks/c_api.h) and nothing else, so that `import cks` needs neither CUDA nor torch.
// A Handle owns one cks_selector_handle (the model stays loaded); select() returns plain tuples that
// cks.Selection turns into frozen dataclasses. Errors carry the C API's one line: RuntimeError when
// a selector cannot be created, ValueError when a problem is refused (cks::check_problem's message).
#include <nanobind/nanobind.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "cks/c_api.h"

namespace nb = nanobind;
using namespace nb::literals;

namespace {

class Handle {
 public:
  // model: a model file; nullopt: the shipped default model; static_score: no model at all.
  Handle(const std::optional<std::string>& model, bool static_score) {
    int rc = 0;
    {
      nb::gil_scoped_release unlocked;  // loading the model takes a while
      rc = static_score ? cks_selector_create_static(&h_) : cks_selector_create(model ? model->c_str() : nullptr, &h_);
    }
    if (rc != 0) throw nb::builtin_exception(nb::exception_type::runtime_error, cks_last_error());
  }
  ~Handle() { cks_selector_free(h_); }
  Handle(const Handle&) = delete;
  Handle& operator=(const Handle&) = delete;

  // The best min(top, candidates) candidates, best first, as tuples (kernel_id, knobs, canonical,
  // score, tile_m, tile_n, tile_k, cluster_m, cluster_n, stages).
  nb::list select(int64_t m, int64_t n, int64_t k, const std::string& layout, uint64_t top) const {
    std::vector<cks_selection> out;
    uint32_t count = 0;
    int rc = 0;
    {
      nb::gil_scoped_release unlocked;
      // The C API fills at most top_k entries and returns fewer when the catalogue has fewer
      // candidates: grow the buffer only while it comes back full.
      uint64_t room = std::min<uint64_t>(top, 1024);
      while (true) {
        out.resize(room);
        rc = cks_selector_select(h_, m, n, k, layout.c_str(), static_cast<uint32_t>(room), out.data(), &count);
        if (rc != 0 || count < room) break;
        const uint64_t more = std::min<uint64_t>({top, room * 8, UINT32_MAX});
        if (more == room) break;
        room = more;
      }
    }
    if (rc != 0) throw nb::value_error(cks_last_error());
    nb::list result;
    for (uint32_t i = 0; i < count; ++i) {
      const cks_selection& s = out[i];
      result.append(nb::make_tuple(s.kernel_id, s.knobs, s.canonical, s.score, s.tile_m, s.tile_n, s.tile_k,
                                   s.cluster_m, s.cluster_n, s.stages));
    }
    return result;
  }

 private:
  cks_selector_handle h_ = nullptr;
};

// cks_data_path: the file the library reads for `what` ("model" or "hw_presets").
std::string data_path(const std::string& what) {
  const char* path = nullptr;
  if (cks_data_path(what.c_str(), &path) != 0) throw nb::value_error(cks_last_error());
  return path;
}

}  // namespace

NB_MODULE(_cks, m) {
  m.doc() = "The kernel selector's C API (libcks.so); use the cks package, not this module.";
  nb::class_<Handle>(m, "Handle")
      .def(nb::init<const std::optional<std::string>&, bool>(), "model"_a = nb::none(), "static_score"_a = false)
      .def("select", &Handle::select, "m"_a, "n"_a, "k"_a, "layout"_a, "top"_a);
  m.def("version", [] { return std::string(cks_version()); });
  m.def("data_path", &data_path, "what"_a);
}
