// Decomposition resolution (CUTLASS's stream-K scheduler heuristic) and its wave features.
#include "features/features_test_util.hpp"

using namespace cks;
using namespace cks::test;

namespace {
const KernelDesc kStreamK = kernel(128, 128, 64, 1, 1, 4, MainloopSchedule::cooperative,
                                   EpilogueSchedule::tma_ws_cooperative, TileSchedulerKind::stream_k);
RuntimeKnobs knobs(Decomposition d, int splits = 1) {
  RuntimeKnobs k;
  k.decomposition = d;
  k.splits = splits;
  return k;
}
std::string_view resolved(const Row& r) {
  const auto& s = FeatureSchema::get();
  return s.level_name(s.index("decomposition_resolved"), r["decomposition_resolved"]);
}
}  // namespace

// 1024 x 4096 x 8192: 8 x 32 = 256 tiles of 128 K iterations on 132 slots (1.94 waves).
TEST(FeaturesSchedule, StreamKDecompositions) {
  const Problem p{1024, 4096, 8192, Layout::tn};

  // Heuristic: the tail wave holds 256 - 132 = 124 tiles, more than half of 132 => data-parallel.
  const Row h = feature_row(p, kStreamK, knobs(Decomposition::heuristic));
  EXPECT_EQ(resolved(h), "data_parallel");
  EXPECT_FEAT(h, "uses_stream_k", 0);
  EXPECT_FEAT(h, "ctas_per_wave", 132);  // the stream-K scheduler always launches a full wave
  EXPECT_FEAT(h, "sched_waves", 2);
  EXPECT_FEAT(h, "sched_wave_eff", 256.0 / 132 / 2);
  EXPECT_FEAT(h, "k_iters_per_unit", 128);

  // Explicit Stream-K: no full data-parallel wave precedes the tail (1 full wave => 0 DP
  // waves), so all 256 tiles are Stream-K tiles over min(132, 256*128/8) = 132 units of
  // ceil(256*128/132) = 249 iterations: 249/128 tile-passes.
  const Row sk = feature_row(p, kStreamK, knobs(Decomposition::stream_k));
  EXPECT_EQ(resolved(sk), "stream_k");
  EXPECT_FEAT(sk, "uses_stream_k", 1);
  EXPECT_FEAT(sk, "sk_tiles_frac", 1);
  EXPECT_FEAT(sk, "k_iters_per_unit", 249);
  EXPECT_FEAT(sk, "sched_waves", 249.0 / 128);
  EXPECT_FEAT(sk, "sched_wave_eff", (256.0 / 132) / (249.0 / 128));
  EXPECT_FEAT(sk, "pipeline_amortization", 249.0 / 4);
  // Fix-up traffic: one fp32 128x128 partial tile written and read back per unit:
  // 132 * 2 * 4 * 16384 B, visible as 1/effective_intensity growing by that over 2MNK.
  const double flops = 2.0 * 1024 * 4096 * 8192;
  EXPECT_NEAR(1 / sk["effective_intensity"] - 1 / h["effective_intensity"], 132.0 * 8 * 16384 / flops, 1e-9);

  // Split-K 4: 1024 units of 32 iterations; ceil(1024/132) = 8 rounds x 32/128 = 2 passes.
  const Row s4 = feature_row(p, kStreamK, knobs(Decomposition::split_k, 4));
  EXPECT_EQ(resolved(s4), "split_k");
  EXPECT_FEAT(s4, "splits_eff", 4);
  EXPECT_FEAT(s4, "k_iters_per_unit", 32);
  EXPECT_FEAT(s4, "sched_waves", 2);
  EXPECT_FEAT(s4, "pipeline_fill", 1);
  EXPECT_FEAT(s4, "splits", 4);
  // Heuristic with splits > 1 is split-K too: 3 splits of ceil(128/3) = 43 iterations,
  // ceil(768/132) = 6 rounds x 43/128.
  const Row s3 = feature_row(p, kStreamK, knobs(Decomposition::heuristic, 3));
  EXPECT_EQ(resolved(s3), "split_k");
  EXPECT_FEAT(s3, "k_iters_per_unit", 43);
  EXPECT_FEAT(s3, "sched_waves", 6 * 43.0 / 128);
  // Split-K 1 and explicit data-parallel are plain data-parallel.
  EXPECT_EQ(resolved(feature_row(p, kStreamK, knobs(Decomposition::split_k, 1))), "data_parallel");
  EXPECT_EQ(resolved(feature_row(p, kStreamK, knobs(Decomposition::data_parallel))), "data_parallel");
}

