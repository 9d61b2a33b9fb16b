// Static validity of a kernel descriptor, as CUTLASS 4.2 applies it (static_asserts of the
// builders and kernels, read from the sources and confirmed by compiling with nvcc, and the
// shared-memory opt-in limit), plus the catalogue's two stage policies. Rules are applied in a
// fixed order and the first violation names the descriptor's reason.
#include <algorithm>
#include <fmt/format.h>

#include "catalogue/model.hpp"

namespace cks {
namespace catalogue {

namespace {

bool in(int v, const auto& values) { return std::find(std::begin(values), std::end(values), v) != std::end(values); }

Violation violation(std::string_view rule, std::string reason) { return {std::string(rule), std::move(reason)}; }

}  // namespace

const std::vector<std::string_view>& rule_names() {
  static const std::vector<std::string_view> names{
      "tile_m",         "tile_n",        "tile_n_k_major_b", "tile_k",    "cluster_shape", "cooperative_tile_m",
      "epilogue_schedule", "tile_scheduler", "stages_min",     "smem_capacity", "duplicate_of_auto", "stages_cap", "sliced"};
  return names;
}

Violation first_structural_violation(const KernelDesc& k, const HardwareDesc& hw) {
  // WGMMA is 64 rows per warpgroup atom; the catalogue's CTA M values (ss_op_selector: M % 64).
  if (!in(k.tm, kTileM)) return violation("tile_m", fmt::format("tile M {} is not 64, 128 or 256", k.tm));
  // WGMMA N is 8..256 in steps of 8 (mma_sm90.hpp, extended shapes enabled); CUTLASS's generator
  // additionally never builds a CTA N below 16 (sm90_utils.is_tile_desc_valid).
  if (k.tn % kTileNStep != 0 || k.tn < kTileNMin || k.tn > kTileNMax)
    return violation("tile_n", fmt::format("tile N {} is not a multiple of 8 in [8, 256] (WGMMA N)", k.tn));
  if (k.tn < 16)
    return violation("tile_n", fmt::format("tile N {} is below CUTLASS's minimum CTA N of 16", k.tn));
  // A K-major B (column-major, layouts tn and nn) with T_N % 16 == 8 does not compile: instantiating
  // the kernel fails cute's "Stride Divisibility Condition" (cute/layout.hpp) in the mainloop's B
  // partition, for every schedule. An N-major B (nt, tt) compiles and runs correctly (measured with
  // nvcc 13.0 and CUTLASS 4.2 on an H200; docs/catalogue.md).
  // A swapped kernel's B is the problem's A^T: the rule applies to the kernel's own layout.
  if (!b_row_major(k.kernel_layout()) && k.tn % 16 != 0)
    return violation("tile_n_k_major_b",
                     fmt::format("tile N {} with a K-major B (layout {}) does not compile; it needs N % 16 == 0", k.tn,
                                 to_string(k.kernel_layout())));
  if (!in(k.tk, kTileK)) return violation("tile_k", fmt::format("tile K {} is not 32, 64, 128 or 256", k.tk));
  const bool known_cluster = std::any_of(std::begin(kClusterShapes), std::end(kClusterShapes),
                                         [&](ClusterShape c) { return c.m == k.cm && c.n == k.cn; });
  if (!known_cluster || k.cluster_size() > hw.max_cluster_size_nonportable)
    return violation("cluster_shape", fmt::format("cluster {}x{} is not a supported cluster shape", k.cm, k.cn));
  // sm90_gemm_tma_warpspecialized_cooperative.hpp: static_assert(size<0>(TileShape{}) >= 128); the
  // builder tiles the two consumer warpgroups 2x1 over M, so T_M must split into 64-row halves.
  if (k.mainloop == MainloopSchedule::cooperative && k.tm % 128 != 0)
    return violation("cooperative_tile_m", fmt::format("cooperative schedule needs tile M % 128 == 0 (got {})", k.tm));
  // The TMA epilogues are written for one thread layout: TmaWarpSpecializedCooperative partitions
  // the epilogue tile over the 256 threads of the cooperative consumers (FragmentSize = tile/256,
  // epilogue tile M = 128), TmaWarpSpecialized over one 128-thread consumer warpgroup (tile M = 64).
  if (k.epilogue == EpilogueSchedule::tma_ws_cooperative && k.mainloop != MainloopSchedule::cooperative)
    return violation("epilogue_schedule", fmt::format("epilogue tma_ws_cooperative needs the cooperative mainloop (got {})",
                                                      to_string(k.mainloop)));
  if (k.epilogue == EpilogueSchedule::tma_ws && k.mainloop == MainloopSchedule::cooperative)
    return violation("epilogue_schedule", "epilogue tma_ws needs a tma_ws or pingpong mainloop (got cooperative)");
  // sm90_gemm_tma_warpspecialized_pingpong.hpp: "Ping-pong kernel does not currently support
  // stream-K scheduler"; sm90_gemm_tma_warpspecialized.hpp: the basic kernel takes no scheduler.
  if (k.scheduler == TileSchedulerKind::stream_k && k.mainloop != MainloopSchedule::cooperative)
    return violation("tile_scheduler", fmt::format("stream-K needs the cooperative mainloop (got {})", to_string(k.mainloop)));
  // Sliced-K kernels (KernelDesc::sliced): the no-smem epilogue and a non-stream-K scheduler only.
  if (k.sliced) {
    KernelDesc plain = k;
    plain.sliced = false;
    if (const std::string why = plain.sliced_unsupported(); !why.empty()) return violation("sliced", why);
  }
  return {};
}

Violation first_violation(const KernelDesc& k, const HardwareDesc& hw) {
  if (auto v = first_structural_violation(k, hw); !v.rule.empty()) return v;
  // sm90_mma_tma_gmma_ss_warpspecialized.hpp: static_assert(Stages >= 2).
  if (k.stages == 1 || k.stages < 0)
    return violation("stages_min", fmt::format("explicit stage count {} is below 2", k.stages));
  const int stages = resolved_stages(k);
  if (stages < 2)
    return violation("stages_min", fmt::format("auto carve-out leaves {} stage(s); the mainloop needs 2", stages));
  const long smem = smem_layout(k, stages).total;
  if (smem > hw.smem_per_block_optin_bytes)
    return violation("smem_capacity", fmt::format("shared memory {} B ({} stages) exceeds the {} B opt-in limit", smem,
                                                  stages, hw.smem_per_block_optin_bytes));
  // StageCount<S> with S equal to the auto carve-out is the same instantiated kernel type.
  if (k.stages > 0 && k.stages == auto_stages(k))
    return violation("duplicate_of_auto", fmt::format("explicit {} stages is the auto-stage kernel (s0)", k.stages));
  if (k.stages > kMaxExplicitStages)
    return violation("stages_cap", fmt::format("explicit stage count {} is above the catalogue's cap of {} (use auto)",
                                               k.stages, kMaxExplicitStages));
  return {};
}

}  // namespace catalogue

std::string invalid_reason(const KernelDesc& k, const HardwareDesc& hw) {
  return catalogue::first_violation(k, hw).reason;
}

}  // namespace cks
