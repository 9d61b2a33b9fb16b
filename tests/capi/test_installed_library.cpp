// The installed library (issue 17, item 1): `cmake --install` into a scratch prefix outside the
// source tree, then a C program and a C++ program that know only the prefix (-I<prefix>/include
// -L<prefix>/lib -lcks; find_package(cks); pkg-config cks) select the top 3 of 4096^3 tn with the
// installed default model. They run with an empty environment, in a scratch working directory and,
// where a mount namespace is allowed (unshare), with the source tree hidden under an empty tmpfs:
// whatever they read, they read from the prefix. Where it is not allowed, strace (when present)
// checks that no file under the source tree is opened. ctest runs these as one test, label
// `install` (about a minute on 2 cores: the install copies the 23 MB model, each run loads it).
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "common/subprocess.hpp"
#include "compile/compile_test_util.hpp"

namespace fs = std::filesystem;
using cks::RunOptions;
using cks::RunResult;
using cks::run_argv;

namespace {

const char* kCProgram = R"(#include <stdio.h>
#include <cks/c_api.h>

int main(void) {
  const char* path = NULL;
  cks_selector_handle h = NULL;
  cks_selection top[3];
  uint32_t n = 0, i;
  printf("version %s\n", cks_version());
  if (cks_data_path("model", &path) != 0) { fprintf(stderr, "model: %s\n", cks_last_error()); return 1; }
  printf("model %s\n", path);
  if (cks_data_path("hw_presets", &path) != 0) { fprintf(stderr, "presets: %s\n", cks_last_error()); return 1; }
  printf("hw_presets %s\n", path);
  if (cks_selector_create(NULL, &h) != 0) { fprintf(stderr, "create: %s\n", cks_last_error()); return 1; }
  if (cks_selector_select(h, 4096, 4096, 4096, "tn", 3, top, &n) != 0) {
    fprintf(stderr, "select: %s\n", cks_last_error());
    return 1;
  }
  for (i = 0; i < n; ++i) printf("pick %u %s %s %s\n", i + 1, top[i].kernel_id, top[i].knobs, top[i].canonical);
  if (cks_selector_select(h, 4096, 4096, 4095, "tn", 3, top, &n) == 0) return 1; /* K not a multiple of 8 */
  printf("error %s\n", cks_last_error());
  return cks_selector_free(h);
}
)";

const char* kCxxProgram = R"(#include <cks/c_api.h>

#include <iostream>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

int main() {
  const char* path = nullptr;
  std::cout << "version " << cks_version() << "\n";
  if (cks_data_path("model", &path) != 0) throw std::runtime_error(cks_last_error());
  std::cout << "model " << path << "\n";
  if (cks_data_path("hw_presets", &path) != 0) throw std::runtime_error(cks_last_error());
  std::cout << "hw_presets " << path << "\n";
  cks_selector_handle raw = nullptr;
  if (cks_selector_create(nullptr, &raw) != 0) throw std::runtime_error(cks_last_error());
  std::unique_ptr<cks_selector, int (*)(cks_selector_handle)> h(raw, cks_selector_free);
  std::vector<cks_selection> top(3);
  uint32_t n = 0;
  if (cks_selector_select(h.get(), 4096, 4096, 4096, "tn", 3, top.data(), &n) != 0) throw std::runtime_error(cks_last_error());
  for (uint32_t i = 0; i < n; ++i)
    std::cout << "pick " << i + 1 << " " << top[i].kernel_id << " " << top[i].knobs << " " << top[i].canonical << "\n";
  if (cks_selector_select(h.get(), 4096, 4096, 4095, "tn", 3, top.data(), &n) == 0) return 1;
  std::cout << "error " << cks_last_error() << "\n";
  return 0;
}
)";

const char* kConsumerCMake = R"(cmake_minimum_required(VERSION 3.16)
project(cks_consumer LANGUAGES CXX)
find_package(cks 0.1 REQUIRED)
add_executable(app_cmake app.cpp)
target_link_libraries(app_cmake PRIVATE cks::cks)
if(cks_HAVE_RUNTIME)
  add_executable(app_runtime_cmake app_runtime.cpp)
  target_link_libraries(app_runtime_cmake PRIVATE cks::runtime)
endif()
)";

// The GEMM runtime from the prefix (no GPU needed): create it with explicit files (the isolated
// environment has no HOME), see which model it found, switch modes.
const char* kRuntimeCProgram = R"(#include <stdio.h>
#include <cks/runtime.h>

