// Internal detail of the catalogue's CUTLASS 4.2 model: the epilogue tile, the exact shared-memory
// layout of the kernel, and the named validity rules. resources() and invalid_reason() are thin
// views over these; the CLI's `catalogue show` prints the breakdown. Every number here is what
// CUTLASS computes at compile time for our fixed element types (A, B, D = bf16, C = void,
// accumulator and epilogue compute = f32, D column-major, alignment 8); docs/catalogue.md lists the
// source each formula comes from.
#pragma once
#include <string>
#include <string_view>
#include <vector>

#include "cks/catalogue.hpp"
#include "cks/hw.hpp"

namespace cks::catalogue {

// cutlass::gemm::collective::detail::sm90_smem_capacity_bytes: the capacity the mainloop builder
// divides among stages for StageCountAutoCarveout. A compile-time constant of CUTLASS, independent
// of the HardwareDesc (which decides whether the resulting kernel can launch).
inline constexpr long kBuilderSmemCapacity = 232448;
// sizeof(PipelineTmaAsync<1>::SharedStorage): one full + one empty mbarrier per stage.
inline constexpr long kBarrierBytesPerStage = 16;
// Non-accumulator registers a consumer thread keeps live in the mainloop (descriptors, pipeline
// state, loop counters, addresses). CUTLASS's own setmaxnreg switch implies this headroom: it raises
// the consumer budget from 232 to 240 once accumulators reach 208 registers (232 - 208 = 24).
inline constexpr int kConsumerRegisterOverhead = 24;

// Allowed axis values (docs/catalogue.md, "Axes").
inline constexpr int kTileM[] = {64, 128, 256};
inline constexpr int kTileK[] = {32, 64, 128, 256};
inline constexpr int kTileNMin = 8, kTileNMax = 256, kTileNStep = 8;
// Explicit stage counts run from 2 to this cap (where they fit and differ from the auto count);
// the auto carve-out supplies the deepest pipeline that fits. Sweeping every count that fits (up
// to 45 stages for a 64x16x32 tile) would double the catalogue (nt: 137k kernels and 820k candidates
// instead of 66k and 410k), adding mostly points on the flat part of the latency-hiding curve.
inline constexpr int kMaxExplicitStages = 4;
struct ClusterShape {
  int m, n;
};
// Portable cluster shapes up to 8 CTAs, plus 4x4 (16 CTAs, non-portable) which CUTLASS emits too.
inline constexpr ClusterShape kClusterShapes[] = {{1, 1}, {2, 1}, {1, 2}, {2, 2}, {4, 1}, {1, 4},
                                                  {4, 2}, {2, 4}, {8, 1}, {1, 8}, {4, 4}};
struct ScheduleCombo {
  MainloopSchedule mainloop;
  EpilogueSchedule epilogue;
  TileSchedulerKind scheduler;
};
// Every (mainloop, epilogue, scheduler) triple CUTLASS 4.2 can instantiate (rules epilogue_schedule
// and tile_scheduler in validity.cpp reject the others).
inline constexpr ScheduleCombo kScheduleCombos[] = {
    {MainloopSchedule::tma_ws, EpilogueSchedule::tma_ws, TileSchedulerKind::persistent},
    {MainloopSchedule::tma_ws, EpilogueSchedule::no_smem, TileSchedulerKind::persistent},
    {MainloopSchedule::pingpong, EpilogueSchedule::tma_ws, TileSchedulerKind::persistent},
    {MainloopSchedule::pingpong, EpilogueSchedule::no_smem, TileSchedulerKind::persistent},
    {MainloopSchedule::cooperative, EpilogueSchedule::tma_ws_cooperative, TileSchedulerKind::persistent},
    {MainloopSchedule::cooperative, EpilogueSchedule::no_smem, TileSchedulerKind::persistent},
    {MainloopSchedule::cooperative, EpilogueSchedule::tma_ws_cooperative, TileSchedulerKind::stream_k},
    {MainloopSchedule::cooperative, EpilogueSchedule::no_smem, TileSchedulerKind::stream_k},
};

// EpilogueTileAuto as sm90_compute_tile_shape_or_override resolves it (TMA epilogues only):
//   cooperative: (min(128, T_M), gcd(min(32, T_N), T_N))
//   tma_ws:      (min(64, T_M),  gcd(min(32, T_N), T_N))   (N_perf = 32 for a 16-bit D)
// subtiles = (T_M / m) (T_N / n); StagesD = min(subtiles, 2); StagesC = min(subtiles, 4)
// (sm90_get_tma_dispatch_policy; C = void so no smem reuse).
struct EpilogueTile {
  int m = 0, n = 0;
  int subtiles = 0;
  int stages_d = 0, stages_c = 0;
};
EpilogueTile epilogue_tile(const KernelDesc& k);  // all zero for the no-smem epilogue

// sizeof(CollectiveEpilogue::SharedStorage), the StageCountAutoCarveout argument.
long epilogue_shared_storage(const KernelDesc& k);
// The stage count StageCountAutoCarveout resolves to (may be < 2: then the kernel does not exist).
int auto_stages(const KernelDesc& k);
int resolved_stages(const KernelDesc& k);  // k.stages, or auto_stages(k) when k.stages == 0

// sizeof(GemmKernel::SharedStorage) split into its parts (bytes). `padding` is what alignment adds;
// the parts sum to `total`, the dynamic shared memory the kernel requests.
struct SmemLayout {
  int stages = 0;
  long mainloop_tensors = 0;  // stages (T_M + T_N) T_K * 2
  long epilogue_tensors = 0;  // D staging subtiles + fusion storage (1 placeholder byte for no-smem)
  long barriers = 0;          // mainloop, epilogue-load and ordering barriers + tile scheduler storage
  long padding = 0;
  long total = 0;
};
SmemLayout smem_layout(const KernelDesc& k, int stages);

// fp32 accumulator registers per consumer thread: T_M T_N / 256 for cooperative (two warpgroups
// share a tile), T_M T_N / 128 for ping-pong and the basic kernel (one warpgroup owns a tile).
int accumulator_registers(const KernelDesc& k);
// Consumer register budget: setmaxnreg<MmaRegisterRequirement> for the persistent kernels (240 when
// accumulators reach 208 registers, else 232); the basic kernel does not use setmaxnreg, so its
// consumers get the per-thread maximum.
int consumer_register_limit(const KernelDesc& k, const HardwareDesc& hw);
// Cluster of more CTAs than the portable maximum (needs cudaFuncAttributeNonPortableClusterSizeAllowed,
// which cutlass::ClusterLauncher sets).
bool non_portable_cluster(const KernelDesc& k, const HardwareDesc& hw);

// The named validity rules, in the order invalid_reason() applies them. Each has a stable key
// (used by stats and the CUTLASS cross-check) and a reason text with the offending values.
struct Violation {
  std::string rule;    // e.g. "smem_capacity"
  std::string reason;  // one line, e.g. "shared memory 239616 B exceeds the 232448 B opt-in limit"
};
// First violated rule, or an empty Violation (rule == "") when the descriptor is valid.
Violation first_violation(const KernelDesc& k, const HardwareDesc& hw);
// Rules that do not depend on the stage count (the enumeration checks these once per stage sweep).
Violation first_structural_violation(const KernelDesc& k, const HardwareDesc& hw);
// Keys of all rules, in order, for listings.
const std::vector<std::string_view>& rule_names();

}  // namespace cks::catalogue
