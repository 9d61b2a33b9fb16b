// The GEMM runtime's C API (include/cks/runtime.h): the one ABI boundary of libcks_runtime.so.
// Exceptions stop here (API_BEGIN / API_END, src/capi/api_guard.hpp) and become -1 plus a
// thread-local one-line message.
#include "cks/runtime.h"

#include <algorithm>
#include <cstddef>
#include <cstring>
#include <memory>
#include <string>

#include "capi/api_guard.hpp"
#include "cks/common.hpp"
#include "runtime/gpu/engine.hpp"
#include "runtime/options.hpp"

struct cks_runtime {
  std::unique_ptr<cks::rt::Engine> engine;
};

namespace {

thread_local std::string g_last_error;
thread_local std::string g_describe;

void set_error(const char* what) { g_last_error = cks::one_line(what ? what : "unknown error"); }

void require(const void* p, const char* what) {
  if (!p) throw cks::Error(std::string(what) + " must not be NULL");
}

cks::rt::Engine& engine(cks_runtime_handle h) {
  require(h, "handle");
  return *h->engine;
}

}  // namespace

extern "C" {

void cks_runtime_options_init_size(cks_runtime_options* options, uint32_t size) {
  if (!options) return;
  cks_runtime_options full;
  cks::rt::init_options(&full);
  size = std::min<uint32_t>(size, sizeof full);
  std::memcpy(static_cast<void*>(options), &full, size);
  if (size >= sizeof(uint32_t)) options->struct_size = size;
}

// Parenthesized: the header's function-like macro of the same name does not apply.
void(cks_runtime_options_init)(cks_runtime_options* options) {
  cks_runtime_options_init_size(options, offsetof(cks_runtime_options, nondeterministic));
}

int cks_runtime_create(const cks_runtime_options* options, cks_runtime_handle* out) {
  API_BEGIN
  require(out, "out");
  *out = nullptr;
  auto engine = std::make_unique<cks::rt::Engine>(cks::rt::resolve_config(options, cks::rt::process_env()));
  *out = new cks_runtime{std::move(engine)};
  API_END
}

int cks_runtime_free(cks_runtime_handle handle) {
  API_BEGIN
  delete handle;
  API_END
}

int cks_runtime_set_mode(cks_runtime_handle handle, const char* mode) {
  API_BEGIN
  require(mode, "mode");
  engine(handle).set_mode(cks::rt::parse_mode(mode));
  API_END
}

int cks_runtime_get_mode(cks_runtime_handle handle, const char** mode) {
  API_BEGIN
  require(mode, "mode");
  *mode = nullptr;
  static const std::string names[] = {"select", "autotune", "cublas"};
  *mode = names[static_cast<int>(engine(handle).mode())].c_str();
  API_END
}

int cks_gemm(cks_runtime_handle handle, int64_t m, int64_t n, int64_t k, const char* layout, const void* A,
             const void* B, void* D, float alpha, float beta, void* stream) {
  API_BEGIN
  cks::rt::Engine& e = engine(handle);
  const cks::Layout l = cks::rt::check_call(m, n, k, layout, A, B, D);
  e.gemm(m, n, k, l, A, B, D, alpha, beta, static_cast<cudaStream_t>(stream));
  API_END
}

int cks_runtime_query(cks_runtime_handle handle, int64_t m, int64_t n, int64_t k, const char* layout,
                      cks_dispatch_info* out) {
  API_BEGIN
  require(out, "out");
  cks::rt::Engine& e = engine(handle);
  static const int dummy = 0;
  const cks::Layout l = cks::rt::check_call(m, n, k, layout, &dummy, &dummy, &dummy);
  *out = e.query(m, n, k, l);
  API_END
}

int cks_runtime_wait_compiles(cks_runtime_handle handle, double timeout_s, int32_t* pending) {
  API_BEGIN
  const int left = engine(handle).wait_compiles(timeout_s);
  if (pending) *pending = left;
  API_END
}

int cks_runtime_describe(cks_runtime_handle handle, const char** json) {
  API_BEGIN
  require(json, "json");
  *json = nullptr;
  g_describe = engine(handle).describe();
  *json = g_describe.c_str();
  API_END
}

const char* cks_runtime_last_error(void) { return g_last_error.c_str(); }

}  // extern "C"
