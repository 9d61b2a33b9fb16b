// `cks codegen` and `cks build` end to end (the build against the fake nvcc).
#include <gtest/gtest.h>

#include <filesystem>

#include "cks/catalogue.hpp"
#include "compile/compile_test_util.hpp"
#include "shapes/cli_run.hpp"

using namespace cks;
using namespace cks::compile_test;
using cks::test::count_lines;
using cks::test::run_cks;

namespace {

const std::string kCoop = "sm90_bf16_tn_128x128x64_1x1x1_s0_cooperative+tma_ws_cooperative+persistent";
const std::string kPing = "sm90_bf16_tn_64x128x64_1x1x1_s0_pingpong+no_smem+persistent";

std::string build_args(const FakeNvcc& fake, const std::string& ids) {
  const CompileOptions o = fake.options();
  return "build --nvcc " + o.nvcc + " --cutlass " + o.cutlass_dir + " --cache " + o.cache_dir + " --jobs 2 --ids '" +
         ids + "' --format csv";
}

}  // namespace

TEST(CompileCli, CodegenPrintsTheTranslationUnit) {
  const auto r = run_cks("codegen --ids '" + kCoop + "," + kPing + "'");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("namespace cks_" + KernelDesc::from_canonical(kCoop).id() + " {"), std::string::npos);
  EXPECT_NE(r.out.find("namespace cks_" + KernelDesc::from_canonical(kPing).id() + " {"), std::string::npos);
  EXPECT_NE(r.out.find("cks_kernel_lib_get"), std::string::npos);

  const auto bad = run_cks("codegen --ids k0123456789abcdef --layout tn");
  EXPECT_NE(bad.exit_code, 0);
  EXPECT_NE(bad.err.find("cks: error: unknown kernel 'k0123456789abcdef'"), std::string::npos) << bad.err;
  const auto none = run_cks("codegen");
  EXPECT_NE(none.exit_code, 0);
  EXPECT_NE(none.err.find("no kernels given"), std::string::npos) << none.err;
}

TEST(CompileCli, BuildCompilesReportsAndReusesTheCache) {
  FakeNvcc fake(kPing);  // the ping-pong kernel "fails to compile"
  const auto first = run_cks(build_args(fake, kCoop + "," + kPing));
  ASSERT_EQ(first.exit_code, 0) << first.err;
  ASSERT_EQ(count_lines(first.out), 3u) << first.out;
  EXPECT_EQ(first.out.rfind("kernel_id,canonical,status,registers,spill_store_bytes,spill_load_bytes,smem_bytes,"
                            "compile_seconds,cached,lib,index,error\n",
                            0),
            0u);
  const std::string coop_row = KernelDesc::from_canonical(kCoop).id() + "," + kCoop + ",ok,168,8,4,0,";
  EXPECT_NE(first.out.find(coop_row), std::string::npos) << first.out;
  EXPECT_NE(first.out.find(KernelDesc::from_canonical(kPing).id() + "," + kPing + ",compile_error,,,,"),
            std::string::npos)
      << first.out;
  EXPECT_NE(first.out.find("static assertion failed"), std::string::npos);
  EXPECT_NE(first.err.find("1 ok, 1 compile error(s)"), std::string::npos) << first.err;
  const int calls = fake.n_calls();  // {coop, ping} failed, then each alone

  const auto second = run_cks(build_args(fake, kCoop + "," + kPing));
  ASSERT_EQ(second.exit_code, 0) << second.err;
  EXPECT_EQ(fake.n_calls(), calls);  // everything came from the cache
  EXPECT_NE(second.out.find(",1," + fake.options().cache_dir), std::string::npos) << second.out;  // cached = 1
}

TEST(CompileCli, BuildRejectsBadInput) {
  FakeNvcc fake;
  const auto none = run_cks("build --nvcc " + fake.nvcc());
  EXPECT_NE(none.exit_code, 0);
  EXPECT_NE(none.err.find("no kernels given"), std::string::npos) << none.err;
  const auto malformed = run_cks(build_args(fake, "sm90_bf16_tn_128x128"));
  EXPECT_NE(malformed.exit_code, 0);
  EXPECT_NE(malformed.err.find("malformed kernel descriptor"), std::string::npos) << malformed.err;
  const auto no_nvcc = run_cks("build --nvcc /nonexistent/nvcc --ids '" + kCoop + "'");
  EXPECT_NE(no_nvcc.exit_code, 0);
  EXPECT_NE(no_nvcc.err.find("nvcc not found"), std::string::npos) << no_nvcc.err;
}
