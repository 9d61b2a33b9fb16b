#include <gtest/gtest.h>

#include <regex>
#include <set>

#include "cks/common.hpp"
#include "cks/compile.hpp"

using namespace cks;

namespace {

bool has(const std::string& text, const std::string& fragment) { return text.find(fragment) != std::string::npos; }

size_t count(const std::string& text, const std::string& fragment) {
  size_t n = 0;
  for (size_t p = text.find(fragment); p != std::string::npos; p = text.find(fragment, p + 1)) ++n;
  return n;
}

}  // namespace

// The complete type of the catalogue's reference kernel, as CUTLASS's generator would write it
// (EmitGemmUniversal3xInstance), named Gemm.
TEST(CodegenCutlassType, CooperativeTnMatchesTheGeneratorExactly) {
  const auto k = KernelDesc::from_canonical("sm90_bf16_tn_128x128x64_1x1x1_s0_cooperative+tma_ws_cooperative+persistent");
  EXPECT_EQ(cutlass_type(k), R"(// sm90_bf16_tn_128x128x64_1x1x1_s0_cooperative+tma_ws_cooperative+persistent
using Gemm_epilogue =
  typename cutlass::epilogue::collective::CollectiveBuilder<
    cutlass::arch::Sm90, cutlass::arch::OpClassTensorOp,
    cute::Shape<cute::_128, cute::_128, cute::_64>,
    cute::Shape<cute::_1, cute::_1, cute::_1>,
    cutlass::epilogue::collective::EpilogueTileAuto,
    float, float,
    void, cutlass::layout::ColumnMajor, 8,
    cutlass::bfloat16_t, cutlass::layout::ColumnMajor, 8,
    cutlass::epilogue::TmaWarpSpecializedCooperative,
    cutlass::epilogue::fusion::LinearCombination<cutlass::bfloat16_t, float, void, float>
  >::CollectiveOp;

using Gemm_mainloop =
  typename cutlass::gemm::collective::CollectiveBuilder<
    cutlass::arch::Sm90, cutlass::arch::OpClassTensorOp,
    cutlass::bfloat16_t, cutlass::layout::RowMajor, 8,
    cutlass::bfloat16_t, cutlass::layout::ColumnMajor, 8,
    float,
    cute::Shape<cute::_128, cute::_128, cute::_64>,
    cute::Shape<cute::_1, cute::_1, cute::_1>,
    cutlass::gemm::collective::StageCountAutoCarveout<static_cast<int>(sizeof(typename Gemm_epilogue::SharedStorage))>,
    cutlass::gemm::KernelTmaWarpSpecializedCooperative
  >::CollectiveOp;

using Gemm_base = cutlass::gemm::kernel::GemmUniversal<
    cute::Shape<int, int, int, int>,
    Gemm_mainloop,
    Gemm_epilogue,
    cutlass::gemm::PersistentScheduler>;

struct Gemm_kernel : public Gemm_base { };

using Gemm = cutlass::gemm::device::GemmUniversalAdapter<Gemm_kernel>;
)");
}

TEST(CodegenCutlassType, PingpongNtWithExplicitStagesAndCluster) {
  const auto k = KernelDesc::from_canonical("sm90_bf16_nt_64x128x64_2x1x1_s5_pingpong+no_smem+persistent");
  const std::string t = cutlass_type(k, "G");
  // nt: A column-major (M contiguous), B row-major (N contiguous).
  EXPECT_TRUE(has(t, "cutlass::bfloat16_t, cutlass::layout::ColumnMajor, 8,\n    cutlass::bfloat16_t, cutlass::layout::RowMajor, 8,"));
  EXPECT_TRUE(has(t, "cute::Shape<cute::_64, cute::_128, cute::_64>"));
  EXPECT_EQ(count(t, "cute::Shape<cute::_2, cute::_1, cute::_1>"), 2u);  // both builders
  EXPECT_TRUE(has(t, "cutlass::gemm::collective::StageCount<5>"));
  EXPECT_FALSE(has(t, "StageCountAutoCarveout"));
  EXPECT_TRUE(has(t, "cutlass::gemm::KernelTmaWarpSpecializedPingpong"));
  EXPECT_TRUE(has(t, "cutlass::epilogue::NoSmemWarpSpecialized,"));
  EXPECT_TRUE(has(t, "cutlass::gemm::PersistentScheduler>;"));
  EXPECT_TRUE(has(t, "struct G_kernel : public G_base { };"));
  EXPECT_TRUE(has(t, "using G = cutlass::gemm::device::GemmUniversalAdapter<G_kernel>;"));
}

