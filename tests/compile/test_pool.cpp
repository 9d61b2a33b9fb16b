// The compile pool's logic (cache, bisection, memos, TU split, job sizing) against the fake nvcc
// of compile_test_util.hpp.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <set>
#include <thread>

#include "cks/common.hpp"
#include "compile/cache.hpp"
#include "compile/compile_test_util.hpp"

using namespace cks;
using namespace cks::compile_test;

namespace {

KernelDesc kernel(int tn, const char* sched = "persistent") {
  return KernelDesc::from_canonical("sm90_bf16_tn_128x" + std::to_string(tn) + "x64_1x1x1_s0_cooperative+tma_ws_cooperative+" +
                                    sched);
}

constexpr std::chrono::seconds kLimit{60};

}  // namespace

TEST(CompilePool, CompilesOnceThenReusesTheCachedLibrary) {
  FakeNvcc fake;
  const std::vector<KernelDesc> batch{kernel(128), kernel(256)};
  {
    CompilePool pool(fake.options());
    pool.submit(batch);
    const auto libs = drain(pool, kLimit);
    ASSERT_EQ(libs.size(), 1u);
    const LibraryResult& lib = libs[0];
    EXPECT_FALSE(lib.cached);
    EXPECT_EQ(lib.lib_hash, library_hash(batch, fake.options()));
    EXPECT_EQ(std::filesystem::path(lib.lib_path).filename(), "cks_" + lib.lib_hash + ".so");
    EXPECT_TRUE(std::filesystem::exists(lib.lib_path));
    ASSERT_EQ(lib.kernels.size(), 2u);
    for (int i = 0; i < 2; ++i) {
      const auto& k = lib.kernels[static_cast<size_t>(i)];
      EXPECT_EQ(k.kernel_id, batch[static_cast<size_t>(i)].id());
      EXPECT_EQ(k.status, "ok");
      EXPECT_EQ(k.index, i);
      EXPECT_EQ(k.lib_path, lib.lib_path);
      EXPECT_EQ(k.registers, 168);
      EXPECT_EQ(k.spill_store_bytes, 8);
      EXPECT_EQ(k.spill_load_bytes, 4);
    }
  }
  EXPECT_EQ(fake.n_calls(), 1);
  CompilePool again(fake.options());  // a new process would see the same cache
  again.submit(batch);
  const auto libs = drain(again, kLimit);
  ASSERT_EQ(libs.size(), 1u);
  EXPECT_TRUE(libs[0].cached);
  EXPECT_EQ(libs[0].kernels[1].registers, 168);
  EXPECT_EQ(fake.n_calls(), 1);
}

// A carried cache (issue 20): the next lease groups kernels into other translation units, yet
// every kernel already built in some library is served from it; only the others are compiled.
TEST(CompilePool, ServesEachCachedKernelWhateverTuItWasBuiltIn) {
  FakeNvcc fake;
  {
    CompilePool pool(fake.options());
    pool.submit({kernel(128), kernel(256)});
    ASSERT_EQ(drain(pool, kLimit).size(), 1u);
  }
  ASSERT_EQ(fake.n_calls(), 1);
  const std::string first_lib = compile::library_file(fake.options().cache_dir, library_hash({kernel(128), kernel(256)},
                                                                                     fake.options()));
  CompilePool pool(fake.options());
  pool.submit({kernel(192), kernel(256)});  // another TU: 256 is cached inside {128, 256}, 192 is new
  const auto libs = drain(pool, kLimit);
  EXPECT_EQ(fake.n_calls(), 2);
  ASSERT_EQ(libs.size(), 2u);
  const auto k256 = find_kernel(libs, kernel(256).id());
  const auto k192 = find_kernel(libs, kernel(192).id());
  ASSERT_TRUE(k256 && k192);
  EXPECT_EQ(k256->first.lib_path, std::filesystem::absolute(first_lib).lexically_normal().string());
  EXPECT_EQ(k256->first.index, 1);
  EXPECT_EQ(k256->first.registers, 168);
  EXPECT_TRUE(k256->second.cached);
  EXPECT_FALSE(k192->second.cached);
  EXPECT_NE(k192->first.lib_path, k256->first.lib_path);

  // Other flags or versions change every kernel's key: nothing is served across them.
  CompileOptions other = fake.options();
  other.cutlass_version = "other";
  CompilePool again(other);
  again.submit({kernel(256)});
  const auto rebuilt = drain(again, kLimit);
  ASSERT_EQ(rebuilt.size(), 1u);
  EXPECT_FALSE(rebuilt[0].cached);
  EXPECT_EQ(fake.n_calls(), 3);
}

