// The runtime's compile cache (runtime/compile_service.hpp) against the fake nvcc of
// compile_test_util.hpp: a miss compiles in the background, a later service (another process)
// finds the kernel in the cache folder at once, and a compile error is reported, not retried.
#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>

#include "compile/compile_test_util.hpp"
#include "runtime/compile_service.hpp"

using namespace cks;
using namespace cks::rt;
using namespace cks::compile_test;
using State = CompileService::State;

namespace {

KernelDesc kernel(int tn) {
  return KernelDesc::from_canonical("sm90_bf16_tn_128x" + std::to_string(tn) + "x64_1x1x1_s0_cooperative+tma_ws_cooperative+persistent");
}

CompileService::Options options(const FakeNvcc& fake) {
  CompileService::Options o;
  o.cache_dir = fake.options().cache_dir;
  o.nvcc = fake.nvcc();
  o.cutlass_dir = fake.options().cutlass_dir;
  return o;
}

}  // namespace

TEST(CompileService, MissCompilesInTheBackgroundThenHits) {
  FakeNvcc fake;
  EXPECT_EQ(CompileService::unavailable(options(fake)), "");
  const KernelDesc k = kernel(128);
  {
    CompileService cs(options(fake));
    EXPECT_EQ(cs.status(k.id()).state, State::pending);  // never requested
    const uint64_t g0 = cs.generation();
    const auto first = cs.request(k);
    EXPECT_EQ(first.state, State::pending);
    ASSERT_TRUE(cs.wait_idle(std::chrono::seconds(60)));
    EXPECT_GT(cs.generation(), g0);
    const auto done = cs.status(k.id());
    ASSERT_EQ(done.state, State::ready) << done.error;
    EXPECT_TRUE(std::filesystem::exists(done.where.lib_path));
    EXPECT_EQ(done.where.index, 0);
    EXPECT_EQ(cs.request(k).state, State::ready);  // no second compile
    EXPECT_EQ(cs.pending(), 0);
  }
  EXPECT_EQ(fake.n_calls(), 1);
  // A new process: the kernel is in the cache folder, found by its own key within the request.
  CompileService again(options(fake));
  const auto hit = again.request(k);
  EXPECT_EQ(hit.state, State::ready);
  EXPECT_EQ(fake.n_calls(), 1);
}

TEST(CompileService, CompileErrorsAreReportedOnce) {
  const KernelDesc bad = kernel(256);
  FakeNvcc fake(bad.id());
  CompileService cs(options(fake));
  EXPECT_EQ(cs.request(bad).state, State::pending);
  ASSERT_TRUE(cs.wait_idle(std::chrono::seconds(60)));
  const auto st = cs.status(bad.id());
  ASSERT_EQ(st.state, State::failed);
  EXPECT_NE(st.error.find("compile of " + bad.id() + " failed"), std::string::npos) << st.error;
  EXPECT_EQ(st.error.find('\n'), std::string::npos);
  EXPECT_EQ(cs.request(bad).state, State::failed);
  EXPECT_EQ(fake.n_calls(), 1);
}

TEST(CompileService, UnavailableWithoutNvccOrCutlass) {
  CompileService::Options o;
  o.cache_dir = "/tmp/unused";
  o.nvcc = "/nonexistent/nvcc";
  EXPECT_EQ(CompileService::unavailable(o), "nvcc not found (PATH, CUDA_HOME or /usr/local/cuda)");
  FakeNvcc fake;
  o.nvcc = fake.nvcc();
  o.cutlass_dir = "/nonexistent/cutlass";
  EXPECT_EQ(CompileService::unavailable(o), "the CUTLASS headers were not found (set CKS_CUTLASS_DIR to the CUTLASS root)");
  // A pool that cannot start fails the request with its reason (no crash, no thread).
  CompileService cs(o);
  const auto st = cs.request(kernel(128));
  EXPECT_EQ(st.state, State::failed);
  EXPECT_NE(st.error.find("the compile cache could not start"), std::string::npos) << st.error;
}
