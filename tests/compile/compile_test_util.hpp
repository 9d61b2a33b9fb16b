// Helpers shared by the compile-pool tests.
#pragma once
#include <stdlib.h>
#include <sys/stat.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "cks/compile.hpp"

namespace cks::compile_test {

class ScratchDir {
 public:
  ScratchDir() {
    std::string tmpl = std::filesystem::temp_directory_path().string() + "/cks_compile_XXXXXX";
    if (!mkdtemp(tmpl.data())) throw std::runtime_error("mkdtemp failed");
    path_ = tmpl;
  }
  ~ScratchDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

inline void write_executable(const std::string& path, const std::string& text) {
  std::ofstream(path) << text;
  chmod(path.c_str(), 0755);
}

// A scratch area with a fake CUTLASS tree and a fake nvcc: a shell script that "compiles" any
// TU in milliseconds, prints ptxas lines for its kernels, and fails TUs holding a kernel it was
// told is broken. Each compile is logged to `calls`.
class FakeNvcc {
 public:
  // TUs containing `broken` fail like a static_assert, TUs containing `killed` die of SIGKILL,
  // TUs containing `slow` take a minute.
  explicit FakeNvcc(const std::string& broken = "", const std::string& killed = "", const std::string& slow = "") {
    std::filesystem::create_directories(dir_.path() + "/cutlass/include/cutlass");
    std::ofstream(dir_.path() + "/cutlass/include/cutlass/cutlass.h") << "// fake\n";
    const std::string script = R"(#!/bin/sh
out=""; src=""
while [ $# -gt 0 ]; do
  case "$1" in
    --version) echo "Cuda compilation tools, release 13.0, V13.0.88"; exit 0 ;;
    -o) out="$2"; shift 2 ;;
    *.cu) src="$1"; shift ;;
    *) shift ;;
  esac
done
echo "$src" >> ")" + calls() + R"("
if [ -n ")" + killed + R"(" ] && grep -qF ")" + killed + R"(" "$src"; then kill -9 $$; fi
if [ -n ")" + slow + R"(" ] && grep -qF ")" + slow + R"(" "$src"; then sleep 60; fi
if [ -n ")" + broken + R"(" ] && grep -qF ")" + broken + R"(" "$src"; then
  echo "$src(42): error: static assertion failed with \"fake broken kernel\""
  exit 2
fi
for id in $(grep -o 'namespace cks_k[0-9a-f]*' "$src" | sed 's/namespace cks_//'); do
  f="_ZN7cutlass13device_kernelIN21cks_${id}11Gemm_kernelEEEvNT_6ParamsE"
  echo "ptxas info    : Compiling entry function '$f' for 'sm_90a'"
  echo "ptxas info    : Function properties for $f"
  echo "    0 bytes stack frame, 8 bytes spill stores, 4 bytes spill loads"
  echo "ptxas info    : Used 168 registers, used 1 barriers"
done
echo "fake library" > "$out"
)";
    write_executable(nvcc(), script);
  }
  std::string nvcc() const { return dir_.path() + "/nvcc"; }
  std::string calls() const { return dir_.path() + "/calls.txt"; }
  int n_calls() const {
    std::ifstream in(calls());
    int n = 0;
    for (std::string l; std::getline(in, l);) ++n;
    return n;
  }
  CompileOptions options(int kernels_per_tu = 8) const {
    CompileOptions o;
    o.nvcc = nvcc();
    o.cutlass_dir = dir_.path() + "/cutlass";
    o.cache_dir = dir_.path() + "/cache";
    o.jobs = 2;
    o.kernels_per_tu = kernels_per_tu;
    return o;
  }

 private:
  ScratchDir dir_;
};

// Every result the pool hands out until nothing is pending (fails the test after `limit`).
inline std::vector<LibraryResult> drain(CompilePool& pool, std::chrono::seconds limit) {
  std::vector<LibraryResult> out;
  const auto deadline = std::chrono::steady_clock::now() + limit;
  while (pool.pending() > 0) {
    if (std::chrono::steady_clock::now() > deadline) throw std::runtime_error("compile pool did not finish in time");
    if (auto r = pool.next(std::chrono::milliseconds(200))) out.push_back(std::move(*r));
  }
  return out;
}

// The compile record of one kernel among the results.
inline std::optional<std::pair<KernelCompileInfo, LibraryResult>> find_kernel(const std::vector<LibraryResult>& libs,
                                                                              const std::string& id) {
  for (const auto& l : libs)
    for (const auto& k : l.kernels)
      if (k.kernel_id == id) return std::make_pair(k, l);
  return std::nullopt;
}

}  // namespace cks::compile_test
