// libcks_runtime.so from the outside (no GPU here): it exports only the cks_* C API, a C program
// and a C++ program (the header-only wrapper cks/runtime.hpp) compile and link against it, and
// everything that needs no GPU works: options and environment, the bundle index, the tuning file's
// checks, modes, the query, and one clear error line for a GEMM when no CUDA device can be used.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "cks/kernel_lib_abi.h"
#include "common/subprocess.hpp"
#include "compile/compile_test_util.hpp"
#include "runtime/bundle.hpp"

namespace fs = std::filesystem;
using cks::RunOptions;
using cks::RunResult;
using cks::run_argv;

namespace {

const char* kCProgram = R"(#include <stdio.h>
#include <string.h>
#include <cks/runtime.h>

/* argv[1]: bundle folder, argv[2]: tuning file */
int main(int argc, char** argv) {
  cks_runtime_options o;
  cks_runtime_handle rt = NULL;
  cks_dispatch_info info;
  const char* mode = NULL;
  const char* json = NULL;
  static char buf[1024];
  if (argc < 3) return 2;
  cks_runtime_options_init(&o);
  o.bundle_dir = argv[1];
  o.tuning_file = argv[2];
  o.kernel_cache = "/nonexistent/cks-kernels";
  if (cks_runtime_create(&o, &rt) != 0) { printf("create-error %s\n", cks_runtime_last_error()); return 1; }
  if (cks_runtime_get_mode(rt, &mode) != 0) return 1;
  printf("mode %s\n", mode);
  if (cks_runtime_set_mode(rt, "fastest") == 0) return 1;
  printf("set-mode-error %s\n", cks_runtime_last_error());
  if (cks_runtime_set_mode(rt, "cublas") != 0) return 1;
  cks_runtime_get_mode(rt, &mode);
  printf("mode %s\n", mode);
  if (cks_runtime_query(rt, 4096, 4096, 4096, "tn", &info) != 0) return 1;
  printf("query %s %s\n", info.source, info.mode);
  if (cks_gemm(rt, 4096, 4096, 4096, "tn", NULL, buf, buf, 1.0f, 0.0f, NULL) == 0) return 1;
  printf("null-error %s\n", cks_runtime_last_error());
  if (cks_gemm(rt, 4096, 4096, 4096, "qq", buf, buf, buf, 1.0f, 0.0f, NULL) == 0) return 1;
  printf("layout-error %s\n", cks_runtime_last_error());
  if (cks_gemm(rt, 64, 64, 64, "tn", buf, buf, buf, 1.0f, 0.0f, NULL) == 0) return 1;
  printf("gemm-error %s\n", cks_runtime_last_error());
  if (cks_runtime_describe(rt, &json) != 0) return 1;
  printf("describe %s\n", json);
  if (cks_runtime_free(rt) != 0) return 1;
  if (cks_runtime_free(NULL) != 0) return 1;
  o.mode = "autotune";
  if (cks_runtime_create(&o, &rt) == 0) { printf("autotune-created\n"); cks_runtime_free(rt); return 0; }
  printf("autotune-error %s\n", cks_runtime_last_error());
  return 0;
}
)";

const char* kCxxProgram = R"(#include <cks/runtime.hpp>

#include <iostream>

int main(int argc, char** argv) {
  if (argc < 3) return 2;
  cks::RuntimeOptions o;
  o.bundle_dir(argv[1]).tuning_file(argv[2]).kernel_cache("/nonexistent/cks-kernels").mode("select").verbose(false);
  cks::Runtime rt(o);
  std::cout << "mode " << rt.mode() << "\n";
  const cks::DispatchInfo q = rt.query(16, 4096, 4096, "tn");
  std::cout << "query " << q.source << " " << q.mode << "\n";
  static char buf[1024];
  try {
    rt.gemm(64, 64, 64, "tn", buf, buf, buf);
    return 1;
  } catch (const cks::RuntimeError& e) {
    std::cout << "gemm-error " << e.what() << "\n";
  }
  try {
    rt.set_mode("fastest");
    return 1;
  } catch (const cks::RuntimeError& e) {
    std::cout << "set-mode-error " << e.what() << "\n";
  }
  cks::Runtime moved = std::move(rt);
  std::cout << "pending " << moved.wait_compiles(0.1) << "\n";
  return 0;
}
)";

