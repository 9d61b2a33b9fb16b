// REAL nvcc compiles of tiny batches through the compile pool (minutes on a 2-core machine).
// Skipped when nvcc or the CUTLASS headers are absent; nothing here needs a GPU.
#include <dlfcn.h>
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>

#include "cks/compile.hpp"
#include "cks/kernel_lib_abi.h"
#include "compile/compile_test_util.hpp"

using namespace cks;
using namespace cks::compile_test;

namespace {

constexpr std::chrono::minutes kLimit{40};

// Skips the calling test unless a real toolchain is present.
#define REQUIRE_NVCC()                                                                          \
  do {                                                                                          \
    if (find_nvcc().empty()) GTEST_SKIP() << "nvcc not found (PATH, CUDA_HOME, /usr/local/cuda)"; \
    if (default_cutlass_dir().empty()) GTEST_SKIP() << "CUTLASS headers not found (scripts/setup.sh)"; \
  } while (0)

CompileOptions real_options(const ScratchDir& dir, int jobs) {
  CompileOptions o;
  o.cache_dir = dir.path() + "/cache";
  o.jobs = jobs;
  return o;
}

// Compiles one batch into one library with a fresh pool of one job (a test failure if it does not
// come back as exactly one library).
LibraryResult build_library(const ScratchDir& dir, const std::vector<KernelDesc>& batch) {
  CompilePool pool(real_options(dir, 1));
  pool.submit(batch);
  const auto libs = drain(pool, kLimit);
  EXPECT_EQ(libs.size(), 1u);
  return libs.empty() ? LibraryResult{} : libs[0];
}

std::string run(const std::string& cmd) {
  std::string out;
  if (FILE* p = popen(cmd.c_str(), "r")) {
    char buf[4096];
    while (size_t n = fread(buf, 1, sizeof buf, p)) out.append(buf, n);
    pclose(p);
  }
  return out;
}

}  // namespace

