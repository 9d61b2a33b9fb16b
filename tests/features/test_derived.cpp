// Each derived feature against hand-computed values on known cases (H200 preset:
// 132 SMs, 233472 B smem/SM, 232448 B/CTA opt-in, 65536 regs, 50 MiB LLC, 4.8 TB/s HBM,
// 989.4 Tflop/s bf16, 10 TB/s TMA). Shared-memory byte counts come from resources() (the
// catalogue owns that model); everything else is worked out in the comments.
#include "features/features_test_util.hpp"

using namespace cks;
using namespace cks::test;

namespace {
constexpr double kSm = 132, kLlc = 52428800, kHbm = 4.8e12, kPeak = 989.4e12, kTma = 10e12;
constexpr double kPeakSm = kPeak / kSm;      // 7.4955e12 flop/s per SM
constexpr double kTmaSm = kTma / kSm;        // 75.76 GB/s per SM
constexpr double kRidge = kPeak / kHbm;      // 206.125 flop/byte
}  // namespace

// Case A: 4096^3 tn, 128x128x64, cluster 2x1, cooperative, 4 stages, default knobs.
TEST(FeaturesDerived, SquareCooperativeCluster) {
  const Problem p{4096, 4096, 4096, Layout::tn};
  const KernelDesc k = kernel(128, 128, 64, 2, 1, 4, MainloopSchedule::cooperative,
                              EpilogueSchedule::tma_ws_cooperative, TileSchedulerKind::persistent);
  const Row r = feature_row(p, k);
  const KernelResources res = resources(k, hw_preset("h200-sxm"));

  // Structural core and logs.
  EXPECT_FEAT(r, "m", 4096);
  EXPECT_FEAT(r, "a_k_major", 1);  // tn: A row-major (K contiguous)
  EXPECT_FEAT(r, "b_k_major", 1);  //     B column-major (K contiguous)
  EXPECT_FEAT(r, "log2_flops", 37);  // 2 * 2^36
  EXPECT_FEAT(r, "log2_aspect_mn", 0);
  EXPECT_FEAT(r, "inst_m", 64);
  EXPECT_FEAT(r, "inst_n", 128);
  EXPECT_FEAT(r, "inst_k", 16);
  EXPECT_FEAT(r, "stages", 4);
  EXPECT_FEAT(r, "stages_auto", 0);
  EXPECT_FEAT(r, "cluster_size", 2);
  EXPECT_FEAT(r, "consumer_wgs", 2);
  EXPECT_FEAT(r, "threads", 384);
  EXPECT_FEAT(r, "hw_ridge", kRidge);

  // Grid: 4096/128 = 32 tiles each way, 4096/64 = 64 K iterations, no masked work.
  EXPECT_FEAT(r, "n_m_tiles", 32);
  EXPECT_FEAT(r, "n_n_tiles", 32);
  EXPECT_FEAT(r, "n_k_iters", 64);
  EXPECT_FEAT(r, "tiles", 1024);
  EXPECT_FEAT(r, "edge_m", 0);
  EXPECT_FEAT(r, "padded_work_frac", 0);

  // Residency: setmaxnreg split (128*40 + 2*128*232) = 64512 regs => 168/thread, b_reg = 1;
  // b_thr = 2048/384 = 5; b_smem = floor(233472 / (B_smem + 1024)).
  EXPECT_FEAT(r, "regs_per_thread_est", 168);
  EXPECT_FEAT(r, "b_reg", 1);
  EXPECT_FEAT(r, "b_thr", 5);
  EXPECT_FEAT(r, "b_smem", std::floor(233472.0 / (res.smem_total + 1024)));
  EXPECT_FEAT(r, "b_res", 1);

  // Paper waves: W = 1024 / (132 * 1) = 7.7576, eta = W / 8 = 0.969697.
  EXPECT_FEAT(r, "waves", 1024.0 / 132);
  EXPECT_FEAT(r, "wave_eff", 1024.0 / 132 / 8);
  EXPECT_FEAT(r, "streamk_proxy", 1 - 1024.0 / 132 / 8);

  // Scheduler: cluster 2 => 132 slots (7 GPCs x 18 + 6), swizzle 1, 1024 tiles => 8 passes.
  EXPECT_FEAT(r, "ctas_per_wave", 132);
  EXPECT_FEAT(r, "launch_idle_frac", 0);
  EXPECT_FEAT(r, "sched_waves", 8);
  EXPECT_FEAT(r, "sched_wave_eff", 1024.0 / 132 / 8);
  EXPECT_FEAT(r, "uses_stream_k", 0);
  EXPECT_EQ(FeatureSchema::get().level_name(FeatureSchema::get().index("decomposition_resolved"),
                                            r["decomposition_resolved"]),
            "data_parallel");
  EXPECT_FEAT(r, "splits_eff", 1);
  EXPECT_FEAT(r, "k_iters_per_unit", 64);
  // Heuristic raster: blocks_n (32) > blocks_m (32) is false => along N.
  EXPECT_FEAT(r, "raster_along_m", 0);
  EXPECT_FEAT(r, "swizzle_eff", 1);

  // Cluster: 32/2 = 16 and 32/1 = 32 tiles per cluster slot; multicast
  // (2*128/1 + 2*128/2) / (2*128 + 2*128) = 384/512.
  EXPECT_FEAT(r, "cluster_fill_m", 16);
  EXPECT_FEAT(r, "cluster_fill_n", 32);
  EXPECT_FEAT(r, "cluster_overshoot_m", 0);
  EXPECT_FEAT(r, "cluster_idle_frac", 0);
  EXPECT_FEAT(r, "multicast_load_ratio", 0.75);

  // Intensity: 2*4096^3 / (3 * 2 * 4096^2) = 4096/3; tile: 128*128/(128+128) = 64.
  EXPECT_FEAT(r, "intensity", 4096.0 / 3);
  EXPECT_FEAT(r, "intensity_over_ridge", 4096.0 / 3 / kRidge);
  EXPECT_FEAT(r, "tile_intensity", 64);

  // Cache: working set 3 * 32 MiB / 50 MiB = 1.92; panel (256 + 256) * 4096 / L = 0.04.
  // Wave walk along N in strips of w = 1 * c_M = 2 tile rows; 132 CTAs > 2 * 32, so the wave
  // spans all 32 tile columns and ceil(132/32) = 5 tile rows: footprint
  // (2*640 + 2*4096) * 4096 = 38797312 B <= L; the whole B (32 MiB) plus the strip's A panels
  // (5*128*4096*2 = 5 MiB) fit => each operand is read once: restream 1.
  EXPECT_FEAT(r, "working_set_llc", 3.0 * 33554432 / kLlc);
  EXPECT_FEAT(r, "panel_llc", 512.0 * 4096 / kLlc);
  EXPECT_FEAT(r, "wave_footprint_llc", 38797312.0 / kLlc);
  EXPECT_FEAT(r, "restream_factor", 1);
  EXPECT_FEAT(r, "effective_intensity", 4096.0 / 3);

  // Shared memory: B_stage = (128 + 128) * 64 * 2 = 32768.
  EXPECT_FEAT(r, "stage_bytes", 32768);
  EXPECT_FEAT(r, "smem_total_bytes", res.smem_total);
  EXPECT_FEAT(r, "f_smem", res.smem_total / 233472.0);
  EXPECT_FEAT(r, "stages_x_fsmem", 4 * res.smem_total / 233472.0);
  EXPECT_FEAT(r, "acc_regs_per_thread", 64);  // 128*128 / 256 consumer threads

  // Pipeline: t_TMA = 32768 / (10e12/132) s = 432.54 ns; t_WGMMA = 2*128*128*64 /
  // (2 * P_SM/2) = 279.79 ns; rho = 0.6469. 64 iterations over 4 stages: fill 1, amortization 16.
  const double t_tma = 32768 / kTmaSm * 1e9, t_wgmma = 2.0 * 128 * 128 * 64 / kPeakSm * 1e9;
  EXPECT_FEAT(r, "t_tma_ns", t_tma);
  EXPECT_FEAT(r, "t_wgmma_ns", t_wgmma);
  EXPECT_FEAT(r, "consumer_producer_ratio", t_wgmma / t_tma);
  EXPECT_FEAT(r, "pipeline_fill", 1);
  EXPECT_FEAT(r, "pipeline_amortization", 16);

  // Estimate: 8 passes x 64 steps x max(t_TMA, t_WGMMA) + 4 fill stages = 516 t_TMA (compute)
  // vs 100663296 B / 4.8e12 = 20.97 us (memory).
  const double est_ns = 516 * t_tma;
  EXPECT_FEAT(r, "est_time_us", est_ns * 1e-3);
  EXPECT_FEAT(r, "est_efficiency", 2.0 * 4096 * 4096 * 4096 / (est_ns * 1e-9 * kPeak));
}