TEST(FeaturesSchedule, SplitCountIsClampedToKIterations) {
  // K = 256 => 4 iterations; 8 requested splits become 4 (adjust_split_count).
  const Row r = feature_row({1024, 4096, 256, Layout::tn}, kStreamK, knobs(Decomposition::split_k, 8));
  EXPECT_FEAT(r, "splits_eff", 4);
  EXPECT_FEAT(r, "k_iters_per_unit", 1);
  EXPECT_FEAT(r, "pipeline_fill", 0.25);  // 1 iteration cannot prime 4 stages
}

TEST(FeaturesSchedule, SmallProblemHeuristicSplitsAcrossIdleSms) {
  // 256 x 2816 x 8192: 2 x 22 = 44 tiles < 132 slots. Heuristic: all 44 are Stream-K tiles,
  // units = min(132, 44*128/8) = 132 = 3 * 44 => CUTLASS runs split-K with 3 splits of 43.
  const Problem p{256, 2816, 8192, Layout::tn};
  const Row r = feature_row(p, kStreamK, knobs(Decomposition::heuristic));
  EXPECT_EQ(resolved(r), "split_k");
  EXPECT_FEAT(r, "uses_stream_k", 0);
  EXPECT_FEAT(r, "splits_eff", 3);
  EXPECT_FEAT(r, "sk_tiles_frac", 1);
  EXPECT_FEAT(r, "sched_waves", 43.0 / 128);
  EXPECT_FEAT(r, "sched_wave_eff", (44.0 / 132) / (43.0 / 128));

  // The data-parallel persistent scheduler leaves two thirds of the GPU idle.
  KernelDesc dp = kStreamK;
  dp.scheduler = TileSchedulerKind::persistent;
  const Row d = feature_row(p, dp, knobs(Decomposition::heuristic));
  EXPECT_EQ(resolved(d), "data_parallel");
  EXPECT_FEAT(d, "ctas_per_wave", 44);
  EXPECT_FEAT(d, "sched_waves", 1);
  EXPECT_FEAT(d, "sched_wave_eff", 44.0 / 132);
}

TEST(FeaturesSchedule, ShallowKStaysDataParallel) {
  // n_K = 512/64 = 8 <= CUTLASS's minimum of 8 iterations per Stream-K unit.
  const Row r = feature_row({1024, 4096, 512, Layout::tn}, kStreamK, knobs(Decomposition::stream_k));
  EXPECT_EQ(resolved(r), "data_parallel");
}

TEST(FeaturesSchedule, BasicKernelIgnoresSchedulerKnobs) {
  const KernelDesc k = kernel(128, 128, 64, 1, 1, 4, MainloopSchedule::tma_ws, EpilogueSchedule::tma_ws,
                              TileSchedulerKind::persistent);
  RuntimeKnobs kn = knobs(Decomposition::split_k, 4);
  kn.max_swizzle = 8;
  kn.raster = RasterOrder::along_n;
  const Row r = feature_row({4096, 4096, 4096, Layout::tn}, k, kn);
  EXPECT_EQ(resolved(r), "data_parallel");
  EXPECT_FEAT(r, "swizzle_eff", 1);
  EXPECT_FEAT(r, "raster_along_m", 1);
  EXPECT_FEAT(r, "max_swizzle", 8);  // the knob itself is still reported
}