TEST(CompileNvcc, SmallBatchBuildsExportsTheAbiAndIsCached) {
  REQUIRE_NVCC();
  ScratchDir dir;
  const std::vector<KernelDesc> batch{
      KernelDesc::from_canonical("sm90_bf16_tn_128x128x64_1x1x1_s0_cooperative+tma_ws_cooperative+persistent"),
      KernelDesc::from_canonical("sm90_bf16_tn_64x128x64_1x1x1_s0_pingpong+no_smem+persistent"),
      // A swapped kernel: the transposed problem with a row-major D (TMA epilogue).
      KernelDesc::from_canonical("sm90_bf16_tn_64x144x64_1x1x1_s0_pingpong+tma_ws+persistent+swap")};
  const LibraryResult lib = build_library(dir, batch);
  ASSERT_FALSE(lib.kernels.empty());
  ASSERT_FALSE(lib.cached);
  ASSERT_TRUE(std::filesystem::exists(lib.lib_path)) << lib.lib_path;
  for (size_t i = 0; i < batch.size(); ++i) {
    const auto& k = lib.kernels[i];
    ASSERT_EQ(k.status, "ok") << k.error;
    EXPECT_EQ(k.index, static_cast<int>(i));
    EXPECT_GT(k.registers, 0) << "ptxas -v figures were not parsed for " << k.canonical;
    EXPECT_EQ(k.spill_store_bytes, 0);
    EXPECT_GT(k.compile_seconds, 0);
  }
  EXPECT_NE(run("nm -D '" + lib.lib_path + "'").find(" T cks_kernel_lib_get"), std::string::npos);

  // The library loads without a GPU (its CUDA runtime is linked statically and touches the driver
  // lazily), so the host side of the ABI can be exercised here.
  if (void* h = dlopen(lib.lib_path.c_str(), RTLD_NOW | RTLD_LOCAL)) {
    auto get = reinterpret_cast<const cks_kernel_lib* (*)()>(dlsym(h, "cks_kernel_lib_get"));
    ASSERT_NE(get, nullptr);
    const cks_kernel_lib* api = get();
    EXPECT_EQ(api->abi_version, CKS_KERNEL_LIB_ABI_VERSION);
    ASSERT_EQ(api->count(), 3);
    for (int i = 0; i < 3; ++i) {
      EXPECT_EQ(api->kernel_id(i), batch[static_cast<size_t>(i)].id());
      EXPECT_EQ(api->canonical(i), batch[static_cast<size_t>(i)].canonical());
    }
    EXPECT_EQ(api->kernel_id(3), nullptr);
    static char fake_buffer[256];  // never dereferenced by can_implement / workspace_size
    cks_problem p{};
    p.m = 16;
    p.n = 4096;
    p.k = 4096;
    p.A = p.B = p.D = fake_buffer;
    p.alpha = 1.0f;
    p.knobs = {0, 1, 0, 1};
    p.sm_count = 132;
    EXPECT_EQ(api->can_implement(0, &p), CKS_OK);
    EXPECT_EQ(api->can_implement(1, &p), CKS_OK);
    EXPECT_EQ(api->workspace_size(0, &p), 0u);  // persistent scheduler: no workspace
    EXPECT_EQ(api->can_implement(2, &p), CKS_OK);
    EXPECT_EQ(api->can_implement(5, &p), CKS_BAD_INDEX);
    // N is free in tn (no operand has it contiguous): both orientations take N = 4100, which the
    // swapped kernel runs as its M, with D^T row-major (N x M, rows of M = 16 elements).
    p.n = 4100;
    EXPECT_EQ(api->can_implement(0, &p), CKS_OK);
    EXPECT_EQ(api->can_implement(2, &p), CKS_OK);
    p.n = 4096;
    p.m = 4100;  // M is D's contiguous dimension in either orientation: neither can take it
    EXPECT_EQ(api->can_implement(0, &p), CKS_CANNOT_IMPLEMENT);
    EXPECT_EQ(api->can_implement(2, &p), CKS_CANNOT_IMPLEMENT);
    p.m = 16;
    p.k = 4100;  // rows of the K-major operands no longer 16-byte aligned: TMA cannot take them
    EXPECT_EQ(api->can_implement(0, &p), CKS_CANNOT_IMPLEMENT);
    p.k = 4096;
    p.knobs.splits = 2;  // split-K on a non-stream-K kernel: rejected, not ignored
    EXPECT_EQ(api->can_implement(0, &p), CKS_BAD_ARGUMENT);
    p.knobs = {0, 3, 0, 1};  // swizzle 3 does not exist
    EXPECT_EQ(api->can_implement(0, &p), CKS_BAD_ARGUMENT);
    cks_op op = nullptr;
    EXPECT_EQ(api->initialize(0, nullptr, nullptr, nullptr, &op), CKS_BAD_ARGUMENT);
    EXPECT_EQ(op, nullptr);
    dlclose(h);
  } else {
    ADD_FAILURE() << "dlopen failed: " << dlerror();
  }

  // A second pool finds the library in the cache: nothing is compiled again.
  const auto mtime = std::filesystem::last_write_time(lib.lib_path);
  CompilePool again(real_options(dir, 1));
  again.submit(batch);
  const auto libs = drain(again, std::chrono::seconds(30));
  ASSERT_EQ(libs.size(), 1u);
  EXPECT_TRUE(libs[0].cached);
  EXPECT_EQ(libs[0].lib_path, lib.lib_path);
  EXPECT_EQ(libs[0].kernels[1].registers, lib.kernels[1].registers);
  EXPECT_EQ(std::filesystem::last_write_time(lib.lib_path), mtime);
}

