// cutlass_type(): the exact CUTLASS 4.2 C++ type a catalogue kernel instantiates.
//
// The text mirrors what CUTLASS's own generator emits for a 3.x SM90 GEMM
// (python/cutlass_library/gemm_operation.py, EmitGemmUniversal3xInstance): an epilogue
// CollectiveBuilder, a mainloop CollectiveBuilder whose auto stage count carves out the
// epilogue's shared storage, a GemmUniversal kernel, and a *named* kernel struct derived from it.
// The named struct matters: device_kernel<Name> is then mangled with the kernel's own name, which
// is how the compile pool maps `ptxas -v` entries back to kernels. The block ends with
// `using <name> = GemmUniversalAdapter<...>`, the device-level handle the generated library drives.
//
// A swapped kernel (KernelDesc::swapped) instantiates the kernel of swap_layout(layout) with a
// row-major C and D: the CUTLASS problem is the transposed one, (N, M, K), and its row-major D^T
// is the caller's column-major D. The generated library swaps the operands and dimensions.
//
// A sliced-K kernel (KernelDesc::sliced) is the same kernel with an FP32 D (alignment 4): the
// batched GEMM over K slices whose partials the generated library then sums into the bf16 D.
//
// One deliberate difference from the generator: for the C = void epilogue the generator passes
// AlignmentC = 0 to TMA epilogues (get_tma_alignment(void)) and 8 to the no-smem one; we pass 8
// everywhere. The SM90 builders ignore AlignmentC when C is void (detail::is_aligned is true for a
// void element), so the instantiated kernel is the same.
#include <fmt/format.h>

#include "cks/catalogue.hpp"

namespace cks {

namespace {

const char* layout_tag(bool row_major) {
  return row_major ? "cutlass::layout::RowMajor" : "cutlass::layout::ColumnMajor";
}

const char* kernel_schedule_tag(MainloopSchedule s) {
  switch (s) {
    case MainloopSchedule::tma_ws: return "cutlass::gemm::KernelTmaWarpSpecialized";
    case MainloopSchedule::pingpong: return "cutlass::gemm::KernelTmaWarpSpecializedPingpong";
    case MainloopSchedule::cooperative: return "cutlass::gemm::KernelTmaWarpSpecializedCooperative";
  }
  return "";
}

const char* epilogue_schedule_tag(EpilogueSchedule s) {
  switch (s) {
    case EpilogueSchedule::tma_ws: return "cutlass::epilogue::TmaWarpSpecialized";
    case EpilogueSchedule::tma_ws_cooperative: return "cutlass::epilogue::TmaWarpSpecializedCooperative";
    case EpilogueSchedule::no_smem: return "cutlass::epilogue::NoSmemWarpSpecialized";
  }
  return "";
}

// The non-persistent TMA warp-specialized kernel takes the default (void) scheduler; the persistent
// kernels name theirs (TileSchedulerTag in library.py). Combinations CUTLASS rejects (stream-K with
// the basic or ping-pong kernel) are emitted as asked, so they fail its static_asserts and are
// recorded as compile errors rather than silently compiled as something else.
const char* tile_scheduler_tag(const KernelDesc& k) {
  if (k.scheduler == TileSchedulerKind::stream_k) return "cutlass::gemm::StreamKScheduler";
  return k.mainloop == MainloopSchedule::tma_ws ? "void" : "cutlass::gemm::PersistentScheduler";
}

}  // namespace

std::string cutlass_type(const KernelDesc& k, std::string_view type_name) {
  const std::string n(type_name);
  const std::string tile = fmt::format("cute::Shape<cute::_{}, cute::_{}, cute::_{}>", k.tm, k.tn, k.tk);
  const std::string cluster = fmt::format("cute::Shape<cute::_{}, cute::_{}, cute::_1>", k.cm, k.cn);
  const std::string stages =
      k.stages > 0 ? fmt::format("cutlass::gemm::collective::StageCount<{}>", k.stages)
                   : fmt::format("cutlass::gemm::collective::StageCountAutoCarveout<"
                                 "static_cast<int>(sizeof(typename {}_epilogue::SharedStorage))>",
                                 n);
  return fmt::format(
      R"(// {canonical}
using {n}_epilogue =
  typename cutlass::epilogue::collective::CollectiveBuilder<
    cutlass::arch::Sm90, cutlass::arch::OpClassTensorOp,
    {tile},
    {cluster},
    cutlass::epilogue::collective::EpilogueTileAuto,
    float, float,
    void, {layout_d}, 8,
    {element_d}, {layout_d}, {align_d},
    {epi_schedule},
    cutlass::epilogue::fusion::LinearCombination<{element_d}, float, void, float>
  >::CollectiveOp;

using {n}_mainloop =
  typename cutlass::gemm::collective::CollectiveBuilder<
    cutlass::arch::Sm90, cutlass::arch::OpClassTensorOp,
    cutlass::bfloat16_t, {layout_a}, 8,
    cutlass::bfloat16_t, {layout_b}, 8,
    float,
    {tile},
    {cluster},
    {stages},
    {kernel_schedule}
  >::CollectiveOp;

using {n}_base = cutlass::gemm::kernel::GemmUniversal<
    cute::Shape<int, int, int, int>,
    {n}_mainloop,
    {n}_epilogue,
    {scheduler}>;

struct {n}_kernel : public {n}_base {{ }};

using {n} = cutlass::gemm::device::GemmUniversalAdapter<{n}_kernel>;
)",
      fmt::arg("canonical", k.canonical()), fmt::arg("n", n), fmt::arg("tile", tile),
      fmt::arg("cluster", cluster), fmt::arg("epi_schedule", epilogue_schedule_tag(k.epilogue)),
      fmt::arg("layout_a", layout_tag(a_row_major(k.kernel_layout()))),
      fmt::arg("layout_b", layout_tag(b_row_major(k.kernel_layout()))), fmt::arg("layout_d", layout_tag(k.swapped)), fmt::arg("stages", stages),
      fmt::arg("kernel_schedule", kernel_schedule_tag(k.mainloop)), fmt::arg("scheduler", tile_scheduler_tag(k)),
      // A sliced-K kernel stores FP32 partials (16-byte aligned: 4 elements); the others bf16 D.
      fmt::arg("element_d", k.sliced ? "float" : "cutlass::bfloat16_t"), fmt::arg("align_d", k.sliced ? 4 : 8));
}

}  // namespace cks