// Case C: ragged 1000 x 520 x 200 with the non-persistent tma_ws kernel 64x128x32, 3 stages.
TEST(FeaturesDerived, RaggedBasicKernel) {
  const Problem p{1000, 520, 200, Layout::nt};
  const KernelDesc k = kernel(64, 128, 32, 1, 1, 3, MainloopSchedule::tma_ws, EpilogueSchedule::tma_ws,
                              TileSchedulerKind::persistent, Layout::nt);
  const Row r = feature_row(p, k);
  const KernelResources res = resources(k, hw_preset("h200-sxm"));

  EXPECT_FEAT(r, "a_k_major", 0);  // nt: A column-major, B row-major
  EXPECT_FEAT(r, "b_k_major", 0);
  EXPECT_FEAT(r, "layout", 1);     // level index of "nt"

  // Grid: ceil(1000/64) = 16 (1024 rows), ceil(520/128) = 5 (640), ceil(200/32) = 7 (224).
  EXPECT_FEAT(r, "n_m_tiles", 16);
  EXPECT_FEAT(r, "n_n_tiles", 5);
  EXPECT_FEAT(r, "n_k_iters", 7);
  EXPECT_FEAT(r, "tiles", 80);
  EXPECT_FEAT(r, "edge_m", 24.0 / 1024);
  EXPECT_FEAT(r, "edge_n", 120.0 / 640);
  EXPECT_FEAT(r, "edge_k", 24.0 / 224);
  EXPECT_FEAT(r, "padded_work_frac", 1 - (1000.0 * 520 * 200) / (1024.0 * 640 * 224));

  // Residency: 1 consumer WG, 256 threads; acc = 64*128/128 = 64 regs, +24 => 88 (multiple of 8);
  // 256 * 88 = 22528 regs/CTA => b_reg = 2; b_thr = 8; b_res = min(b_smem, 2, 8, 32).
  const double b_smem = std::floor(233472.0 / (res.smem_total + 1024));
  EXPECT_FEAT(r, "regs_per_thread_est", 88);
  EXPECT_FEAT(r, "b_reg", 2);
  EXPECT_FEAT(r, "b_thr", 8);
  EXPECT_FEAT(r, "b_smem", b_smem);
  ASSERT_GE(b_smem, 2) << "case assumes registers bound residency";
  EXPECT_FEAT(r, "b_res", 2);

  // Waves: W = 80 / (132 * 2) = 0.30303 = eta. The basic kernel launches all 80 tiles at once
  // (264 slots): 1 pass, 80/264 of the slot-time busy; tiles walk along M.
  EXPECT_FEAT(r, "waves", 80.0 / 264);
  EXPECT_FEAT(r, "wave_eff", 80.0 / 264);
  EXPECT_FEAT(r, "ctas_per_wave", 80);
  EXPECT_FEAT(r, "sched_waves", 1);
  EXPECT_FEAT(r, "sched_wave_eff", 80.0 / 264);
  EXPECT_FEAT(r, "raster_along_m", 1);
  EXPECT_FEAT(r, "multicast_load_ratio", 1);

  // Intensity: 2*1000*520*200 / (2*1000*200 + 2*200*520 + 2*1000*520) = 208e6 / 1648000;
  // tile: 2*64*128 / (2*64 + 2*128) = 42.667.
  EXPECT_FEAT(r, "intensity", 208e6 / 1648000);
  EXPECT_FEAT(r, "tile_intensity", 16384.0 / 384);
  EXPECT_FEAT(r, "working_set_llc", 1648000.0 / kLlc);
  EXPECT_FEAT(r, "panel_llc", (128.0 + 256) * 200 / kLlc);
  // |A| + |B| = 608000 B fits: read once. The wave covers all 16 x 5 tiles, clipped to the
  // matrix: (2*1000 + 2*520) * 200 = 608000 B.
  EXPECT_FEAT(r, "restream_factor", 1);
  EXPECT_FEAT(r, "wave_footprint_llc", 608000.0 / kLlc);

  // Pipeline: B_stage = (64 + 128) * 32 * 2 = 12288; t_TMA = 162.20 ns; t_WGMMA with one
  // consumer WG = 2*64*128*32 / (P_SM / 2) = 139.89 ns. 7 iterations / 3 stages.
  const double t_tma = 12288 / kTmaSm * 1e9, t_wgmma = 2.0 * 64 * 128 * 32 / (kPeakSm / 2) * 1e9;
  EXPECT_FEAT(r, "stage_bytes", 12288);
  EXPECT_FEAT(r, "t_tma_ns", t_tma);
  EXPECT_FEAT(r, "t_wgmma_ns", t_wgmma);
  EXPECT_FEAT(r, "pipeline_fill", 1);
  EXPECT_FEAT(r, "pipeline_amortization", 7.0 / 3);

  // Estimate: two co-resident CTAs share the SM, so one step costs 2 t_TMA (TMA-bound);
  // 1 pass x 7 steps + 3 fill stages => 14 t_TMA + 3 t_TMA = 17 t_TMA.
  EXPECT_FEAT(r, "est_time_us", 17 * t_tma * 1e-3);
}