// A sliced-K kernel (KernelDesc::sliced) compiles through the same pool, and its host side takes
// split-K with S slices where S divides K into 16-byte aligned slices: the workspace holds the S
// FP32 partials (256-byte aligned) before CUTLASS's own part; other knobs are rejected.
TEST(CompileNvcc, SlicedKernelBuildsAndSizesItsPartials) {
  REQUIRE_NVCC();
  ScratchDir dir;
  const std::vector<KernelDesc> batch{
      KernelDesc::from_canonical("sm90_bf16_nt_64x32x128_1x1x1_s0_pingpong+no_smem+persistent+swap+slicek")};
  const LibraryResult lib = build_library(dir, batch);
  ASSERT_EQ(lib.kernels.size(), 1u);
  ASSERT_EQ(lib.kernels[0].status, "ok") << lib.kernels[0].error;
  EXPECT_EQ(lib.kernels[0].spill_store_bytes, 0);
  void* h = dlopen(lib.lib_path.c_str(), RTLD_NOW | RTLD_LOCAL);
  ASSERT_NE(h, nullptr) << dlerror();
  auto get = reinterpret_cast<const cks_kernel_lib* (*)()>(dlsym(h, "cks_kernel_lib_get"));
  ASSERT_NE(get, nullptr);
  const cks_kernel_lib* api = get();
  ASSERT_EQ(api->count(), 1);
  EXPECT_EQ(api->canonical(0), batch[0].canonical());
  static char fake_buffer[256];
  cks_problem p{};
  p.m = 32;
  p.n = 1536;
  p.k = 24576;
  p.A = p.B = p.D = fake_buffer;
  p.alpha = 1.0f;
  p.knobs = {1, 1, 2, 4, 0};  // along M, split-K into 4 slices
  p.sm_count = 132;
  EXPECT_EQ(api->can_implement(0, &p), CKS_OK);
  EXPECT_EQ(api->workspace_size(0, &p), 4u * 32 * 1536 * 4);  // the partials (persistent: no more)
  p.knobs.splits = 3;                                          // 24576 = 3 x 8192
  EXPECT_EQ(api->can_implement(0, &p), CKS_OK);
  EXPECT_EQ(api->workspace_size(0, &p), 3u * 32 * 1536 * 4);
  p.k = 8128;  // 8 slices of 1016; 16 slices of 508 are not 16-byte aligned
  p.knobs.splits = 8;
  EXPECT_EQ(api->can_implement(0, &p), CKS_OK);
  p.knobs.splits = 16;
  EXPECT_EQ(api->can_implement(0, &p), CKS_CANNOT_IMPLEMENT);
  EXPECT_EQ(api->workspace_size(0, &p), 0u);
  p.knobs = {1, 1, 0, 1, 0};  // no decomposition: a sliced-K kernel needs split-K
  EXPECT_EQ(api->can_implement(0, &p), CKS_BAD_ARGUMENT);
  p.knobs = {1, 1, 2, 4, 1};  // its reduction is deterministic only
  EXPECT_EQ(api->can_implement(0, &p), CKS_BAD_ARGUMENT);
  p.knobs = {1, 1, 2, 4, 0};
  p.m = p.n = 16384;  // 4 GiB of partials: not the kind of problem slicing is for
  EXPECT_EQ(api->can_implement(0, &p), CKS_CANNOT_IMPLEMENT);
  cks_op op = nullptr;
  p.m = 32;
  p.n = 1536;
  p.k = 24576;
  EXPECT_EQ(api->initialize(0, &p, nullptr, nullptr, &op), CKS_BAD_ARGUMENT);  // the partials need a workspace
  EXPECT_EQ(op, nullptr);
  dlclose(h);
}

TEST(CompileNvcc, BisectionAttributesAStaticAssertToItsKernel) {
  REQUIRE_NVCC();
  ScratchDir dir;
  const auto good = KernelDesc::from_canonical("sm90_bf16_tn_64x64x64_1x1x1_s0_pingpong+no_smem+persistent");
  // CUTLASS: "Ping-pong kernel does not currently support stream-K scheduler."
  const auto broken = KernelDesc::from_canonical("sm90_bf16_tn_64x128x64_1x1x1_s0_pingpong+no_smem+stream_k");
  CompilePool pool(real_options(dir, 2));
  pool.submit({good, broken});
  const auto libs = drain(pool, kLimit);
  const auto g = find_kernel(libs, good.id());
  const auto b = find_kernel(libs, broken.id());
  ASSERT_TRUE(g && b);
  EXPECT_EQ(g->first.status, "ok") << g->first.error;
  EXPECT_TRUE(std::filesystem::exists(g->first.lib_path));
  EXPECT_EQ(g->first.index, 0);  // alone in the library of its half
  EXPECT_GT(g->first.registers, 0);
  EXPECT_EQ(b->first.status, "compile_error");
  EXPECT_NE(b->first.error.find("stream-K"), std::string::npos) << b->first.error;
  EXPECT_TRUE(b->second.lib_path.empty());
}
