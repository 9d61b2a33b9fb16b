// The resource model against CUTLASS 4.2: hand-computed examples, and sizes measured with nvcc
// (data/cutlass_smem_probe.cu -> data/cutlass_smem_probe.txt).
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <map>

#include "catalogue/model.hpp"
#include "cks/catalogue.hpp"

using namespace cks;

namespace {
KernelResources res(std::string_view canonical) {
  return resources(KernelDesc::from_canonical(canonical), default_hw());
}
long kernel_smem(std::string_view canonical) {
  const auto k = KernelDesc::from_canonical(canonical);
  return catalogue::smem_layout(k, catalogue::resolved_stages(k)).total;
}
}  // namespace

// 128x128x64 cooperative, TMA cooperative epilogue, auto stages:
//   epilogue tile (min(128,128), gcd(32,128)) = 128x32 -> 4 subtiles, StagesD 2, StagesC 4
//   smem_D 128*32*2 stages*2 B = 16384; TensorStorage 16384 + fusion storage -> 17408 (1024-aligned)
//   SharedStorage round_up(17408 + 4*16, 1024) = 18432
//   stages (232448 - 18432) / (32768 + 16) = 6
//   kernel: barriers 6*16 + 64 + 16 (load order) + 16 (scheduler) = 192 -> 1024; tensors 17408 + 6*32768
//   = 214016 -> total 215040
TEST(CatalogueResources, CooperativeTmaEpilogueAutoStagesByHand) {
  const auto r = res("sm90_bf16_tn_128x128x64_1x1x1_s0_cooperative+tma_ws_cooperative+persistent");
  EXPECT_EQ(r.threads, 384);
  EXPECT_EQ(r.consumer_wgs, 2);
  EXPECT_EQ(r.smem_per_stage, 32768);
  EXPECT_EQ(r.smem_pipeline, 16);
  EXPECT_EQ(r.smem_epilogue, 18432);
  EXPECT_EQ(r.stages, 6);
  EXPECT_EQ(r.smem_total, 215040);
  EXPECT_EQ(r.acc_regs_per_thread, 64);
  EXPECT_EQ(r.reg_limit_consumer, 232);
  EXPECT_FALSE(r.spills_expected);
}

// 256x24x32 cooperative, no-smem epilogue, stream-K, auto stages:
//   carve-out round_up(sizeof(empty SharedStorage) = 1, 128) = 128
//   stages (232448 - 128) / (280*32*2 + 16) = 232320 / 17936 = 12
//   kernel: barriers 12*16 + 16 + 16 + 16 = 240 -> 256; tensors 128 (1-byte epilogue, mainloop
//   aligned to 128) + 12*17920 = 215168 -> total 215424
TEST(CatalogueResources, CooperativeNoSmemStreamKAutoStagesByHand) {
  const auto r = res("sm90_bf16_tt_256x24x32_1x1x1_s0_cooperative+no_smem+stream_k");
  EXPECT_EQ(r.smem_epilogue, 0);
  EXPECT_EQ(r.stages, 12);
  EXPECT_EQ(r.smem_total, 215424);
  EXPECT_EQ(r.acc_regs_per_thread, 24);
}

// 64x144x32 basic TMA warp-specialized kernel, TMA epilogue, auto stages:
//   epilogue tile (64, gcd(32,144) = 16) -> 9 subtiles, StagesD 2, StagesC 4; smem_D 4096 -> 5120;
//   SharedStorage round_up(5120 + 64, 1024) = 6144
//   stages (232448 - 6144) / (208*32*2 + 16) = 226304 / 13328 = 16
//   kernel: union(mainloop 16*13312 = 212992, epilogue 5120) + barriers 16*16 + 64 = 213312 -> 214016
TEST(CatalogueResources, BasicKernelUnionStorageByHand) {
  const auto r = res("sm90_bf16_nn_64x144x32_1x2x1_s0_tma_ws+tma_ws+persistent");
  EXPECT_EQ(r.threads, 256);
  EXPECT_EQ(r.consumer_wgs, 1);
  EXPECT_EQ(r.smem_epilogue, 6144);
  EXPECT_EQ(r.stages, 16);
  EXPECT_EQ(r.smem_total, 214016);
  EXPECT_EQ(r.acc_regs_per_thread, 72);
  EXPECT_EQ(r.reg_limit_consumer, 255);  // no setmaxnreg in the basic kernel
}

// 64x96x128 ping-pong, TMA epilogue, auto stages:
//   epilogue tile 64x32 -> 3 subtiles, StagesD 2, StagesC 3; smem_D 8192 -> 9216; SharedStorage 10240
//   stages (232448 - 10240) / (160*128*2 + 16) = 222208 / 40976 = 5
//   kernel: barriers 80 + 48 + 32 (math WG order) + 16 + 16 = 192 -> 1024; tensors 9216 + 5*40960
//   = 214016 -> total 215040
TEST(CatalogueResources, PingpongTmaEpilogueByHand) {
  const auto r = res("sm90_bf16_tn_64x96x128_1x1x1_s0_pingpong+tma_ws+persistent");
  EXPECT_EQ(r.smem_epilogue, 10240);
  EXPECT_EQ(r.stages, 5);
  EXPECT_EQ(r.smem_total, 215040);
  EXPECT_EQ(r.acc_regs_per_thread, 48);  // 64*96/128: one warpgroup owns the tile
}