RunResult run(const std::vector<std::string>& argv) {
  RunOptions o;
  o.stderr_to_output = true;
  return run_argv(argv, o);
}

std::string line_with(const std::string& text, const std::string& prefix) {
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);)
    if (line.rfind(prefix, 0) == 0) return line;
  return "";
}

// A bundle folder whose index names one library file (the runtime loads libraries only when a
// problem needs them; creating it reads the index and checks the files exist).
std::string fake_bundle(const std::string& dir) {
  cks::rt::BundleIndex b;
  b.cks_version = CKS_VERSION;
  b.abi_version = CKS_KERNEL_LIB_ABI_VERSION;
  b.model_path = "/m.json";
  b.model_hash = "0000000000000000";
  b.top = 1;
  const auto k = cks::KernelDesc::from_canonical("sm90_bf16_tn_128x128x64_1x1x1_s0_cooperative+tma_ws_cooperative+persistent");
  b.kernels[k.id()] = {k.id(), k.canonical(), "kernels/cks_0000000000000001.so", 0, ""};
  b.problems.push_back({cks::Layout::tn, 4096, 4096, 4096, {{1, k.id(), "r=h,s=1,d=h,k=1", 1.0, false}}});
  fs::create_directories(dir + "/kernels");
  std::ofstream(dir + "/kernels/cks_0000000000000001.so") << "not loaded here";
  b.write(dir);
  return dir;
}

}  // namespace

#ifdef CKS_HAVE_RUNTIME
// The options struct grew a field (nondeterministic, session 36): a program built against the
// earlier header calls the exported cks_runtime_options_init, which writes only the earlier struct
// (nothing past it), and cks_runtime_create accepts that struct_size; this header's macro passes
// sizeof(*o), so the new field is written and read.
constexpr const char* kOptionsAbiProgram = R"(#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <cks/runtime.h>

int main(void) {
  unsigned char buf[sizeof(cks_runtime_options) + 16];
  cks_runtime_options* o = (cks_runtime_options*)buf;
  const size_t first = offsetof(cks_runtime_options, nondeterministic);
  cks_runtime_handle rt = NULL;
  const char* json = NULL;
  size_t i, untouched = 0;
  memset(buf, 0xAB, sizeof buf);
  (cks_runtime_options_init)(o);
  for (i = first; i < sizeof buf; ++i) untouched += buf[i] == 0xAB;
  printf("old-init %u %d %d\n", (unsigned)(o->struct_size == first), (int)(untouched == sizeof buf - first),
         (int)o->strict);
  o->tuning_file = "/nonexistent/tuning.csv";
  o->kernel_cache = "/nonexistent/kernels";
  if (cks_runtime_create(o, &rt) != 0) { printf("old-create-error %s\n", cks_runtime_last_error()); return 1; }
  cks_runtime_describe(rt, &json);
  printf("old-describe %s\n", strstr(json, "\"nondeterministic\":false") ? "deterministic" : json);
  cks_runtime_free(rt);
  cks_runtime_options_init(o);
  printf("new-init %u %d\n", (unsigned)(o->struct_size == sizeof(cks_runtime_options)), (int)o->nondeterministic);
  o->tuning_file = "/nonexistent/tuning.csv";
  o->kernel_cache = "/nonexistent/kernels";
  o->nondeterministic = 1;
  if (cks_runtime_create(o, &rt) != 0) { printf("new-create-error %s\n", cks_runtime_last_error()); return 1; }
  cks_runtime_describe(rt, &json);
  printf("new-describe %s\n", strstr(json, "\"nondeterministic\":true") ? "nondeterministic" : json);
  cks_runtime_free(rt);
  return 0;
}
)";

