#include <gtest/gtest.h>

#include "compile/ptxas.hpp"

using namespace cks::compile;

namespace {

// The shape of a real `nvcc -Xptxas=-v` log (CUDA 13.0) for a TU of two kernels, plus a helper
// kernel that is not ours and a serialization warning.
const char* kLog = R"(ptxas info    : 11 bytes gmem
ptxas info    : Compiling entry function '_ZN7cutlass13device_kernelIN21cks_k1b810b511627bab611Gemm_kernelEEEvNT_6ParamsE' for 'sm_90a'
ptxas info    : Function properties for _ZN7cutlass13device_kernelIN21cks_k1b810b511627bab611Gemm_kernelEEEvNT_6ParamsE
    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
ptxas info    : Used 168 registers, used 2 barriers
ptxas info    : Compile time = 203.879 ms
ptxas info    : Compiling entry function '_Z6helperPf' for 'sm_90a'
ptxas info    : Function properties for _Z6helperPf
    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
ptxas info    : Used 8 registers, 380 bytes cmem[0]
ptxas warning : (C7510) Potential Performance Loss: wgmma.mma_async instructions are serialized due to insufficient register resources for the wgmma pipeline in the function '_ZN7cutlass13device_kernelIN21cks_k00000000000000ff11Gemm_kernelEEEvNT_6ParamsE'
ptxas info    : Compiling entry function '_ZN7cutlass13device_kernelIN21cks_k00000000000000ff11Gemm_kernelEEEvNT_6ParamsE' for 'sm_90a'
ptxas info    : Function properties for _ZN7cutlass13device_kernelIN21cks_k00000000000000ff11Gemm_kernelEEEvNT_6ParamsE
    24 bytes stack frame, 96 bytes spill stores, 48 bytes spill loads
ptxas info    : Used 255 registers, used 1 barriers, 1024 bytes smem, 640 bytes cmem[0]
)";

}  // namespace

TEST(CompilePtxas, KernelIdFromMangledName) {
  EXPECT_EQ(kernel_id_in_symbol("_ZN7cutlass13device_kernelIN21cks_k1b810b511627bab611Gemm_kernelEEEvNT_6ParamsE"),
            "k1b810b511627bab6");
  EXPECT_EQ(kernel_id_in_symbol("_Z6helperPf"), "");
  EXPECT_EQ(kernel_id_in_symbol("cks_kshort"), "");
}

TEST(CompilePtxas, ParsesEveryKernelOfTheTu) {
  const auto info = parse_ptxas_log(kLog);
  ASSERT_EQ(info.size(), 2u);  // the helper kernel is not one of ours
  const auto& a = info.at("k1b810b511627bab6");
  EXPECT_EQ(a.registers, 168);
  EXPECT_EQ(a.spill_store_bytes, 0);
  EXPECT_EQ(a.spill_load_bytes, 0);
  EXPECT_EQ(a.smem_bytes, 0);
  EXPECT_TRUE(a.warnings.empty());
  const auto& b = info.at("k00000000000000ff");
  EXPECT_EQ(b.registers, 255);
  EXPECT_EQ(b.spill_store_bytes, 96);
  EXPECT_EQ(b.spill_load_bytes, 48);
  EXPECT_EQ(b.smem_bytes, 1024);
  ASSERT_EQ(b.warnings.size(), 1u);
  EXPECT_NE(b.warnings[0].find("C7510"), std::string::npos);
}

TEST(CompilePtxas, ErrorExcerptKeepsTheErrorLines) {
  const std::string log =
      "some note\n"
      "/x/sm90_gemm_tma_warpspecialized_pingpong.hpp(105): error: static assertion failed with \"Ping-pong kernel "
      "does not currently support stream-K scheduler.\"\n"
      "          detected during instantiation of ...\n"
      "1 error detected in the compilation of \"cks_1.cu\".\n";
  const std::string e = error_excerpt(log);
  EXPECT_NE(e.find("static assertion failed"), std::string::npos);
  EXPECT_NE(e.find("1 error detected"), std::string::npos);
  EXPECT_EQ(e.find("some note"), std::string::npos);
  // Without error lines, the log's tail is kept.
  EXPECT_EQ(error_excerpt("a\nb\nc\n", 2), "b\nc");
}