// A caller serves the cached kernels first and cuts only the rest into translation units (the
// collector does, so a plan half served by a carried cache still compiles full TUs).
TEST(CompilePool, TakeCachedServesCachedKernelsBeforeTheRestIsCut) {
  FakeNvcc fake;
  {
    CompilePool pool(fake.options());
    pool.submit({kernel(64), kernel(128)});
    pool.submit({kernel(192), kernel(256)});
    ASSERT_EQ(drain(pool, kLimit).size(), 2u);
  }
  ASSERT_EQ(fake.n_calls(), 2);
  CompileOptions o = fake.options();
  o.kernels_per_tu = 2;
  CompilePool pool(o);
  const std::vector<KernelDesc> wanted{kernel(64), kernel(96), kernel(256), kernel(160)};
  const std::vector<bool> served = pool.take_cached(wanted);
  EXPECT_EQ(served, (std::vector<bool>{true, false, true, false}));
  EXPECT_EQ(pool.pending(), 2u);  // one cached result per library holding a served kernel
  pool.submit({kernel(96), kernel(160)});  // the rest: one full TU, not two TUs of one kernel
  const auto libs = drain(pool, kLimit);
  EXPECT_EQ(fake.n_calls(), 3);
  ASSERT_EQ(libs.size(), 3u);
  for (const auto& k : wanted) {
    const auto found = find_kernel(libs, k.id());
    ASSERT_TRUE(found) << k.canonical();
    EXPECT_EQ(found->second.cached, k.tn != 96 && k.tn != 160) << k.canonical();
  }
}

TEST(CompilePool, BisectsAFailingTuDownToTheBrokenKernel) {
  const std::vector<KernelDesc> batch{kernel(64), kernel(128), kernel(192), kernel(256)};
  const std::string broken = batch[2].canonical();
  FakeNvcc fake(broken);
  auto check = [&](const std::vector<LibraryResult>& libs, bool cached) {
    // Two libraries ({64, 128} and {256}) and one result holding the compile error.
    EXPECT_EQ(libs.size(), 3u);
    std::set<std::string> lib_paths;
    for (size_t i = 0; i < batch.size(); ++i) {
      const auto found = find_kernel(libs, batch[i].id());
      ASSERT_TRUE(found) << batch[i].canonical();
      const auto& [k, lib] = *found;
      EXPECT_EQ(lib.cached, cached);
      if (i == 2) {
        EXPECT_EQ(k.status, "compile_error");
        EXPECT_NE(k.error.find("static assertion failed"), std::string::npos) << k.error;
        EXPECT_TRUE(lib.lib_path.empty());
      } else {
        EXPECT_EQ(k.status, "ok");
        EXPECT_EQ(k.lib_path, lib.lib_path);
        EXPECT_TRUE(std::filesystem::exists(k.lib_path));
        lib_paths.insert(k.lib_path);
      }
    }
    EXPECT_EQ(lib_paths.size(), 2u);
    EXPECT_EQ(find_kernel(libs, batch[1].id())->first.index, 1);  // second of {64, 128}
    EXPECT_EQ(find_kernel(libs, batch[3].id())->first.index, 0);  // alone in its library
  };
  {
    CompilePool pool(fake.options());
    pool.submit(batch);
    check(drain(pool, kLimit), false);
  }
  // {64,128,192,256} fails -> {64,128} ok, {192,256} fails -> {192} fails, {256} ok.
  EXPECT_EQ(fake.n_calls(), 5);
  CompilePool again(fake.options());
  again.submit(batch);
  check(drain(again, kLimit), true);  // the bisected TU is memoized: nothing is compiled again
  EXPECT_EQ(fake.n_calls(), 5);
}