TEST(RuntimeLibrary, OptionsOfAnEarlierHeaderAreStillRead) {
  cks::compile_test::ScratchDir dir;
  std::ofstream(dir.path() + "/abi.c") << kOptionsAbiProgram;
  const RunResult cc = run({"cc", "-std=c99", "-Wall", "-Wextra", "-pedantic", "-Werror", "-I" CKS_SOURCE_DIR "/include",
                            dir.path() + "/abi.c", "-o", dir.path() + "/abi", "-L" CKS_BUILD_DIR "/lib",
                            "-Wl,-rpath," CKS_BUILD_DIR "/lib", "-lcks_runtime"});
  ASSERT_TRUE(cc.ok()) << cc.output;
  const RunResult r = run({"env", "-u", "CKS_NONDETERMINISTIC", "-u", "CKS_MODE", dir.path() + "/abi"});
  ASSERT_TRUE(r.ok()) << r.output;
  EXPECT_EQ(line_with(r.output, "old-init "), "old-init 1 1 -1") << r.output;
  EXPECT_EQ(line_with(r.output, "old-describe "), "old-describe deterministic") << r.output;
  EXPECT_EQ(line_with(r.output, "new-init "), "new-init 1 -1") << r.output;
  EXPECT_EQ(line_with(r.output, "new-describe "), "new-describe nondeterministic") << r.output;
}

TEST(RuntimeLibrary, ExportsOnlyTheCApi) {
  const std::string lib = CKS_BUILD_DIR "/lib/libcks_runtime.so";
  ASSERT_TRUE(fs::exists(lib));
  const RunResult nm = run({"nm", "-D", "--defined-only", lib});
  ASSERT_TRUE(nm.ok()) << nm.output;
  std::istringstream syms(nm.output);
  std::set<std::string> names;
  for (std::string line; std::getline(syms, line);) {
    const std::string name = line.substr(line.rfind(' ') + 1);
    if (name.empty() || name.find('@') != std::string::npos) continue;
    names.insert(name);
    EXPECT_EQ(name.rfind("cks_", 0), 0u) << "exported: " << line;
  }
  for (const char* f : {"cks_runtime_options_init", "cks_runtime_options_init_size", "cks_runtime_create", "cks_runtime_free", "cks_runtime_set_mode",
                        "cks_runtime_get_mode", "cks_gemm", "cks_runtime_query", "cks_runtime_wait_compiles",
                        "cks_runtime_describe", "cks_runtime_last_error"})
    EXPECT_TRUE(names.count(f)) << f;
  // libcks.so's selector API stays in libcks.so (the runtime uses it, does not re-export it).
  EXPECT_FALSE(names.count("cks_selector_create"));
  const RunResult deps = run({"sh", "-c", "objdump -p \"$0\" | grep NEEDED", lib});
  if (deps.started && deps.ok()) {
    EXPECT_NE(deps.output.find("libcks.so.0"), std::string::npos) << deps.output;
    EXPECT_NE(deps.output.find("libcublasLt.so"), std::string::npos) << deps.output;
    EXPECT_NE(deps.output.find("libcudart.so"), std::string::npos) << deps.output;
  }
}

