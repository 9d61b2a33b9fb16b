// Measures, with nvcc and the CUTLASS 4.2 headers, the compile-time resources of catalogue kernels:
// the auto stage count, sizeof(CollectiveEpilogue::SharedStorage), the epilogue and mainloop
// storage parts, sizeof(GemmKernel::SharedStorage) and the CTA size. No GPU is needed: only types
// are instantiated. cutlass_smem_probe.txt holds its output, which test_resources.cpp compares with
// the catalogue's resource model.
//
// Regenerate (from the repository root; a few minutes for ~250 cases):
//   python3 tests/catalogue/data/cutlass_smem_probe_cases.py 2 120 > /tmp/cases.inc
//   nvcc -std=c++17 -arch=sm_90a --expt-relaxed-constexpr -w -I third_party/cutlass/include \
//        -I /tmp -o /tmp/probe tests/catalogue/data/cutlass_smem_probe.cu && /tmp/probe
// The swapped kernels' measurement, cutlass_smem_probe_swapped.txt (D row-major; the case names
// give the CUTLASS kernel's layout, i.e. swap_layout of the swapped kernel's):
//   python3 tests/catalogue/data/cutlass_smem_probe_cases.py 3 80 rowmajor-d > /tmp/cases.inc, then the same.
#include <cstdio>

#include "cute/tensor.hpp"
#include "cutlass/cutlass.h"
#include "cutlass/epilogue/collective/collective_builder.hpp"
#include "cutlass/gemm/collective/collective_builder.hpp"
#include "cutlass/gemm/dispatch_policy.hpp"
#include "cutlass/gemm/kernel/gemm_universal.hpp"
#include "cutlass/gemm/kernel/tile_scheduler.hpp"

using namespace cute;

template <int TM, int TN, int TK, int CM, int CN, int S, class LA, class LB, class KS, class ES, class Sched,
          class LD = cutlass::layout::ColumnMajor>
void probe(const char* name) {
  using Epi = typename cutlass::epilogue::collective::CollectiveBuilder<
      cutlass::arch::Sm90, cutlass::arch::OpClassTensorOp, Shape<Int<TM>, Int<TN>, Int<TK>>, Shape<Int<CM>, Int<CN>, _1>,
      cutlass::epilogue::collective::EpilogueTileAuto, float, float, void, LD, 8,
      cutlass::bfloat16_t, LD, 8, ES>::CollectiveOp;
  using StageT = cute::conditional_t<S == 0,
      cutlass::gemm::collective::StageCountAutoCarveout<static_cast<int>(sizeof(typename Epi::SharedStorage))>,
      cutlass::gemm::collective::StageCount<(S == 0 ? 2 : S)>>;
  using Main = typename cutlass::gemm::collective::CollectiveBuilder<
      cutlass::arch::Sm90, cutlass::arch::OpClassTensorOp, cutlass::bfloat16_t, LA, 8, cutlass::bfloat16_t, LB, 8, float,
      Shape<Int<TM>, Int<TN>, Int<TK>>, Shape<Int<CM>, Int<CN>, _1>, StageT, KS>::CollectiveOp;
  using K = cutlass::gemm::kernel::GemmUniversal<Shape<int, int, int, int>, Main, Epi, Sched>;
  std::printf("%s stages=%d epi_ss=%zu epi_tensor=%zu epi_pipe=%zu main_tensor=%zu main_pipe=%zu kernel_ss=%zu threads=%u\n",
              name, (int)Main::DispatchPolicy::Stages, sizeof(typename Epi::SharedStorage),
              sizeof(typename Epi::TensorStorage), sizeof(typename Epi::PipelineStorage),
              sizeof(typename Main::TensorStorage), sizeof(typename Main::PipelineStorage),
              sizeof(typename K::SharedStorage), (unsigned)K::MaxThreadsPerBlock);
}

using RM = cutlass::layout::RowMajor;
using CMj = cutlass::layout::ColumnMajor;
using Coop = cutlass::gemm::KernelTmaWarpSpecializedCooperative;
using Ping = cutlass::gemm::KernelTmaWarpSpecializedPingpong;
using WS = cutlass::gemm::KernelTmaWarpSpecialized;
using ECoop = cutlass::epilogue::TmaWarpSpecializedCooperative;
using EWS = cutlass::epilogue::TmaWarpSpecialized;
using ENo = cutlass::epilogue::NoSmemWarpSpecialized;
using P = cutlass::gemm::PersistentScheduler;
using SK = cutlass::gemm::StreamKScheduler;

int main() {
#include "cases.inc"
}