TEST(CompilePool, AKilledCompilerIsReportedButNotMemoized) {
  const KernelDesc k = kernel(128);
  FakeNvcc fake("", k.canonical());
  for (int attempt = 1; attempt <= 2; ++attempt) {
    CompilePool pool(fake.options());
    pool.submit({k});
    const auto libs = drain(pool, kLimit);
    ASSERT_EQ(libs.size(), 1u);
    EXPECT_EQ(libs[0].kernels[0].status, "compile_error");
    EXPECT_NE(libs[0].kernels[0].error.find("signal 9"), std::string::npos) << libs[0].kernels[0].error;
    EXPECT_EQ(fake.n_calls(), attempt);  // compiled again: an OOM kill says nothing about the kernel
  }
}

TEST(CompilePool, DestructionStopsRunningCompilers) {
  const KernelDesc k = kernel(128);
  FakeNvcc fake("", "", k.canonical());
  const auto t0 = std::chrono::steady_clock::now();
  {
    CompilePool pool(fake.options());
    pool.submit({k});
    while (fake.n_calls() == 0) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }  // kills the compiler's process group instead of waiting a minute for it
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(20));
  EXPECT_FALSE(std::filesystem::exists(compile::sidecar_file(fake.options().cache_dir, library_hash({k}, fake.options()))));
}

TEST(CompilePool, CutsBatchesIntoTranslationUnits) {
  FakeNvcc fake;
  CompilePool pool(fake.options(2));
  pool.submit({kernel(64), kernel(128), kernel(192), kernel(256), kernel(64, "stream_k")});
  EXPECT_GE(pool.pending(), 1u);
  const auto libs = drain(pool, kLimit);
  ASSERT_EQ(libs.size(), 3u);
  size_t kernels = 0;
  for (const auto& l : libs) {
    EXPECT_LE(l.kernels.size(), 2u);
    kernels += l.kernels.size();
  }
  EXPECT_EQ(kernels, 5u);
  EXPECT_EQ(pool.pending(), 0u);
  EXPECT_FALSE(pool.next(std::chrono::milliseconds(0)));  // nothing pending: returns at once
}

TEST(CompilePool, SizesJobsByMemory) {
  FakeNvcc fake;
  CompileOptions o = fake.options(2);
  o.jobs = 0;
  o.mem_per_job_gb = 0.75;
  o.mem_limit_gb = 1.5;  // one TU of 2 kernels at a time
  EXPECT_EQ(CompilePool(o).jobs(), 1);
  o.mem_limit_gb = 1000;
  EXPECT_EQ(CompilePool(o).jobs(), static_cast<int>(std::max(1u, std::thread::hardware_concurrency())));
  o.jobs = 3;
  EXPECT_EQ(CompilePool(o).jobs(), 3);
}

TEST(CompilePool, RejectsBadInputWithClearErrors) {
  FakeNvcc fake;
  CompileOptions o = fake.options();
  o.nvcc = "/nonexistent/nvcc";
  EXPECT_THROW(CompilePool{o}, Error);
  o = fake.options();
  o.cutlass_dir = "/nonexistent/cutlass";
  EXPECT_THROW(CompilePool{o}, Error);
  o = fake.options();
  o.kernels_per_tu = 0;
  EXPECT_THROW(CompilePool{o}, Error);
  CompilePool pool(fake.options());
  EXPECT_THROW(pool.submit({}), Error);
  EXPECT_THROW(pool.submit({kernel(128), kernel(128)}), Error);
}

TEST(CompilePool, LibraryHashCoversContentNotPaths) {
  FakeNvcc fake;
  const CompileOptions o = fake.options();
  const std::vector<KernelDesc> ab{kernel(64), kernel(128)}, ba{kernel(128), kernel(64)};
  EXPECT_EQ(library_hash(ab, o).size(), 16u);
  EXPECT_NE(library_hash(ab, o), library_hash(ba, o));  // the index of each kernel changes
  CompileOptions other = o;
  other.cache_dir = "/elsewhere";
  other.cutlass_dir = "/elsewhere/cutlass";
  EXPECT_EQ(library_hash(ab, o), library_hash(ab, other));
  other.cuda_version = "13.1.0";
  EXPECT_NE(library_hash(ab, o), library_hash(ab, other));
  other = o;
  other.extra_flags = {"-lineinfo"};
  EXPECT_NE(library_hash(ab, o), library_hash(ab, other));
}