TEST(RuntimeLibrary, CAndCxxProgramsLinkAndRunWithoutAGpu) {
  cks::compile_test::ScratchDir dir;
  const std::string bundle = fake_bundle(dir.path() + "/bundle");
  const std::string tuning = dir.path() + "/tuning.csv";
  std::ofstream(dir.path() + "/app.c") << kCProgram;
  std::ofstream(dir.path() + "/app.cpp") << kCxxProgram;
  const std::string inc = "-I" CKS_SOURCE_DIR "/include", lib = "-L" CKS_BUILD_DIR "/lib", rpath = "-Wl,-rpath," CKS_BUILD_DIR "/lib";
  const RunResult cc = run({"cc", "-std=c99", "-Wall", "-Wextra", "-pedantic", "-Werror", inc, dir.path() + "/app.c", "-o",
                            dir.path() + "/app_c", lib, rpath, "-lcks_runtime"});
  ASSERT_TRUE(cc.ok()) << cc.output;
  const RunResult cxx = run({"c++", "-std=c++17", "-Wall", "-Wextra", "-Werror", inc, dir.path() + "/app.cpp", "-o",
                             dir.path() + "/app_cpp", lib, rpath, "-lcks_runtime"});
  ASSERT_TRUE(cxx.ok()) << cxx.output;

  // CKS_MODE set to nonsense: the API's explicit options do not say a mode in the C program.
  const RunResult bad_env = run({"env", "CKS_MODE=fast", dir.path() + "/app_c", bundle, tuning});
  EXPECT_EQ(line_with(bad_env.output, "create-error "),
            "create-error $CKS_MODE: unknown mode 'fast' (expected select, autotune or cublas)") << bad_env.output;

  std::ofstream(tuning) << "gpu,cks_version,model_hash,layout,m,n,k,winner,knobs,us,cublas_us\nNVIDIA H200,0.1.0\n";
  const RunResult c = run({"env", "-u", "CKS_MODE", dir.path() + "/app_c", bundle, tuning});
  ASSERT_TRUE(c.ok()) << c.output;
  EXPECT_EQ(line_with(c.output, "mode "), "mode select") << c.output;
  EXPECT_EQ(line_with(c.output, "set-mode-error "), "set-mode-error unknown mode 'fastest' (expected select, autotune or cublas)");
  EXPECT_NE(c.output.find("mode cublas"), std::string::npos);
  EXPECT_EQ(line_with(c.output, "query "), "query none cublas");
  EXPECT_EQ(line_with(c.output, "null-error "), "null-error A must not be NULL");
  EXPECT_EQ(line_with(c.output, "layout-error "), "layout-error unknown layout 'qq' (expected tn, nt, nn or tt)");
  // No GPU (or no driver) here: one line from the CUDA runtime, not a crash.
  const std::string gemm = line_with(c.output, "gemm-error ");
  EXPECT_NE(gemm.find("cudaGetDevice: cudaError"), std::string::npos) << c.output;
  const std::string describe = line_with(c.output, "describe ");
  EXPECT_NE(describe.find("\"bundle_problems\":1"), std::string::npos) << describe;
  EXPECT_NE(describe.find("\"mode\":\"cublas\""), std::string::npos) << describe;
  EXPECT_NE(describe.find("\"autotune_lt_algos\":4"), std::string::npos) << describe;
  EXPECT_NE(describe.find("\"autotune_host_us\":0"), std::string::npos) << describe;
  // Autotune reads the tuning file at create: a damaged one is one line naming the file and line.
  EXPECT_EQ(line_with(c.output, "autotune-error "),
            "autotune-error " + tuning + ":2: 2 fields, expected 11 (gpu,cks_version,model_hash,layout,m,n,k,winner,knobs,us,cublas_us) or 12 (with lt_algo)")
      << c.output;

  const RunResult cpp = run({"env", "-u", "CKS_MODE", dir.path() + "/app_cpp", bundle, tuning});
  ASSERT_TRUE(cpp.ok()) << cpp.output;
  EXPECT_EQ(line_with(cpp.output, "mode "), "mode select");
  EXPECT_EQ(line_with(cpp.output, "query "), "query none select");
  EXPECT_NE(line_with(cpp.output, "gemm-error ").find("cudaGetDevice: cudaError"), std::string::npos) << cpp.output;
  EXPECT_EQ(line_with(cpp.output, "set-mode-error "), "set-mode-error unknown mode 'fastest' (expected select, autotune or cublas)");
  EXPECT_EQ(line_with(cpp.output, "pending "), "pending 0");

  // A bundle folder without an index is refused at create.
  const RunResult no_bundle = run({"env", "-u", "CKS_MODE", dir.path() + "/app_c", dir.path(), tuning});
  EXPECT_EQ(line_with(no_bundle.output, "create-error "),
            "create-error bundle '" + dir.path() + "' has no index.json (build it with cks bundle)") << no_bundle.output;
}
#endif