int main(int argc, char** argv) {
  cks_runtime_options o;
  cks_runtime_handle rt = NULL;
  const char* json = NULL;
  if (argc < 2) return 2;
  cks_runtime_options_init(&o);
  o.tuning_file = argv[1];
  o.kernel_cache = argv[1];
  if (cks_runtime_create(&o, &rt) != 0) { fprintf(stderr, "create: %s\n", cks_runtime_last_error()); return 1; }
  if (cks_runtime_set_mode(rt, "cublas") != 0) return 1;
  if (cks_runtime_describe(rt, &json) != 0) return 1;
  printf("runtime %s\n", json);
  return cks_runtime_free(rt);
}
)";

const char* kRuntimeCxxProgram = R"(#include <cks/runtime.hpp>
#include <iostream>

int main() {
  cks::Runtime rt(cks::RuntimeOptions().tuning_file("/tmp/x.csv").kernel_cache("/tmp/x").mode("cublas"));
  std::cout << "runtime-cxx " << rt.mode() << "\n";
  return 0;
}
)";

std::string slurp(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

RunResult run(const std::vector<std::string>& argv) {
  RunOptions o;
  o.stderr_to_output = true;
  return run_argv(argv, o);
}

bool has_tool(const std::string& name) { return run({"sh", "-c", "command -v " + name + " >/dev/null"}).ok(); }

// The lines of `text` that start with `prefix`.
std::vector<std::string> lines_with(const std::string& text, const std::string& prefix) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);)
    if (line.rfind(prefix, 0) == 0) out.push_back(line);
  return out;
}

// How the programs run: an empty environment (PATH and LD_LIBRARY_PATH only), in `work`, and the
// source tree hidden (unshare + tmpfs) or traced (strace), whichever this machine allows.
struct Isolation {
  std::string how;                  // "hidden", "traced" or "environment only"
  std::vector<std::string> wrapper;  // argv prefix
  std::string trace_file;
};

Isolation isolation(const std::string& prefix, const std::string& work) {
  const std::string src = fs::canonical(CKS_SOURCE_DIR).string();
  const std::vector<std::string> env{"env", "-i", "-C", work, "PATH=/usr/bin:/bin", "LD_LIBRARY_PATH=" + prefix + "/lib"};
  // unshare -r -m: a private mount namespace (as root in a user namespace when not root); the
  // source tree is covered by an empty tmpfs before the program starts.
  const std::string hide = "mount -t tmpfs cks-hidden \"$1\" && shift && exec \"$@\"";
  if (has_tool("unshare")) {
    const RunResult probe = run({"unshare", "-r", "-m", "sh", "-c", hide, "sh", src, "sh", "-c", "test ! -e \"$0\"",
                                 src + "/CMakeLists.txt"});
    if (probe.ok()) {
      Isolation i{"hidden", env, ""};
      for (const char* a : {"unshare", "-r", "-m", "sh", "-c"}) i.wrapper.push_back(a);
      i.wrapper.insert(i.wrapper.end(), {hide, "sh", src});
      return i;
    }
  }
  if (has_tool("strace")) {
    Isolation i{"traced", env, work + "/trace.txt"};
    i.wrapper.insert(i.wrapper.end(), {"strace", "-f", "-qq", "-A", "-e", "trace=%file", "-o", i.trace_file});
    return i;
  }
  return {"environment only", env, ""};
}

RunResult run_isolated(const Isolation& iso, const std::vector<std::string>& argv) {
  std::vector<std::string> full = iso.wrapper;
  full.insert(full.end(), argv.begin(), argv.end());
  return run(full);
}

// Checks one program's output: the installed data, three picks equal to `expected` (when given).
void check_program_output(const std::string& name, const std::string& out, const std::string& prefix,
                          std::vector<std::string>& picks) {
  SCOPED_TRACE(name);
  EXPECT_EQ(lines_with(out, "version ").size(), 1u) << out;
  ASSERT_EQ(lines_with(out, "model ").size(), 1u) << out;
  EXPECT_EQ(lines_with(out, "model ")[0], "model " + prefix + "/share/cks/models/default.json");
  ASSERT_EQ(lines_with(out, "hw_presets ").size(), 1u) << out;
  EXPECT_EQ(lines_with(out, "hw_presets ")[0], "hw_presets " + prefix + "/share/cks/hw/presets.json");
  const auto got = lines_with(out, "pick ");
  ASSERT_EQ(got.size(), 3u) << out;
  for (size_t i = 0; i < got.size(); ++i)
    EXPECT_TRUE(got[i].rfind("pick " + std::to_string(i + 1) + " k", 0) == 0) << got[i];
  EXPECT_EQ(lines_with(out, "error K must be a multiple of 8").size(), 1u) << out;
  if (picks.empty()) picks = got;
  EXPECT_EQ(got, picks) << "the programs disagree";
}

}  // namespace