// Case D: 256 x 4096 x 4096, 128x256x64 cluster 4x1 ping-pong; raster along N, swizzle 4.
TEST(FeaturesDerived, ClusterOvershootAndSwizzleRounding) {
  const Problem p{256, 4096, 4096, Layout::tn};
  const KernelDesc k = kernel(128, 256, 64, 4, 1, 4, MainloopSchedule::pingpong, EpilogueSchedule::tma_ws,
                              TileSchedulerKind::persistent);
  RuntimeKnobs knobs;
  knobs.raster = RasterOrder::along_n;
  knobs.max_swizzle = 4;
  const Row r = feature_row(p, k, knobs);

  // Grid 2 x 16 tiles; the 4-CTA cluster overshoots M: rounded to 4 x 16 => half idle.
  EXPECT_FEAT(r, "tiles", 32);
  EXPECT_FEAT(r, "cluster_fill_m", 0.5);
  EXPECT_FEAT(r, "cluster_fill_n", 16);
  EXPECT_FEAT(r, "cluster_overshoot_m", 1);
  EXPECT_FEAT(r, "cluster_overshoot_n", 0);
  EXPECT_FEAT(r, "cluster_idle_frac", 0.5);
  // Multicast: (2*128/1 + 2*256/4) / (2*128 + 2*256) = 384 / 768.
  EXPECT_FEAT(r, "multicast_load_ratio", 0.5);

  // Swizzle: min(4, 16) >= 3 and max 4 => log 2, swizzle 4. CUTLASS rounds blocks to
  // swizzle * cluster multiples: M 2 -> 16, N 16 -> 16 => 256 launched tiles, 7/8 idle.
  EXPECT_FEAT(r, "swizzle_eff", 4);
  EXPECT_FEAT(r, "log2_swizzle", 2);
  EXPECT_FEAT(r, "launch_idle_frac", 1 - 32.0 / 256);
  EXPECT_FEAT(r, "raster_along_m", 0);
  // Cluster 4: 7 GPCs x (18 - 2) + (6 - 2) = 116 slots; ceil(256 / 116) = 3 passes.
  EXPECT_FEAT(r, "ctas_per_wave", 116);
  EXPECT_FEAT(r, "sched_waves", 3);
  EXPECT_FEAT(r, "sched_wave_eff", 32.0 / 116 / 3);
  // Paper waves ignore the launch: 32 / 132.
  EXPECT_FEAT(r, "waves", 32.0 / 132);
  EXPECT_FEAT(r, "streamk_proxy", 1 - 32.0 / 132);

  // |A| + |B| = 2 MiB + 32 MiB fits in LLC => restream 1. Wave: strips w = min(16, 4*4) = 16
  // tile rows, 116 CTAs => 16 rows x ceil(116/16) = 8 columns, clipped to M = 256:
  // (2*256 + 2*2048) * 4096 = 18874368 B.
  EXPECT_FEAT(r, "restream_factor", 1);
  EXPECT_FEAT(r, "wave_footprint_llc", 18874368.0 / kLlc);

  // Ping-pong: 2 consumer WGs. B_stage = 384 * 64 * 2 = 49152 B.
  const double t_tma = 49152 / kTmaSm * 1e9, t_wgmma = 2.0 * 128 * 256 * 64 / kPeakSm * 1e9;
  EXPECT_FEAT(r, "t_tma_ns", t_tma);
  EXPECT_FEAT(r, "t_wgmma_ns", t_wgmma);
  // 3 passes x 64 steps x t_TMA + 4 fill stages.
  EXPECT_FEAT(r, "est_time_us", (3 * 64 + 4) * t_tma * 1e-3);
}

