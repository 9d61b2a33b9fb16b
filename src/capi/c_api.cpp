// The C API (cks/c_api.h). Exceptions are caught at the boundary by API_BEGIN / API_END (the
// pattern of XGBoost's c_api) and turned into -1 plus a thread-local message.
#include "cks/c_api.h"

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>

#include "cks/common.hpp"
#include "cks/selector.hpp"
#include "capi/api_guard.hpp"

struct cks_selector {
  cks::Selector selector;
};

namespace {

thread_local std::string g_last_error;
thread_local std::string g_data_path;

void set_error(const char* what) { g_last_error = what ? what : "unknown error"; }

// Copies src into a fixed-size C string field; throws when it does not fit.
template <size_t N>
void copy_field(char (&dst)[N], const std::string& src, const char* field) {
  if (src.size() >= N) throw cks::Error(std::string("internal: ") + field + " longer than the C API field");
  std::memcpy(dst, src.c_str(), src.size() + 1);
}

void require(const void* p, const char* what) {
  if (!p) throw cks::Error(std::string(what) + " must not be NULL");
}

}  // namespace

extern "C" {

int cks_selector_create_with(const char* model_path, const char* orientations, cks_selector_handle* out) {
  API_BEGIN
  require(out, "out");
  *out = nullptr;
  const std::string path = model_path ? model_path : cks::Selector::default_model_path();
  cks::SelectorOptions o;
  if (orientations) {
    o.orientations = cks::parse_orientations(orientations, "orientations");
  } else if (const char* env = std::getenv("CKS_ORIENTATIONS"); env && *env) {
    o.orientations = cks::parse_orientations(env, "$CKS_ORIENTATIONS");
  }
  *out = new cks_selector{cks::Selector(path, o)};
  API_END
}

int cks_selector_create(const char* model_path, cks_selector_handle* out) {
  return cks_selector_create_with(model_path, nullptr, out);
}

int cks_selector_create_static(cks_selector_handle* out) {
  API_BEGIN
  require(out, "out");
  *out = nullptr;
  *out = new cks_selector{cks::Selector::static_score(cks::default_hw())};
  API_END
}

int cks_selector_free(cks_selector_handle handle) {
  API_BEGIN
  delete handle;
  API_END
}

int cks_selector_select(cks_selector_handle handle, int64_t m, int64_t n, int64_t k, const char* layout, uint32_t top_k,
                        cks_selection* results, uint32_t* out_count) {
  API_BEGIN
  require(handle, "handle");
  require(layout, "layout");
  require(out_count, "out_count");
  *out_count = 0;
  if (top_k > 0) require(results, "results");
  const cks::Problem p{m, n, k, cks::parse_layout(layout)};
  cks::check_problem(p);  // the CLI's check and message (cks/catalogue.hpp)
  const cks::Ranking ranking = handle->selector.select(p, top_k);
  for (size_t i = 0; i < ranking.size(); ++i) {
    const cks::Selection& s = ranking[i];
    const cks::KernelDesc d = cks::selected_kernel(s, p.layout);  // a swapped pick's twin included
    cks_selection& r = results[i];
    copy_field(r.kernel_id, s.kernel_id, "kernel_id");
    copy_field(r.knobs, s.knobs_text, "knobs");
    copy_field(r.canonical, s.canonical, "canonical");
    r.score = s.score;
    r.tile_m = d.tm;
    r.tile_n = d.tn;
    r.tile_k = d.tk;
    r.cluster_m = d.cm;
    r.cluster_n = d.cn;
    r.stages = d.stages;
  }
  *out_count = static_cast<uint32_t>(ranking.size());
  API_END
}

const char* cks_last_error(void) { return g_last_error.c_str(); }

const char* cks_version(void) { return CKS_VERSION; }

int cks_data_path(const char* what, const char** out) {
  API_BEGIN
  require(what, "what");
  require(out, "out");
  *out = nullptr;
  const std::string w = what;
  if (w == "model") {
    g_data_path = cks::Selector::default_model_path();
    if (!std::filesystem::is_regular_file(g_data_path)) throw cks::Error("no default model (" + g_data_path + " missing)");
  } else if (w == "hw_presets") {
    g_data_path = cks::hw_presets_path();
  } else {
    throw cks::Error("unknown data file '" + w + "' (expected model or hw_presets)");
  }
  *out = g_data_path.c_str();
  API_END
}

}  // extern "C"