TEST(InstalledLibrary, CAndCxxProgramsLinkOnlyTheInstalledLibrary) {
  if (!fs::exists(CKS_BUILD_DIR "/lib/libcks.so")) GTEST_SKIP() << "built without libcks.so (-DCKS_BUILD_LIBRARY=OFF)";
  const auto t0 = std::chrono::steady_clock::now();
  cks::compile_test::ScratchDir scratch;
  const std::string base = fs::canonical(scratch.path()).string();
  const std::string src = fs::canonical(CKS_SOURCE_DIR).string();
  ASSERT_NE(base.rfind(src, 0), 0u) << "the scratch prefix must lie outside the source tree";
  const std::string prefix = base + "/prefix", work = base + "/work";
  fs::create_directories(work);

  // 1. cmake --install (the build tree's library, binaries, header, data, CMake and pkg-config files).
  const RunResult install = run({"cmake", "--install", CKS_BUILD_DIR, "--prefix", prefix});
  ASSERT_TRUE(install.ok()) << install.output;
  for (const char* f : {"bin/cks", "bin/cks-worker", "include/cks/c_api.h", "share/cks/models/default.json",
                        "share/cks/hw/presets.json", "share/cks/shapes/llm_models.json", "lib/cmake/cks/cksConfig.cmake",
                        "lib/cmake/cks/cksConfigVersion.cmake", "lib/cmake/cks/cksTargets.cmake", "lib/pkgconfig/cks.pc"})
    EXPECT_TRUE(fs::exists(prefix + "/" + f)) << f;
  ASSERT_TRUE(fs::exists(prefix + "/lib/libcks.so"));
#ifdef CKS_HAVE_RUNTIME
  for (const char* f : {"lib/libcks_runtime.so", "lib/libcks_runtime.so.0", "include/cks/runtime.h", "include/cks/runtime.hpp",
                        "include/cks/kernel_lib_abi.h", "lib/pkgconfig/cks-runtime.pc", "bin/cks_runtime_bench"})
    EXPECT_TRUE(fs::exists(prefix + "/" + f)) << f;
#endif
  EXPECT_TRUE(fs::is_symlink(prefix + "/lib/libcks.so"));  // -> libcks.so.0 -> libcks.so.<version>
  EXPECT_TRUE(fs::exists(prefix + "/lib/libcks.so.0"));
  EXPECT_TRUE(fs::exists(prefix + "/lib/libcks.so." CKS_VERSION));

  // 2. Only the C API is exported.
  const RunResult nm = run({"nm", "-D", "--defined-only", prefix + "/lib/libcks.so"});
  ASSERT_TRUE(nm.ok()) << nm.output;
  std::vector<std::string> exported;
  std::istringstream syms(nm.output);
  for (std::string line; std::getline(syms, line);) {
    const std::string name = line.substr(line.rfind(' ') + 1);
    if (name.empty() || name.find('@') != std::string::npos) continue;
    exported.push_back(name);
    EXPECT_EQ(name.rfind("cks_", 0), 0u) << "exported: " << line;
  }
  for (const char* f : {"cks_selector_create", "cks_selector_create_static", "cks_selector_free", "cks_selector_select",
                        "cks_last_error", "cks_version", "cks_data_path"})
    EXPECT_NE(std::find(exported.begin(), exported.end(), f), exported.end()) << f;
  const RunResult soname = run({"sh", "-c", "objdump -p \"$0\" | grep SONAME", prefix + "/lib/libcks.so"});
  if (soname.started && soname.ok()) {
    EXPECT_NE(soname.output.find("libcks.so.0"), std::string::npos) << soname.output;
  }

  // 3. Build the consumers knowing only the prefix.
  std::ofstream(work + "/app.c") << kCProgram;
  std::ofstream(work + "/app.cpp") << kCxxProgram;
  const std::string inc = "-I" + prefix + "/include", lib = "-L" + prefix + "/lib";
  const RunResult cc = run({"cc", "-std=c99", "-Wall", "-Wextra", "-pedantic", "-Werror", inc, work + "/app.c", "-o",
                            work + "/app_c", lib, "-lcks"});
  ASSERT_TRUE(cc.ok()) << cc.output;
  std::vector<std::string> cxx_flags{inc, lib, "-lcks"};
  std::string cxx_how = "plain flags";
  if (has_tool("pkg-config")) {
    const RunResult pc = run({"env", "PKG_CONFIG_PATH=" + prefix + "/lib/pkgconfig", "pkg-config", "--cflags", "--libs", "cks"});
    ASSERT_TRUE(pc.ok()) << pc.output;
    EXPECT_NE(pc.output.find("-lcks"), std::string::npos) << pc.output;
    std::istringstream words(pc.output);
    cxx_flags.clear();
    for (std::string w; words >> w;) cxx_flags.push_back(w);
    cxx_how = "pkg-config";
  }
  std::vector<std::string> cxx{"c++", "-std=c++17", "-Wall", "-Wextra", "-Werror", work + "/app.cpp", "-o", work + "/app_cpp"};
  cxx.insert(cxx.end(), cxx_flags.begin(), cxx_flags.end());
  const RunResult cxx_build = run(cxx);
  ASSERT_TRUE(cxx_build.ok()) << cxx_how << ": " << cxx_build.output;
  fs::create_directories(work + "/consumer");
  std::ofstream(work + "/consumer/CMakeLists.txt") << kConsumerCMake;
  fs::copy_file(work + "/app.cpp", work + "/consumer/app.cpp");
  std::ofstream(work + "/consumer/app_runtime.cpp") << kRuntimeCxxProgram;  // built when cks_HAVE_RUNTIME
  const RunResult configure = run({"env", "-u", "CKS_MODEL", "-u", "CKS_DATA_DIR", "cmake", "-S", work + "/consumer", "-B",
                                   work + "/consumer/build", "-DCMAKE_BUILD_TYPE=Release", "-DCMAKE_PREFIX_PATH=" + prefix});
  ASSERT_TRUE(configure.ok()) << configure.output;
  const RunResult build = run({"cmake", "--build", work + "/consumer/build"});
  ASSERT_TRUE(build.ok()) << build.output;
#ifdef CKS_HAVE_RUNTIME
  // The runtime: a C program with plain flags, pkg-config cks-runtime, the CMake target above.
  std::ofstream(work + "/app_runtime.c") << kRuntimeCProgram;
  const RunResult rcc = run({"cc", "-std=c99", "-Wall", "-Wextra", "-pedantic", "-Werror", inc, work + "/app_runtime.c", "-o",
                             work + "/app_runtime_c", lib, "-lcks_runtime"});
  ASSERT_TRUE(rcc.ok()) << rcc.output;
  if (has_tool("pkg-config")) {
    const RunResult pc = run({"env", "PKG_CONFIG_PATH=" + prefix + "/lib/pkgconfig", "pkg-config", "--cflags", "--libs", "cks-runtime"});
    ASSERT_TRUE(pc.ok()) << pc.output;
    EXPECT_NE(pc.output.find("-lcks_runtime"), std::string::npos) << pc.output;
  }
  EXPECT_TRUE(fs::exists(work + "/consumer/build/app_runtime_cmake")) << "find_package(cks) did not offer cks::runtime";
#endif

  // 4. Run them (and the installed cks) isolated from the source tree.
  const Isolation iso = isolation(prefix, work);
  std::printf("isolation of the installed programs: %s; C++ program built with %s\n", iso.how.c_str(), cxx_how.c_str());
  std::vector<std::string> picks;
  for (const std::string prog : {"app_c", "app_cpp", "consumer/build/app_cmake"}) {
    const RunResult r = run_isolated(iso, {work + "/" + prog});
    ASSERT_TRUE(r.ok()) << prog << ": " << r.output;
    check_program_output(prog, r.output, prefix, picks);
  }
  for (const auto& p : picks) std::printf("%s\n", p.c_str());
#ifdef CKS_HAVE_RUNTIME
  {
    const RunResult r = run_isolated(iso, {work + "/app_runtime_c", work});
    ASSERT_TRUE(r.ok()) << r.output;
    EXPECT_NE(r.output.find("\"model\":\"" + prefix + "/share/cks/models/default.json\""), std::string::npos) << r.output;
    EXPECT_NE(r.output.find("\"mode\":\"cublas\""), std::string::npos) << r.output;
    const RunResult cxx_rt = run_isolated(iso, {work + "/consumer/build/app_runtime_cmake"});
    ASSERT_TRUE(cxx_rt.ok()) << cxx_rt.output;
    EXPECT_NE(cxx_rt.output.find("runtime-cxx cublas"), std::string::npos) << cxx_rt.output;
  }
#endif
  const RunResult cli = run_isolated(iso, {prefix + "/bin/cks", "select", "--m", "4096", "--n", "4096", "--k", "4096",
                                           "--layout", "tn", "--top", "3", "--format", "csv"});
  ASSERT_TRUE(cli.ok()) << cli.output;
  for (const auto& p : picks) {  // "pick N <id> <knobs> <canonical>": the same rows in the CLI's csv
    std::istringstream w(p);
    std::string word, rank, id, knobs, canonical;
    w >> word >> rank >> id >> knobs >> canonical;
    // csv quotes the knobs (they hold commas).
    EXPECT_NE(cli.output.find(rank + "," + id + "," + canonical + ",\"" + knobs + "\","), std::string::npos) << cli.output;
  }
  if (iso.how == "traced") {
    const std::string trace = slurp(iso.trace_file);
    EXPECT_FALSE(trace.empty());
    EXPECT_EQ(trace.find(src + "/"), std::string::npos) << "a program touched the source tree";
  }
  std::printf("install + 3 builds + 4 runs: %.1f s\n",
              std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
}