// Re-streaming when operands overflow LLC: 16384 x 16384 x 8192, 128x256x64 cooperative,
// cluster 1x1, raster along M, swizzle 1.
TEST(FeaturesDerived, LlcRestreaming) {
  const Problem p{16384, 16384, 8192, Layout::tn};
  const KernelDesc k = kernel(128, 256, 64, 1, 1, 4, MainloopSchedule::cooperative,
                              EpilogueSchedule::tma_ws_cooperative, TileSchedulerKind::persistent);
  RuntimeKnobs knobs;
  knobs.raster = RasterOrder::along_m;
  const Row r = feature_row(p, k, knobs);
  // |A| = |B| = 2 * 16384 * 8192 = 256 MiB each, far above 50 MiB.
  // Walk along M in strips of 1 tile column: 132 CTAs > 128 tile rows => the wave spans all 128
  // rows and ceil(132/128) = 2 columns: (2*16384 + 2*512) * 8192 = 276824064 B > L, so no reuse
  // survives and each tile streams its panels: n_N |A| + n_M |B| = 64 |A| + 128 |B|.
  EXPECT_FEAT(r, "wave_footprint_llc", 276824064.0 / kLlc);
  EXPECT_FEAT(r, "restream_factor", (64.0 + 128.0) / 2);

  // Swizzle 8 makes the wave 8 columns wide: 132 > 8 => 8 columns x ceil(132/8) = 17 rows:
  // (2*17*128 + 2*8*256) * 8192 = 69206016 B, still > L.
  knobs.max_swizzle = 8;
  const Row s8 = feature_row(p, k, knobs);
  EXPECT_FEAT(s8, "wave_footprint_llc", 69206016.0 / kLlc);
  EXPECT_FEAT(s8, "restream_factor", 96);

  // A shallower K = 1024 shrinks panels 8x: wave (2*17*128 + 2*8*256) * 1024 = 8650752 B fits;
  // |A| = |B| = 32 MiB, sum 64 MiB > L. Strip = 8 columns of B = 8*256*1024*2 = 4 MiB;
  // the major operand A (32 MiB) + 4 MiB fits => A is read once too: restream 1.
  const Row shallow = feature_row({16384, 16384, 1024, Layout::tn}, k, knobs);
  EXPECT_FEAT(shallow, "wave_footprint_llc", 8650752.0 / kLlc);
  EXPECT_FEAT(shallow, "restream_factor", 1);

  // K = 2048: |A| = |B| = 64 MiB; wave 17301504 B fits; strip 8 MiB + A 64 MiB does not, so
  // B (minor) is read once and A once per strip of 8 of the 64 tile columns:
  // Q = |B| + 8 |A| => restream (1 + 8) / 2 = 4.5.
  const Row mid = feature_row({16384, 16384, 2048, Layout::tn}, k, knobs);
  EXPECT_FEAT(mid, "wave_footprint_llc", 17301504.0 / kLlc);
  EXPECT_FEAT(mid, "restream_factor", 4.5);
}