TEST(CatalogueResources, RegisterBudgetAndSpillFlag) {
  // Ping-pong 128x256: 256 accumulators per thread > setmaxnreg<240>: spills (kept, flagged).
  auto r = res("sm90_bf16_tn_128x256x64_1x1x1_s0_pingpong+no_smem+persistent");
  EXPECT_EQ(r.acc_regs_per_thread, 256);
  EXPECT_EQ(r.reg_limit_consumer, 240);
  EXPECT_TRUE(r.spills_expected);
  // The same tile cooperative: 128 per thread within 232.
  r = res("sm90_bf16_tn_128x256x64_1x1x1_s0_cooperative+no_smem+persistent");
  EXPECT_EQ(r.acc_regs_per_thread, 128);
  EXPECT_FALSE(r.spills_expected);
  // 256x208 cooperative: 208 accumulators switch CUTLASS to the 240-register budget; 208 + 24 fits.
  r = res("sm90_bf16_tn_256x208x64_1x1x1_s0_cooperative+no_smem+persistent");
  EXPECT_EQ(r.reg_limit_consumer, 240);
  EXPECT_FALSE(r.spills_expected);
  r = res("sm90_bf16_tn_256x256x64_1x1x1_s0_cooperative+no_smem+persistent");
  EXPECT_TRUE(r.spills_expected);
  // Basic kernel 128x192: 192 + 24 within the 255-register maximum.
  EXPECT_FALSE(res("sm90_bf16_tn_128x192x64_1x1x1_s0_tma_ws+no_smem+persistent").spills_expected);
  EXPECT_TRUE(res("sm90_bf16_tn_128x240x64_1x1x1_s0_tma_ws+no_smem+persistent").spills_expected);
}

TEST(CatalogueResources, ExplicitStagesAreTakenAsGiven) {
  const auto r = res("sm90_bf16_tn_128x128x64_1x1x1_s3_cooperative+tma_ws_cooperative+persistent");
  EXPECT_EQ(r.stages, 3);
  EXPECT_EQ(r.smem_total, 1024 + 17408 + 3 * 32768);
  EXPECT_EQ(kernel_smem("sm90_bf16_tn_128x128x64_1x1x1_s3_cooperative+tma_ws_cooperative+persistent"), r.smem_total);
}

// Every line of an nvcc measurement: stage count, epilogue SharedStorage, mainloop tensor storage,
// kernel SharedStorage and CTA size must match the model exactly. `swapped`: the file measured
// kernels with a row-major D, named by the CUTLASS kernel's layout; each line is the swapped kernel
// of swap_layout(that layout). Returns the lines checked.
int check_probe_file(const std::string& name, bool swapped) {
  const std::string path = std::string(CKS_SOURCE_DIR) + "/tests/catalogue/data/" + name;
  std::ifstream in(path);
  EXPECT_TRUE(in) << path;
  const std::map<std::string, MainloopSchedule> mainloops{
      {"ws", MainloopSchedule::tma_ws}, {"pp", MainloopSchedule::pingpong}, {"co", MainloopSchedule::cooperative}};
  const std::map<std::string, EpilogueSchedule> epilogues{{"ews", EpilogueSchedule::tma_ws},
                                                          {"eco", EpilogueSchedule::tma_ws_cooperative},
                                                          {"eno", EpilogueSchedule::no_smem}};
  std::string line;
  int checked = 0;
  while (std::getline(in, line)) {
    char layout[3], ml[3], ep[4], sc[3];
    int tm, tn, tk, cm, cn, s, stages;
    long epi_ss, epi_t, epi_p, main_t, main_p, kernel_ss;
    unsigned threads;
    const int fields = std::sscanf(line.c_str(),
                                   "%2s_%dx%dx%d_%dx%d_s%d_%2s_%3s_%2s stages=%d epi_ss=%ld epi_tensor=%ld "
                                   "epi_pipe=%ld main_tensor=%ld main_pipe=%ld kernel_ss=%ld threads=%u",
                                   layout, &tm, &tn, &tk, &cm, &cn, &s, ml, ep, sc, &stages, &epi_ss, &epi_t, &epi_p,
                                   &main_t, &main_p, &kernel_ss, &threads);
    EXPECT_EQ(fields, 18) << line;
    if (fields != 18) return -1;
    KernelDesc k{parse_layout(layout), tm, tn, tk, cm, cn, s, mainloops.at(ml), epilogues.at(ep),
                 std::string(sc) == "sk" ? TileSchedulerKind::stream_k : TileSchedulerKind::persistent};
    if (swapped) k = k.swapped_twin();
    const auto smem = catalogue::smem_layout(k, catalogue::resolved_stages(k));
    EXPECT_EQ(catalogue::resolved_stages(k), stages) << line;
    EXPECT_EQ(catalogue::epilogue_shared_storage(k), epi_ss) << line;
    EXPECT_EQ(smem.mainloop_tensors, main_t) << line;
    EXPECT_EQ(smem.total, kernel_ss) << line;
    EXPECT_EQ(smem.mainloop_tensors + smem.epilogue_tensors + smem.barriers + smem.padding, smem.total) << line;
    EXPECT_EQ(resources(k, default_hw()).threads, static_cast<int>(threads)) << line;
    ++checked;
  }
  return checked;
}

TEST(CatalogueResources, MatchesSizesMeasuredWithNvcc) { EXPECT_GE(check_probe_file("cutlass_smem_probe.txt", false), 250); }

// The swapped kernels' row-major D changes the epilogue's smem alignment (512, 256 or 128 bytes
// by the epilogue tile's N instead of 1024), hence their auto stage counts and sizes.
TEST(CatalogueResources, SwappedKernelsMatchSizesMeasuredWithNvcc) {
  EXPECT_GE(check_probe_file("cutlass_smem_probe_swapped.txt", true), 75);
}
