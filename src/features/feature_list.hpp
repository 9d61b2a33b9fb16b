// The feature map phi(p, c, h) as one ordered list: the single source of truth for the column
// order, names, kinds, categorical level sets and definitions. schema.cpp turns it into the
// public FeatureSchema; compute.cpp indexes columns through the enum Feat generated from it.
//
// FROZEN: the order, names, kinds and level lists define the schema hash that trained models
// check. Append features (never reorder or rename) and bump kFeatureSchemaVersion when a
// definition changes meaning.
//
// Notation (docs/features.md has the long form): p = (M, N, K, layout); tile (T_M, T_N, T_K);
// cluster (c_M, c_N); S = resolved stage count; b_A = b_B = b_D = 2 bytes (bf16), C = void;
// S_SM = SM count; L = LLC bytes; BW = HBM bytes/s; P = dense bf16 peak flop/s.
#pragma once
#include <array>
#include <string_view>

namespace cks::features_detail {

inline constexpr std::string_view kFeatureSchemaVersion = "cks-features-1";

// Categorical level sets. Orders of enum-backed sets equal the enum orders in cks/catalogue.hpp
// (a unit test checks this), so a level code is the enum value.
inline constexpr std::array<std::string_view, 4> kLayoutLevels{"tn", "nt", "nn", "tt"};
inline constexpr std::array<std::string_view, 3> kMainloopLevels{"tma_ws", "pingpong", "cooperative"};
inline constexpr std::array<std::string_view, 3> kEpilogueLevels{"tma_ws", "tma_ws_cooperative", "no_smem"};
inline constexpr std::array<std::string_view, 2> kSchedulerLevels{"persistent", "stream_k"};
inline constexpr std::array<std::string_view, 3> kRasterLevels{"heuristic", "along_m", "along_n"};
inline constexpr std::array<std::string_view, 4> kDecompositionLevels{"heuristic", "data_parallel", "split_k",
                                                                      "stream_k"};
// The decomposition CUTLASS's stream-K scheduler actually runs (heuristic resolved).
inline constexpr std::array<std::string_view, 3> kResolvedDecompositionLevels{"data_parallel", "split_k",
                                                                              "stream_k"};
inline constexpr std::array<std::string_view, 1> kBf16Levels{"bf16"};
inline constexpr std::array<std::string_view, 1> kF32Levels{"f32"};
inline constexpr std::array<std::string_view, 1> kVoidLevels{"void"};
// CUTLASS math operator (arch::OpMultiplyAdd) and the SM90 compute engine the builder selects.
inline constexpr std::array<std::string_view, 1> kOperatorLevels{"multiply_add"};
inline constexpr std::array<std::string_view, 1> kComputeEngineLevels{"sm90_wgmma_bf16_f32"};

// NUM(name, group, definition) / CAT(name, levels, group, definition)
#define CKS_FEATURE_LIST(NUM, CAT)                                                                                     \
  /* ---- problem (structural core) ---- */                                                                            \
  NUM(m, "problem", "M: rows of A and D")                                                                              \
  NUM(n, "problem", "N: columns of B and D")                                                                           \
  NUM(k, "problem", "K: contraction depth")                                                                            \
  CAT(layout, kLayoutLevels, "problem", "operand layout tag (A letter, B letter; t = row-major)")                      \
  NUM(a_k_major, "problem", "1 if A is K-contiguous (layout t?), else 0")                                              \
  NUM(b_k_major, "problem", "1 if B is K-contiguous (layout ?n), else 0")                                              \
  CAT(elem_a, kBf16Levels, "problem", "element type of A")                                                             \
  CAT(elem_b, kBf16Levels, "problem", "element type of B")                                                             \
  CAT(elem_c, kVoidLevels, "problem", "element type of C (void: D = alpha*A*B, C is not read)")                        \
  CAT(elem_d, kBf16Levels, "problem", "element type of D")                                                             \
  CAT(elem_acc, kF32Levels, "problem", "accumulator / epilogue compute type")                                          \
  NUM(log2_m, "problem", "log2 M")                                                                                     \
  NUM(log2_n, "problem", "log2 N")                                                                                     \
  NUM(log2_k, "problem", "log2 K")                                                                                     \
  NUM(log2_flops, "problem", "log2(2 M N K)")                                                                          \
  NUM(log2_aspect_mn, "problem", "log2(M / N): > 0 tall, < 0 wide")                                                    \
  /* ---- kernel (structural core) ---- */                                                                             \
  NUM(tile_m, "kernel", "T_M: CTA tile rows")                                                                          \
  NUM(tile_n, "kernel", "T_N: CTA tile columns")                                                                       \
  NUM(tile_k, "kernel", "T_K: CTA tile depth (K per mainloop iteration)")                                              \
  NUM(inst_m, "kernel", "WGMMA instruction M (64)")                                                                    \
  NUM(inst_n, "kernel", "WGMMA instruction N (= T_N)")                                                                 \
  NUM(inst_k, "kernel", "WGMMA instruction K (16 for bf16)")                                                           \
  NUM(stages, "kernel", "S: resolved mainloop pipeline stages (resources().stages)")                                   \
  NUM(stages_auto, "kernel", "1 if the stage count is CUTLASS's automatic carve-out, else 0")                          \
  CAT(mainloop, kMainloopLevels, "kernel", "mainloop schedule")                                                        \
  CAT(epilogue, kEpilogueLevels, "kernel", "epilogue schedule")                                                        \
  NUM(cluster_m, "kernel", "c_M: cluster CTAs along M")                                                                \
  NUM(cluster_n, "kernel", "c_N: cluster CTAs along N")                                                                \
  NUM(cluster_size, "kernel", "c_M c_N")                                                                               \
  CAT(tile_scheduler, kSchedulerLevels, "kernel", "tile scheduler")                                                    \
  CAT(operator_id, kOperatorLevels, "kernel", "math operator")                                                         \
  CAT(compute_engine, kComputeEngineLevels, "kernel", "compute engine (instruction family, input/acc types)")          \
  NUM(consumer_wgs, "kernel", "n_consumer: warpgroups executing the mainloop math")                                    \
  NUM(threads, "kernel", "threads per CTA (producer warpgroup included)")                                              \
  /* ---- architecture descriptors h ---- */                                                                           \
  NUM(hw_sm_count, "hardware", "S_SM: streaming multiprocessors")                                                      \
  NUM(hw_smem_per_sm, "hardware", "C_smem: shared memory per SM (bytes)")                                              \
  NUM(hw_smem_per_block, "hardware", "max dynamic shared memory per CTA after opt-in (bytes)")                         \
  NUM(hw_regs_per_sm, "hardware", "C_reg: 32-bit registers per SM")                                                    \
  NUM(hw_llc_bytes, "hardware", "L: LLC (L2) capacity (bytes)")                                                        \
  NUM(hw_hbm_bw, "hardware", "BW: HBM bandwidth (bytes/s)")                                                            \
  NUM(hw_peak_flops, "hardware", "P: dense bf16 tensor peak of the compute engine (flop/s)")                           \
  NUM(hw_tma_bw, "hardware", "BW_TMA: chip L2->SMEM bulk-copy bandwidth (bytes/s)")                                    \
  NUM(hw_ridge, "hardware", "P / BW: roofline ridge intensity (flop/byte)")                                            \
  /* ---- output grid and mainloop iterations ---- */                                                                  \
  NUM(n_m_tiles, "grid", "n_M = ceil(M / T_M)")                                                                        \
  NUM(n_n_tiles, "grid", "n_N = ceil(N / T_N)")                                                                        \
  NUM(n_k_iters, "grid", "n_K = ceil(K / T_K): mainloop iterations per output tile")                                   \
  NUM(tiles, "grid", "n_M n_N: output tiles")                                                                          \
  NUM(edge_m, "grid", "masked edge work along M: (n_M T_M - M) / (n_M T_M)")                                           \
  NUM(edge_n, "grid", "masked edge work along N: (n_N T_N - N) / (n_N T_N)")                                           \
  NUM(edge_k, "grid", "masked edge work along K: (n_K T_K - K) / (n_K T_K)")                                           \
  NUM(padded_work_frac, "grid", "1 - M N K / (n_M T_M n_N T_N n_K T_K): discarded MAC fraction")                       \
  /* ---- residency ---- */                                                                                            \
  NUM(regs_per_thread_est, "residency",                                                                                \
      "launch-time registers per thread: pingpong/cooperative (setmaxnreg split) "                                     \
      "(128 * (40 or 24) + n_consumer * 128 * reg_limit) / threads; tma_ws min(255, round8(acc_regs + 24))")           \
  NUM(b_smem, "residency", "floor(C_smem / (B_smem + per-CTA reserved smem)); reserved = C_smem - smem_per_block")     \
  NUM(b_reg, "residency", "floor(C_reg / (threads * regs_per_thread_est))")                                            \
  NUM(b_thr, "residency", "floor(max_threads_per_sm / threads)")                                                       \
  NUM(b_res, "residency", "max(1, min(b_smem, b_reg, b_thr, max_blocks_per_sm))")                                      \
  /* ---- waves (paper) ---- */                                                                                        \
  NUM(waves, "waves", "W = n_M n_N / (S_SM b_res)")                                                                    \
  NUM(wave_eff, "waves", "eta = W / ceil(W)")                                                                          \
  NUM(streamk_proxy, "waves", "1 - eta: idle fraction of the slot-time that Stream-K could recover")                   \
  /* ---- waves as the scheduler runs them (depend on the runtime knobs) ---- */                                       \
  NUM(ctas_per_wave, "waves",                                                                                          \
      "CTAs launched per wave: slots for the stream-K scheduler, else min(tiles_launched, slots); slots = "            \
      "CUTLASS's GPC-aware CTAs per device for the cluster size (x b_res for the non-persistent tma_ws kernel)")       \
  NUM(launch_idle_frac, "waves",                                                                                       \
      "1 - n_M n_N / tiles_launched; tiles_launched = n_M, n_N rounded up to swizzle*cluster multiples")               \
  NUM(sched_waves, "waves",                                                                                            \
      "tile-passes per CTA slot under the resolved decomposition (DP: ceil(tiles_launched / slots))")                  \
  NUM(sched_wave_eff, "waves", "(n_M n_N / slots) / sched_waves: share of the device's slot-time on real tiles")       \
  NUM(uses_stream_k, "waves", "1 if the resolved decomposition is Stream-K, else 0")                                   \
  CAT(decomposition_resolved, kResolvedDecompositionLevels, "waves",                                                   \
      "decomposition after CUTLASS's heuristic (persistent scheduler: data_parallel)")                                 \
  NUM(splits_eff, "waves", "K splits per output tile after CUTLASS's adjustment (1 unless split-K)")                   \
  NUM(sk_tiles_frac, "waves", "Stream-K tiles / tiles_launched")                                                       \
  NUM(k_iters_per_unit, "waves", "K iterations of one work unit: n_K, ceil(n_K / splits) or the Stream-K share")       \
  /* ---- cluster ---- */                                                                                              \
  NUM(cluster_fill_m, "cluster", "n_M / c_M: tiles available per cluster slot along M")                                \
  NUM(cluster_fill_n, "cluster", "n_N / c_N: tiles available per cluster slot along N")                                \
  NUM(cluster_overshoot_m, "cluster", "1 if c_M > n_M, else 0")                                                        \
  NUM(cluster_overshoot_n, "cluster", "1 if c_N > n_N, else 0")                                                        \
  NUM(cluster_idle_frac, "cluster", "1 - n_M n_N / (ceil(n_M/c_M) c_M ceil(n_N/c_N) c_N): CTAs idle by rounding")      \
  NUM(multicast_load_ratio, "cluster",                                                                                 \
      "(b_A T_M / c_N + b_B T_N / c_M) / (b_A T_M + b_B T_N): L2 reads per CTA with TMA multicast vs without")         \
  /* ---- arithmetic intensity ---- */                                                                                 \
  NUM(intensity, "intensity", "I = 2 M N K / (b_A M K + b_B K N + Q_epi), Q_epi = b_D M N (C void: no read)")          \
  NUM(intensity_over_ridge, "intensity", "I / (P / BW): > 1 compute-bound regime")                                     \
  NUM(tile_intensity, "intensity", "2 T_M T_N T_K / ((b_A T_M + b_B T_N) T_K) = T_M T_N / (T_M + T_N) flop/byte")      \
  /* ---- cache ---- */                                                                                                \
  NUM(working_set_llc, "cache", "(b_A M K + b_B K N + b_D M N) / L")                                                   \
  NUM(panel_llc, "cache", "(b_A T_M + b_B T_N) K / L: one tile's A row-panel plus B column-panel")                     \
  NUM(wave_footprint_llc, "cache", "(r_M T_M b_A + r_N T_N b_B) K / L: panels touched by one wave (raster strip)")     \
  NUM(restream_factor, "cache", "Q_hbm / (b_A M K + b_B K N): estimated HBM operand traffic over the minimum")         \
  NUM(effective_intensity, "cache", "2 M N K / (Q_hbm + b_D M N + split/stream-K reduction bytes)")                    \
  /* ---- shared memory ---- */                                                                                        \
  NUM(stage_bytes, "smem", "B_stage = (b_A T_M + b_B T_N) T_K")                                                        \
  NUM(smem_mainloop_bytes, "smem", "S (B_stage aligned + pipeline barriers), from resources()")                        \
  NUM(smem_epilogue_bytes, "smem", "B_epi: schedule-dependent epilogue storage, from resources()")                     \
  NUM(smem_total_bytes, "smem", "B_smem: total request by schedule, from resources()")                                 \
  NUM(f_smem, "smem", "B_smem / C_smem")                                                                               \
  NUM(stages_x_fsmem, "smem", "S f_smem")                                                                              \
  /* ---- registers ---- */                                                                                            \
  NUM(acc_regs_per_thread, "registers", "fp32 accumulators per consumer thread: T_M T_N / (128 n_acc_wg)")             \
  NUM(reg_limit_consumer, "registers", "consumer register budget (setmaxnreg or the per-thread maximum)")              \
  NUM(spills_expected, "registers", "1 if accumulators exceed the consumer register budget")                           \
  /* ---- producer / consumer pipeline ---- */                                                                         \
  NUM(t_tma_ns, "pipeline", "t_TMA = B_stage / (BW_TMA / S_SM), ns")                                                   \
  NUM(t_wgmma_ns, "pipeline", "t_WGMMA = 2 T_M T_N T_K / (n_consumer P_WGMMA), P_WGMMA = (P / S_SM) / 2, ns")          \
  NUM(consumer_producer_ratio, "pipeline", "rho = t_WGMMA / t_TMA: < 1 consumers wait for data")                       \
  NUM(pipeline_fill, "pipeline", "min(1, k_iters_per_unit / S)")                                                       \
  NUM(pipeline_amortization, "pipeline", "k_iters_per_unit / S")                                                       \
  /* ---- runtime knobs ---- */                                                                                        \
  CAT(raster, kRasterLevels, "knobs", "raster order knob")                                                             \
  NUM(raster_along_m, "knobs", "1 if tiles are traversed along M after resolving the heuristic, else 0")               \
  NUM(max_swizzle, "knobs", "max swizzle knob (1, 2, 4, 8)")                                                           \
  NUM(log2_swizzle, "knobs", "log2(max swizzle knob)")                                                                 \
  NUM(swizzle_eff, "knobs", "swizzle CUTLASS applies: 2^get_log_swizzle_size(blocks_m, blocks_n, max_swizzle)")        \
  CAT(decomposition, kDecompositionLevels, "knobs", "decomposition knob (stream-K scheduler)")                         \
  NUM(splits, "knobs", "split-K factor knob")                                                                          \
  /* ---- static time estimate ---- */                                                                                 \
  NUM(est_time_us, "estimate",                                                                                         \
      "max(sched_waves n_K t_step + min(S, k_iters_per_unit) t_TMA, (Q_hbm + b_D M N + reduction) / BW) in us; "      \
      "t_step = max(t_TMA, t_WGMMA), scaled by b_res when basic-kernel CTAs share an SM")                              \
  NUM(est_efficiency, "estimate", "2 M N K / (est_time P)")

enum class Feat : unsigned short {
#define CKS_FEAT_ENUM_NUM(name, group, def) name,
#define CKS_FEAT_ENUM_CAT(name, levels, group, def) name,
  CKS_FEATURE_LIST(CKS_FEAT_ENUM_NUM, CKS_FEAT_ENUM_CAT)
#undef CKS_FEAT_ENUM_NUM
#undef CKS_FEAT_ENUM_CAT
      kCount
};
inline constexpr size_t kNumFeatures = static_cast<size_t>(Feat::kCount);

}  // namespace cks::features_detail
