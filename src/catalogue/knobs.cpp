// Runtime-knob settings a kernel admits: the candidate axis that needs no recompilation.
//
// Persistent tile scheduler (ping-pong, cooperative): raster order {along_m, along_n} x
// max_swizzle {1, 2, 4, 8}. The raster heuristic is left out: CUTLASS resolves it per problem to
// along_m or along_n (get_rasterization_order), so it always duplicates one of the explicit settings.
//
// Stream-K scheduler (cooperative only): decomposition {heuristic, stream_k, split_k x {2, 4, 8}}
// (KnobScope::measurable adds split_k x {16, 32} and the nondeterministic reduction of every
// stream-K setting above and these: plans measure them before the selector ranks them)
// x raster {along_m, along_n}, max_swizzle 1. data_parallel is left out: it runs exactly the
// persistent schedule, which the same configuration's persistent kernel already covers. The
// heuristic stays: it picks data-parallel, split-K or a hybrid Stream-K split per problem, a policy
// none of the explicit settings reproduce. Swizzle is fixed at 1 to keep the candidate count in
// check: Stream-K matters where the tile count is small, swizzle where it is large.
//
// Basic (non-persistent) TMA warp-specialized kernel: grid = tiles, no scheduler arguments, so
// only the default setting.
//
// Sliced-K kernels (KernelDesc::sliced): decomposition split_k with the slice count S in
// {2, 3, 4, 6, 8, 12, 16} (K % (8 S) == 0, or the kernel cannot implement the problem), x raster
// {along_m, along_n} with max_swizzle 1 for the persistent ones (the basic kernel: raster
// heuristic). Every scope alike: no catalogue holds them, so only plans ask.
#include <vector>

#include "cks/catalogue.hpp"

namespace cks {

namespace {
constexpr RasterOrder kRasters[] = {RasterOrder::along_m, RasterOrder::along_n};
constexpr int kSwizzles[] = {1, 2, 4, 8};
constexpr int kSplits[] = {2, 4, 8};
// Measured by plans (KnobScope::measurable), not yet ranked by the selector.
constexpr int kMeasureSplits[] = {16, 32};
constexpr int kSlices[] = {2, 3, 4, 6, 8, 12, 16};
}  // namespace

std::vector<RuntimeKnobs> knob_settings(const KernelDesc& k, KnobScope scope) {
  std::vector<RuntimeKnobs> out;
  if (k.sliced) {
    const bool persistent = k.mainloop != MainloopSchedule::tma_ws;
    for (RasterOrder r : persistent ? std::vector<RasterOrder>(std::begin(kRasters), std::end(kRasters))
                                    : std::vector<RasterOrder>{RasterOrder::heuristic})
      for (int s : kSlices) out.push_back({r, 1, Decomposition::split_k, s});
    return out;
  }
  if (k.mainloop == MainloopSchedule::tma_ws) {
    out.push_back(RuntimeKnobs{});
    return out;
  }
  for (RasterOrder r : kRasters) {
    const size_t first = out.size();  // this raster order's settings
    if (k.scheduler == TileSchedulerKind::persistent) {
      for (int s : kSwizzles) out.push_back({r, s, Decomposition::heuristic, 1});
    } else {
      out.push_back({r, 1, Decomposition::heuristic, 1});
      out.push_back({r, 1, Decomposition::stream_k, 1});
      for (int splits : kSplits) out.push_back({r, 1, Decomposition::split_k, splits});
      if (scope == KnobScope::measurable) {
        for (int splits : kMeasureSplits) out.push_back({r, 1, Decomposition::split_k, splits});
        const size_t deterministic = out.size();
        for (size_t i = first; i < deterministic; ++i) {
          out.push_back(out[i]);
          out.back().reduction = Reduction::nondeterministic;
        }
      }
    }
  }
  return out;
}

RuntimeKnobs with_reduction(const KernelDesc& k, RuntimeKnobs knobs, Reduction r) {
  if (k.scheduler == TileSchedulerKind::stream_k) knobs.reduction = r;
  return knobs;
}

}  // namespace cks