TEST(CodegenCutlassType, SchedulerTags) {
  const std::string basic =
      cutlass_type(KernelDesc::from_canonical("sm90_bf16_tt_128x64x64_1x1x1_s0_tma_ws+tma_ws+persistent"));
  EXPECT_TRUE(has(basic, "cutlass::gemm::KernelTmaWarpSpecialized\n"));
  EXPECT_TRUE(has(basic, "cutlass::epilogue::TmaWarpSpecialized,"));
  EXPECT_TRUE(has(basic, "Gemm_epilogue,\n    void>;"));  // the non-persistent kernel's default scheduler
  EXPECT_TRUE(has(basic, "cutlass::bfloat16_t, cutlass::layout::RowMajor, 8,\n    cutlass::bfloat16_t, cutlass::layout::RowMajor, 8,"));
  const std::string sk = cutlass_type(
      KernelDesc::from_canonical("sm90_bf16_nn_256x128x64_4x4x1_s0_cooperative+tma_ws_cooperative+stream_k"));
  EXPECT_TRUE(has(sk, "cutlass::gemm::StreamKScheduler>;"));
  EXPECT_TRUE(has(sk, "cute::Shape<cute::_4, cute::_4, cute::_1>"));
  EXPECT_TRUE(has(sk, "cutlass::bfloat16_t, cutlass::layout::ColumnMajor, 8,\n    cutlass::bfloat16_t, cutlass::layout::ColumnMajor, 8,"));
  // A combination CUTLASS rejects is emitted as asked (its static_assert then fails the compile).
  EXPECT_TRUE(has(cutlass_type(KernelDesc::from_canonical("sm90_bf16_tn_64x128x64_1x1x1_s0_pingpong+tma_ws+stream_k")),
                  "cutlass::gemm::StreamKScheduler>;"));
}

TEST(CodegenTu, OneNamespacePerKernelAndTheAbiTable) {
  const std::vector<KernelDesc> ks{
      KernelDesc::from_canonical("sm90_bf16_tn_128x128x64_1x1x1_s0_cooperative+tma_ws_cooperative+persistent"),
      KernelDesc::from_canonical("sm90_bf16_tn_64x128x64_1x1x1_s0_pingpong+no_smem+persistent"),
      KernelDesc::from_canonical("sm90_bf16_tn_128x256x64_2x1x1_s0_cooperative+tma_ws_cooperative+stream_k")};
  const std::string tu = generate_tu(ks);
  EXPECT_TRUE(has(tu, "#include \"cks/kernel_lib_abi.h\""));
  EXPECT_TRUE(has(tu, "#include \"cutlass/gemm/device/gemm_universal_adapter.h\""));
  EXPECT_TRUE(has(tu, "#include \"cutlass/util/packed_stride.hpp\""));
  // Each kernel lives in its own namespace named after its ID, with the table row at its index.
  std::vector<size_t> rows;
  for (const auto& k : ks) {
    EXPECT_EQ(count(tu, "namespace cks_" + k.id() + " {"), 1u) << k.canonical();
    EXPECT_EQ(count(tu, "// " + k.canonical() + "\n"), 1u);
    const std::string row = "{\"" + k.id() + "\", \"" + k.canonical() + "\", &cks_gen::Runner<cks_" + k.id() + "::Gemm>::";
    ASSERT_EQ(count(tu, row), 1u) << row;
    rows.push_back(tu.find(row));
  }
  EXPECT_TRUE(std::is_sorted(rows.begin(), rows.end()));  // table order = batch order = kernel index
  // Every CUTLASS type name is declared once per kernel namespace: no clash inside the TU.
  EXPECT_EQ(count(tu, "using Gemm = "), ks.size());
  EXPECT_EQ(count(tu, "struct Gemm_kernel : public Gemm_base"), ks.size());
  // The one exported entry point and the ABI table.
  EXPECT_EQ(count(tu, "extern \"C\""), 1u);
  EXPECT_TRUE(has(tu, "const cks_kernel_lib* cks_kernel_lib_get(void) { return &kLib; }"));
  EXPECT_TRUE(has(tu, "CKS_KERNEL_LIB_ABI_VERSION, lib_count, lib_kernel_id, lib_canonical, lib_can_implement,"));
  // Host params built once per op; stream-K workspace reset via CUTLASS's own initialize_workspace.
  EXPECT_TRUE(has(tu, "op->gemm.initialize(args, workspace, stream)"));
  EXPECT_TRUE(has(tu, "return Kernel::initialize_workspace(args, workspace, stream);"));
  EXPECT_TRUE(has(tu, "cutlass::Status run(cudaStream_t stream) override { return gemm.run(stream); }"));
  // The reduction knob: stream-K kernels only, chosen per call (CUTLASS's ReductionMode).
  EXPECT_TRUE(has(tu, "if (!kStreamK && (kn.decomposition != 0 || kn.splits != 1 || kn.reduction != 0)) return false;"));
  EXPECT_TRUE(has(tu, "args.scheduler.reduction_mode = p->knobs.reduction == 1 ? Scheduler::ReductionMode::Nondeterministic"));
}

// A swapped kernel instantiates swap_layout(layout)'s kernel with a row-major C and D, and its table
// row drives it through Runner<Gemm, true> (operands and M, N exchanged); its unswapped twin
// shares the batch under its own ID.
TEST(CodegenTu, SwappedKernelHasARowMajorDAndTheSwappingRunner) {
  const auto base = KernelDesc::from_canonical("sm90_bf16_tt_128x144x64_1x1x1_s0_pingpong+tma_ws+persistent");
  const KernelDesc t = base.swapped_twin();  // an nn kernel
  ASSERT_EQ(t.layout, Layout::nn);
  const std::string type = cutlass_type(t, "Gemm");
  EXPECT_EQ(count(type, "cutlass::bfloat16_t, cutlass::layout::RowMajor, 8,\n    cutlass::bfloat16_t, cutlass::layout::RowMajor, 8,"), 1u)
      << type;  // A and B: tt
  EXPECT_EQ(count(type, "void, cutlass::layout::RowMajor, 8,"), 1u);
  EXPECT_EQ(count(type, "cutlass::bfloat16_t, cutlass::layout::RowMajor, 8,\n    cutlass::epilogue::"), 1u);
  EXPECT_EQ(count(cutlass_type(base, "Gemm"), "cutlass::layout::RowMajor"), 2u);  // A and B only
  const std::string tu = generate_tu({base, t});
  EXPECT_EQ(count(tu, "&cks_gen::Runner<cks_" + t.id() + "::Gemm, true>::can_implement"), 1u);
  EXPECT_EQ(count(tu, "&cks_gen::Runner<cks_" + base.id() + "::Gemm>::can_implement"), 1u);
  EXPECT_TRUE(has(tu, "const int m = kSwap ? p->n : p->m, n = kSwap ? p->m : p->n;"));
}

// A sliced-K kernel instantiates its kernel with an FP32 D (alignment 4) and runs through
// SlicedRunner<Gemm, kSwap>: a batched GEMM over K slices into the workspace's partials, then the
// fixed-order reduction kernel into D. The sliced-K runtime is in a TU only when it holds one (so
// every other kernel's TU text and cache key stay as they were). `cks emit` writes them with the
// same runtime text (Emit.SlicedKernelRunsTheBatchedGemmThenTheReduction).
TEST(CodegenTu, SlicedKernelHasAnFp32DAndTheSlicingRunner) {
  const auto plain = KernelDesc::from_canonical("sm90_bf16_nt_64x32x128_1x1x1_s0_pingpong+no_smem+persistent+swap");
  const KernelDesc s = plain.sliced_variant();
  const std::string type = cutlass_type(s, "Gemm");
  EXPECT_EQ(count(type, "float, cutlass::layout::RowMajor, 4,\n    cutlass::epilogue::NoSmemWarpSpecialized"), 1u) << type;
  EXPECT_TRUE(has(type, "LinearCombination<float, float, void, float>"));
  EXPECT_FALSE(has(type, "cutlass::bfloat16_t, cutlass::layout::RowMajor, 8,\n    cutlass::epilogue::"));
  EXPECT_TRUE(has(cutlass_type(plain, "Gemm"), "LinearCombination<cutlass::bfloat16_t, float, void, float>"));
  const auto unswapped = KernelDesc::from_canonical("sm90_bf16_tn_64x128x128_1x1x1_s0_pingpong+no_smem+persistent+slicek");
  const std::string tu = generate_tu({plain, s, unswapped});
  EXPECT_EQ(count(tu, "&cks_gen::SlicedRunner<cks_" + s.id() + "::Gemm, true>::can_implement"), 1u);
  EXPECT_EQ(count(tu, "&cks_gen::SlicedRunner<cks_" + unswapped.id() + "::Gemm>::can_implement"), 1u);
  EXPECT_EQ(count(tu, "&cks_gen::Runner<cks_" + plain.id() + "::Gemm, true>::can_implement"), 1u);
  EXPECT_EQ(count(tu, "__global__ void slice_reduce("), 1u);
  EXPECT_TRUE(has(tu, "args.mode = cutlass::gemm::GemmUniversalMode::kBatched;"));
  EXPECT_TRUE(has(tu, "slice_reduce<<<reduce_blocks, 256, 0, stream>>>(parts, d, mn, slices);"));
  EXPECT_FALSE(has(generate_tu({plain}), "slice_reduce"));
}

TEST(CodegenTu, RejectsEmptyAndDuplicateBatches) {
  EXPECT_THROW(generate_tu({}), Error);
  const auto k = KernelDesc::from_canonical("sm90_bf16_tn_128x128x64_1x1x1_s0_cooperative+tma_ws_cooperative+persistent");
  EXPECT_THROW(generate_tu({k, k}), Error);
}

TEST(CodegenTu, IsDeterministic) {
  const std::vector<KernelDesc> ks{
      KernelDesc::from_canonical("sm90_bf16_tn_128x128x64_1x1x1_s0_cooperative+tma_ws_cooperative+persistent")};
  EXPECT_EQ(generate_tu(ks), generate_tu(ks));  // the library hash depends on it
}
