// `cks emit` (issue 17, item 4): a complete, self-contained .cu file for one kernel and its
// runtime knobs, reusing the kernel libraries' generator. EmitNvcc.* compiles one emitted file
// with the real nvcc (ctest label `nvcc`, skipped without nvcc or the CUTLASS headers).
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <tuple>

#include "cks/common.hpp"
#include "cks/compile.hpp"
#include "cli/cli_run.hpp"
#include "common/subprocess.hpp"
#include "compile/compile_test_util.hpp"
#include "common/test_util.hpp"

using namespace cks;

namespace {

const char* kCoop = "sm90_bf16_tn_128x128x64_1x1x1_s0_cooperative+tma_ws_cooperative+persistent";
const char* kStreamK = "sm90_bf16_tn_128x256x64_2x1x1_s0_cooperative+tma_ws_cooperative+stream_k";
const char* kBasic = "sm90_bf16_tt_128x64x64_1x1x1_s0_tma_ws+tma_ws+persistent";
// Sliced-K kernels (docs/catalogue.md, "Sliced-K kernels"): a swapped ping-pong one (the kernel of
// CompileNvcc.SlicedKernelBuildsAndSizesItsPartials), an unswapped one and a basic (non-persistent) one.
const char* kSliced = "sm90_bf16_nt_64x32x128_1x1x1_s0_pingpong+no_smem+persistent+swap+slicek";
const char* kSlicedTn = "sm90_bf16_tn_64x128x128_1x1x1_s0_pingpong+no_smem+persistent+slicek";
const char* kSlicedBasic = "sm90_bf16_tn_64x64x128_1x1x1_s0_tma_ws+no_smem+persistent+slicek";

size_t count(const std::string& s, const std::string& what) {
  size_t n = 0;
  for (size_t p = s.find(what); p != std::string::npos; p = s.find(what, p + 1)) ++n;
  return n;
}

using test::slurp;

}  // namespace

// The kernel libraries' translation unit is the executable cache's key (library_hash hashes its
// text): emit must not change it, or every cached kernel library is rebuilt on the next lease.
// A deliberate change of the generated TU updates this constant (last: the reduction knob,
// cks_knobs.reduction and ABI 2, session 35; every cached library is built once more).
TEST(CodegenTu, TextIsUnchangedByEmit) {
  EXPECT_EQ(hex64(fnv1a64(generate_tu({KernelDesc::from_canonical(kCoop)}))), "6bc76775ed778f46");
}

TEST(Emit, DefinesPrecedeEveryInclude) {
  const std::string src = generate_standalone(KernelDesc::from_canonical(kCoop), RuntimeKnobs::from_canonical("r=m,s=2,d=h,k=1"));
  const size_t first_include = src.find("#include");
  ASSERT_NE(first_include, std::string::npos);
  for (const char* d : {"#define NDEBUG", "#define CUTE_SM90_EXTENDED_MMA_SHAPES_ENABLED", "#error"}) {
    const size_t at = src.find(d);
    ASSERT_NE(at, std::string::npos) << d;
    EXPECT_LT(at, first_include) << d;
  }
  EXPECT_NE(src.find("#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ != 900"), std::string::npos);
  // Self-contained: the ABI types inlined, no cks header included.
  EXPECT_EQ(src.find("#include \"cks/"), std::string::npos);
  EXPECT_EQ(count(src, "typedef struct cks_op_s* cks_op;"), 1u);
  EXPECT_NE(src.find("#include \"cutlass/gemm/device/gemm_universal_adapter.h\""), std::string::npos);
}

TEST(Emit, ReusesTheLibraryGeneratorAndBakesTheKnobs) {
  const KernelDesc k = KernelDesc::from_canonical(kStreamK);
  const std::string src = generate_standalone(k, RuntimeKnobs::from_canonical("r=n,s=1,d=sk,k=4"), "my_gemm");
  // The kernel's exact type (cutlass_type) in its own namespace, and the libraries' runtime part.
  EXPECT_EQ(count(src, "namespace cks_" + k.id() + " {"), 2u);  // the type, then the knobs
  EXPECT_NE(src.find("struct Gemm_kernel : public Gemm_base"), std::string::npos);
  EXPECT_NE(src.find("cutlass::gemm::StreamKScheduler"), std::string::npos);
  EXPECT_NE(src.find("static bool make_arguments(const cks_problem* p, Arguments& args)"), std::string::npos);
  // raster along N = 2, swizzle 1, split-K = 2, 4 splits, deterministic reduction.
  EXPECT_NE(src.find("constexpr cks_knobs kKnobs = {2, 1, 2, 4, 0};"), std::string::npos);
  // The nondeterministic reduction (measurable, outside the catalogue) is emitted as asked.
  const std::string nd = generate_standalone(k, RuntimeKnobs::from_canonical("r=n,s=1,d=sk,k=16,x=n"), "my_gemm");
  EXPECT_NE(nd.find("constexpr cks_knobs kKnobs = {2, 1, 2, 16, 1};"), std::string::npos);
  EXPECT_NE(nd.find("ReductionMode::Nondeterministic"), std::string::npos);
  EXPECT_NE(src.find("extern \"C\" cudaError_t my_gemm(int M, int N, int K, const void* A, const void* B, void* D, int64_t lda,"),
            std::string::npos);
  EXPECT_NE(src.find("Runner::make_arguments(&p, args)"), std::string::npos);
  // The nvcc line: the kernel libraries' flags less the shared-library ones.
  const auto flags = standalone_nvcc_flags();
  for (const char* f : {"-DNDEBUG", "-DCUTE_SM90_EXTENDED_MMA_SHAPES_ENABLED", "-std=c++17", "--expt-relaxed-constexpr",
                        "-gencode=arch=compute_90a,code=sm_90a", "-O3"})
    EXPECT_NE(std::find(flags.begin(), flags.end(), std::string(f)), flags.end()) << f;
  for (const auto& f : flags) {
    EXPECT_NE(f, "-shared");
    EXPECT_EQ(f.find("fPIC"), std::string::npos);
  }
  std::string line = "//   nvcc";
  for (const auto& f : flags) line += " " + f;
  EXPECT_NE(src.find(line + " -I$CUTLASS/include -I$CUTLASS/tools/util/include -c my_gemm.cu"), std::string::npos);
}

TEST(Emit, RejectsKnobsTheKernelDoesNotTake) {
  // A non-persistent kernel takes only the defaults; a persistent one no decomposition.
  EXPECT_NO_THROW(generate_standalone(KernelDesc::from_canonical(kBasic), RuntimeKnobs{}));
  EXPECT_THROW(generate_standalone(KernelDesc::from_canonical(kBasic), RuntimeKnobs::from_canonical("r=m,s=2,d=h,k=1")), Error);
  EXPECT_THROW(generate_standalone(KernelDesc::from_canonical(kCoop), RuntimeKnobs::from_canonical("r=m,s=1,d=sk,k=2")), Error);
  EXPECT_THROW(generate_standalone(KernelDesc::from_canonical(kCoop), RuntimeKnobs::from_canonical("r=m,s=3,d=h,k=1")), Error);
  EXPECT_THROW(generate_standalone(KernelDesc::from_canonical(kCoop), RuntimeKnobs{}, "run gemm"), Error);
  // The reduction is the stream-K scheduler's: refused on a persistent kernel.
  EXPECT_THROW(generate_standalone(KernelDesc::from_canonical(kCoop), RuntimeKnobs::from_canonical("r=m,s=1,d=h,k=1,x=n")), Error);
  // Every catalogue setting of a kernel is accepted.
  for (const auto& kn : knob_settings(KernelDesc::from_canonical(kStreamK)))
    EXPECT_NO_THROW(generate_standalone(KernelDesc::from_canonical(kStreamK), kn)) << kn.canonical();
}

// A sliced-K kernel's file: the libraries' sliced-K runtime (slice_reduce, SlicedOp, SlicedRunner)
// beside the common one, and a host function that cuts K into the knobs' slices, takes the partials
// and CUTLASS's workspace in one cudaMallocAsync, runs the batched GEMM and launches the reduction
// (SlicedOp::run) on the caller's stream.
TEST(Emit, SlicedKernelRunsTheBatchedGemmThenTheReduction) {
  const KernelDesc k = KernelDesc::from_canonical(kSliced);
  const std::string src = generate_standalone(k, RuntimeKnobs::from_canonical("r=m,s=1,d=sk,k=4"), "sliced_gemm");
  EXPECT_NE(src.find("//   kernel    " + k.id() + "  " + std::string(kSliced)), std::string::npos);
  EXPECT_NE(src.find("//   sliced-K  a batched GEMM over the knobs' S K slices"), std::string::npos);
  // The runtime text of generate_tu, sliced-K part included, once; the kernel's FP32-D type.
  EXPECT_EQ(count(src, "__global__ void slice_reduce("), 1u);
  EXPECT_EQ(count(src, "struct SlicedOp final : cks_op_s {"), 1u);
  EXPECT_EQ(count(src, "struct SlicedRunner {"), 1u);
  EXPECT_NE(src.find("slice_reduce<<<reduce_blocks, 256, 0, stream>>>(parts, d, mn, slices);"), std::string::npos);
  EXPECT_NE(src.find("args.mode = cutlass::gemm::GemmUniversalMode::kBatched;"), std::string::npos);
  EXPECT_NE(src.find("float, cutlass::layout::RowMajor, 4,\n      cutlass::epilogue::NoSmemWarpSpecialized"),
            std::string::npos);
  // Split-K into 4 slices along M, swizzle 1, deterministic; the slicing runner, swapped.
  EXPECT_NE(src.find("constexpr cks_knobs kKnobs = {1, 1, 2, 4, 0};"), std::string::npos);
  EXPECT_NE(src.find("extern \"C\" cudaError_t sliced_gemm(int M, int N, int K, const void* A, const void* B, void* D,"),
            std::string::npos);
  EXPECT_NE(src.find("using Runner = cks_gen::SlicedRunner<Gemm, true>;"), std::string::npos);
  EXPECT_EQ(src.find("using Runner = cks_gen::Runner<"), std::string::npos);
  // can_implement: K % (8 S) and the 1 GiB of partials (slices_fit), then CUTLASS's; ldd packed only.
  EXPECT_NE(src.find("(ldd != 0 && ldd != M) || !Runner::slices_fit(&p))\n    return cudaErrorInvalidValue;"),
            std::string::npos);
  EXPECT_NE(src.find("if (Gemm::can_implement(args) != cutlass::Status::kSuccess) return cudaErrorInvalidValue;"),
            std::string::npos);
  // A slice's batch stride follows the leading dimension asked for (the caller's A is the kernel's B).
  EXPECT_NE(src.find("!cks_gen::set_leading_dim(args.mainloop.dB, lda)"), std::string::npos);
  EXPECT_NE(src.find("cute::get<2>(args.mainloop.dA) = k_slice * static_cast<int64_t>(cute::get<1>(args.mainloop.dA));"),
            std::string::npos);
  // The workspace: the partials, then CUTLASS's own; D of the batched GEMM is the partials.
  EXPECT_NE(src.find("const size_t workspace_bytes = partial_bytes + Gemm::get_workspace_size(args);"), std::string::npos);
  EXPECT_NE(src.find("cudaMallocAsync(&workspace, workspace_bytes, stream)"), std::string::npos);
  EXPECT_NE(src.find("op.workspace = static_cast<char*>(workspace) + partial_bytes;"), std::string::npos);
  EXPECT_NE(src.find("args.epilogue.ptr_D = static_cast<float*>(workspace);"), std::string::npos);
  EXPECT_NE(src.find("status = op.gemm.initialize(args, op.workspace, stream);"), std::string::npos);
  EXPECT_NE(src.find("status = op.run(stream);"), std::string::npos);
  EXPECT_NE(src.find("cudaFreeAsync(workspace, stream);"), std::string::npos);
  // An unswapped one sets A's and B's own strides; every file without a sliced-K kernel lacks the part.
  const std::string tn = generate_standalone(KernelDesc::from_canonical(kSlicedTn), RuntimeKnobs::from_canonical("r=n,s=1,d=sk,k=12"));
  EXPECT_NE(tn.find("using Runner = cks_gen::SlicedRunner<Gemm, false>;"), std::string::npos);
  EXPECT_NE(tn.find("!cks_gen::set_leading_dim(args.mainloop.dA, lda)"), std::string::npos);
  EXPECT_NE(tn.find("constexpr cks_knobs kKnobs = {2, 1, 2, 12, 0};"), std::string::npos);
  EXPECT_EQ(generate_standalone(KernelDesc::from_canonical(kCoop), RuntimeKnobs{}).find("slice_reduce"), std::string::npos);
  // Every setting of a sliced-K kernel is written.
  for (const char* c : {kSliced, kSlicedTn, kSlicedBasic})
    for (const auto& kn : knob_settings(KernelDesc::from_canonical(c), KnobScope::measurable))
      EXPECT_NO_THROW(generate_standalone(KernelDesc::from_canonical(c), kn)) << c << " " << kn.canonical();
}

// A sliced-K kernel has no CUTLASS default: its slice count is the knob. Without --knobs emit takes
// its first setting (2 slices, what `cks collect` measures among the rest); anything else outside
// its settings is an error of one line listing them, CUTLASS's defaults included.
TEST(Emit, SlicedKernelTakesOnlyItsSettings) {
  const KernelDesc k = KernelDesc::from_canonical(kSliced);
  EXPECT_EQ(standalone_default_knobs(k).canonical(), "r=m,s=1,d=sk,k=2");
  EXPECT_EQ(standalone_default_knobs(KernelDesc::from_canonical(kSlicedBasic)).canonical(), "r=h,s=1,d=sk,k=2");
  EXPECT_EQ(standalone_default_knobs(KernelDesc::from_canonical(kCoop)), RuntimeKnobs{});
  for (const char* c : {kSliced, kSlicedBasic}) {
    const KernelDesc s = KernelDesc::from_canonical(c);
    const auto settings = knob_settings(s, KnobScope::measurable);
    EXPECT_NE(std::find(settings.begin(), settings.end(), standalone_default_knobs(s)), settings.end()) << c;
  }
  for (const char* bad : {"r=h,s=1,d=h,k=1", "r=m,s=1,d=sk,k=5", "r=m,s=1,d=sk,k=32", "r=m,s=1,d=sk,k=4,x=n",
                          "r=m,s=2,d=sk,k=4", "r=m,s=1,d=sk,k=1", "r=m,s=1,d=h,k=1", "r=h,s=1,d=sk,k=4"}) {
    try {
      generate_standalone(k, RuntimeKnobs::from_canonical(bad));
      ADD_FAILURE() << "emitted " << bad;
    } catch (const Error& e) {
      const std::string what = e.what();
      EXPECT_EQ(what.find('\n'), std::string::npos) << what;
      EXPECT_NE(what.find("are not a setting of sliced-K kernel " + k.id()), std::string::npos) << what;
      EXPECT_NE(what.find("; it takes r=m,s=1,d=sk,k=2 | r=m,s=1,d=sk,k=3 |"), std::string::npos) << what;
      EXPECT_NE(what.find("| r=n,s=1,d=sk,k=16"), std::string::npos) << what;
      EXPECT_EQ(what.substr(what.find("; it takes ")).find("d=h"), std::string::npos) << what;  // no CUTLASS default
    }
  }
  // The basic sliced-K kernel: raster heuristic only.
  EXPECT_THROW(generate_standalone(KernelDesc::from_canonical(kSlicedBasic), RuntimeKnobs::from_canonical("r=m,s=1,d=sk,k=2")),
               Error);
}

TEST(EmitCli, PrintsOrWritesTheFileAndErrsInOneLine) {
  const KernelDesc k = KernelDesc::from_canonical(kCoop);
  const auto by_id = test::run_cli({"emit", k.id(), "--knobs", "r=m,s=2,d=h,k=1"});
  ASSERT_EQ(by_id.code(), 0) << by_id.err;
  EXPECT_EQ(by_id.out, generate_standalone(k, RuntimeKnobs::from_canonical("r=m,s=2,d=h,k=1")));
  const auto by_name = test::run_cli({"emit", kCoop, "--knobs", "r=m,s=2,d=h,k=1", "--layout", "tn"});
  ASSERT_EQ(by_name.code(), 0) << by_name.err;
  EXPECT_EQ(by_name.out, by_id.out);
  // No --knobs: CUTLASS's defaults, with a note.
  const auto defaults = test::run_cli({"emit", k.id()});
  ASSERT_EQ(defaults.code(), 0) << defaults.err;
  EXPECT_NE(defaults.out.find("constexpr cks_knobs kKnobs = {0, 1, 0, 1, 0};"), std::string::npos);
  EXPECT_NE(defaults.err.find("cks: note: no --knobs"), std::string::npos) << defaults.err;
  // -o FILE.
  compile_test::ScratchDir dir;
  const std::string file = dir.path() + "/gemm.cu";
  const auto written = test::run_cli({"emit", k.id(), "--knobs", "r=n,s=8,d=h,k=1", "-o", file, "--name", "gemm_a"});
  ASSERT_EQ(written.code(), 0) << written.err;
  EXPECT_TRUE(written.out.empty());
  EXPECT_EQ(slurp(file), generate_standalone(k, RuntimeKnobs::from_canonical("r=n,s=8,d=h,k=1"), "gemm_a"));
  // Errors: one line, non-zero exit.
  EXPECT_TRUE(test::one_error_line(test::run_cli({"emit", "k0123456789abcdef"}), "unknown kernel"));
  EXPECT_TRUE(test::one_error_line(test::run_cli({"emit", k.id(), "--knobs", "r=m,s=1,d=sk,k=2"}), "not a setting"));
  EXPECT_TRUE(test::one_error_line(test::run_cli({"emit", k.id(), "--knobs", "fast"}), "malformed runtime knobs"));
  EXPECT_TRUE(test::one_error_line(test::run_cli({"emit", k.id(), "--layout", "nt"}), "unknown kernel"));
  EXPECT_TRUE(test::one_error_line(
      test::run_cli({"emit", "sm90_bf16_tn_256x256x128_1x1x1_s7_cooperative+tma_ws_cooperative+persistent"}),
      "not in the tn catalogue"));
  EXPECT_TRUE(test::one_error_line(test::run_cli({"emit"}), "kernel"));
}

// `cks emit` of a sliced-K kernel by ID (find_kernel resolves it outside the catalogue) or by
// descriptor; without --knobs its first setting, with a note; wrong knobs one error line.
TEST(EmitCli, WritesSlicedKernelsWithTheirSlices) {
  const KernelDesc k = KernelDesc::from_canonical(kSliced);
  ASSERT_TRUE(find_kernel(Layout::nt, k.id())) << k.canonical();
  const auto by_id = test::run_cli({"emit", k.id(), "--knobs", "r=n,s=1,d=sk,k=8"});
  ASSERT_EQ(by_id.code(), 0) << by_id.err;
  EXPECT_EQ(by_id.out, generate_standalone(k, RuntimeKnobs::from_canonical("r=n,s=1,d=sk,k=8")));
  EXPECT_NE(by_id.out.find("slice_reduce<<<"), std::string::npos);
  EXPECT_TRUE(by_id.err.empty()) << by_id.err;
  const auto by_name = test::run_cli({"emit", kSliced, "--knobs", "r=n,s=1,d=sk,k=8", "--layout", "nt"});
  ASSERT_EQ(by_name.code(), 0) << by_name.err;
  EXPECT_EQ(by_name.out, by_id.out);
  const auto defaults = test::run_cli({"emit", k.id()});
  ASSERT_EQ(defaults.code(), 0) << defaults.err;
  EXPECT_EQ(defaults.out, generate_standalone(k, RuntimeKnobs::from_canonical("r=m,s=1,d=sk,k=2")));
  EXPECT_NE(defaults.err.find("cks: note: no --knobs: the sliced-K kernel's first setting (r=m,s=1,d=sk,k=2, 2 slices)"),
            std::string::npos)
      << defaults.err;
  compile_test::ScratchDir dir;
  const std::string file = dir.path() + "/sliced.cu";
  const auto written = test::run_cli({"emit", k.id(), "--knobs", "r=m,s=1,d=sk,k=16", "-o", file, "--name", "gemm_s"});
  ASSERT_EQ(written.code(), 0) << written.err;
  EXPECT_EQ(slurp(file), generate_standalone(k, RuntimeKnobs::from_canonical("r=m,s=1,d=sk,k=16"), "gemm_s"));
  EXPECT_NE(written.err.find("knobs r=m,s=1,d=sk,k=16, function gemm_s"), std::string::npos) << written.err;
  for (const char* bad : {"r=h,s=1,d=h,k=1", "r=m,s=1,d=sk,k=5", "r=m,s=1,d=sk,k=4,x=n"})
    EXPECT_TRUE(test::one_error_line(test::run_cli({"emit", k.id(), "--knobs", bad}),
                                     "not a setting of sliced-K kernel " + k.id()))
        << bad;
}

TEST(SelectCli, CutlassTypeSaysWhatItNeeds) {
  const auto md = test::run_cli({"select", "--m", "4096", "--n", "4096", "--k", "4096", "--layout", "tn", "--top", "1",
                                 "--fallback", "static", "--format", "md", "--cutlass-type"});
  ASSERT_EQ(md.code(), 0) << md.err;
  EXPECT_NE(md.out.find("-DCUTE_SM90_EXTENDED_MMA_SHAPES_ENABLED"), std::string::npos) << md.out;
  EXPECT_NE(md.out.find("// complete file: cks emit k"), std::string::npos) << md.out;
  const auto csv = test::run_cli({"select", "--m", "4096", "--n", "4096", "--k", "4096", "--layout", "tn", "--top", "1",
                                  "--fallback", "static", "--format", "csv", "--cutlass-type"});
  ASSERT_EQ(csv.code(), 0) << csv.err;
  EXPECT_NE(csv.err.find("cks emit ID --knobs KNOBS"), std::string::npos) << csv.err;
}

// The sliced-K rule (on by default): a few-tile, long-K problem's first pick is the sliced-K kernel
// (sliced column 1) with its slice count, and `cks emit` writes it with those knobs;
// --sliced-max-tiles 0 turns it off (no sliced column).
TEST(SelectCli, SlicedRuleLeadsWithASlicedKernelThatEmitTakes) {
  const auto csv = test::run_cli({"select", "--m", "32", "--n", "512", "--k", "15232", "--layout", "tn", "--top", "2",
                                  "--fallback", "static", "--format", "json"});
  ASSERT_EQ(csv.code(), 0) << csv.err;
  const auto j = nlohmann::json::parse(csv.out);
  ASSERT_EQ(j.size(), 2u);
  EXPECT_EQ(j[0]["canonical"], "sm90_bf16_tn_64x64x128_1x1x1_s0_pingpong+no_smem+persistent+slicek");
  EXPECT_EQ(j[0]["knobs"], "r=m,s=1,d=sk,k=8");
  EXPECT_EQ(j[0]["sliced"], 1);
  EXPECT_EQ(j[1]["sliced"], 0);
  const auto emit = test::run_cli({"emit", j[0]["kernel_id"].get<std::string>(), "--knobs", "r=m,s=1,d=sk,k=8"});
  ASSERT_EQ(emit.code(), 0) << emit.err;
  EXPECT_NE(emit.out.find("slice_reduce"), std::string::npos);
  const auto off = test::run_cli({"select", "--m", "32", "--n", "512", "--k", "15232", "--layout", "tn", "--top", "1",
                                  "--fallback", "static", "--format", "csv", "--sliced-max-tiles", "0"});
  ASSERT_EQ(off.code(), 0) << off.err;
  EXPECT_EQ(off.out.find("slicek"), std::string::npos) << off.out;
  EXPECT_EQ(off.out.find(",sliced,"), std::string::npos) << off.out;
  const auto bad = test::run_cli({"select", "--m", "32", "--n", "512", "--k", "15232", "--layout", "tn",
                                  "--fallback", "static", "--sliced-max-ctas", "1"});
  EXPECT_NE(bad.code(), 0);
  EXPECT_NE(bad.err.find("--sliced-max-ctas"), std::string::npos) << bad.err;
}

// --orientations both: a swapped column, swapped kernels' types with a row-major D, and `cks emit`
// takes a swapped pick's ID; a bad value is one error line.
TEST(SelectCli, BothOrientationsListSwappedKernelsThatEmitTakes) {
  const auto csv = test::run_cli({"select", "--m", "136", "--n", "14336", "--k", "5120", "--layout", "tn", "--top", "2",
                                  "--fallback", "static", "--orientations", "both", "--format", "csv"});
  ASSERT_EQ(csv.code(), 0) << csv.err;
  std::vector<std::string> lines;
  std::istringstream in(csv.out);
  for (std::string l; std::getline(in, l);) lines.push_back(l);
  ASSERT_EQ(lines.size(), 3u) << csv.out;
  EXPECT_EQ(lines[0], "rank,kernel_id,canonical,knobs,score,swapped,sliced,cutlass_type");
  EXPECT_NE(lines[1].find("+swap,"), std::string::npos) << lines[1];
  EXPECT_NE(lines[1].find(",1,"), std::string::npos) << lines[1];
  EXPECT_NE(lines[1].find("cutlass::bfloat16_t, cutlass::layout::RowMajor, 8, cutlass::epilogue::"), std::string::npos);
  EXPECT_EQ(lines[2].find("+swap,"), std::string::npos) << lines[2];
  const std::string id = lines[1].substr(lines[1].find(',') + 1, 17);
  const auto emit = test::run_cli({"emit", id});
  ASSERT_EQ(emit.code(), 0) << emit.err;
  EXPECT_NE(emit.out.find("using Runner = cks_gen::Runner<Gemm, true>;"), std::string::npos);
  EXPECT_NE(emit.out.find("!cks_gen::set_leading_dim(args.mainloop.dB, lda)"), std::string::npos);
  const auto bad = test::run_cli({"select", "--m", "136", "--n", "14336", "--k", "5120", "--layout", "tn",
                                  "--fallback", "static", "--orientations", "sideways"});
  EXPECT_NE(bad.code(), 0);
  EXPECT_NE(bad.err.find("--orientations: 'sideways' is not own or both"), std::string::npos) << bad.err;
  // The limits: M above --swap-max-m, or a layout outside --swap-layouts, keeps the own ranking.
  for (const std::vector<std::string>& limit : {std::vector<std::string>{"--swap-max-m", "128"},
                                                std::vector<std::string>{"--swap-layouts", "nt,nn,tt"}}) {
    std::vector<std::string> args{"select", "--m", "136", "--n", "14336", "--k", "5120", "--layout", "tn", "--top", "1",
                                  "--fallback", "static", "--orientations", "both", "--format", "csv"};
    args.insert(args.end(), limit.begin(), limit.end());
    const auto limited = test::run_cli(args);
    ASSERT_EQ(limited.code(), 0) << limited.err;
    EXPECT_EQ(limited.out.find("+swap,"), std::string::npos) << limit[0] << "\n" << limited.out;
  }
  for (const auto& [option, value, message] :
       {std::tuple<std::string, std::string, std::string>{"--swap-layouts", "tn,xy", "--swap-layouts: 'xy' is not a layout"},
        {"--swap-max-m", "-3", "--swap-max-m"}}) {
    const auto wrong = test::run_cli({"select", "--m", "136", "--n", "14336", "--k", "5120", "--layout", "tn",
                                      "--fallback", "static", "--orientations", "both", option, value});
    EXPECT_NE(wrong.code(), 0) << option;
    EXPECT_NE(wrong.err.find(message), std::string::npos) << wrong.err;
  }
}

// Compiles what `cks emit` prints with nvcc to an object (one kernel; ~1-3 minutes on 2 cores),
// with the file's nvcc line less its two defines: the file's own defines must give the extended
// WGMMA shape (tile N 144 -> m64n144k16 in the PTX, not a narrower atom) and no serialized WGMMA.
TEST(EmitNvcc, EmittedFileCompilesToAnObjectWithTheRightWgmma) {
  const std::string nvcc = find_nvcc();
  const std::string cutlass = default_cutlass_dir();
  if (nvcc.empty()) GTEST_SKIP() << "nvcc not found (PATH, CUDA_HOME, /usr/local/cuda)";
  if (cutlass.empty()) GTEST_SKIP() << "CUTLASS headers not found (scripts/setup.sh)";
  const KernelDesc k = KernelDesc::from_canonical("sm90_bf16_tn_128x144x64_1x1x1_s0_cooperative+tma_ws_cooperative+persistent");
  ASSERT_TRUE(Catalogue::get(Layout::tn).find(k.id())) << "pick another catalogue kernel with an extended tile N";
  compile_test::ScratchDir dir;
  const std::string cu = dir.path() + "/run_gemm.cu";
  const auto emitted = test::run_cli({"emit", k.id(), "--knobs", "r=m,s=2,d=h,k=1", "-o", cu});
  ASSERT_EQ(emitted.code(), 0) << emitted.err;
  RunOptions o;
  o.stderr_to_output = true;
  const auto t0 = std::chrono::steady_clock::now();
  std::vector<std::string> argv{nvcc};
  for (const auto& f : standalone_nvcc_flags())
    if (f.rfind("-D", 0) != 0) argv.push_back(f);
  for (const std::string& a : {"-I" + cutlass + "/include", "-I" + cutlass + "/tools/util/include", std::string("-keep"),
                              std::string("-keep-dir"), dir.path(), std::string("-c"), cu, std::string("-o"),
                              dir.path() + "/run_gemm.o"})
    argv.push_back(a);
  const RunResult r = run_argv(argv, o);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  ASSERT_TRUE(r.ok()) << r.output;
  std::printf("nvcc -c of the emitted file: %.0f s\n", seconds);
  EXPECT_TRUE(std::filesystem::file_size(dir.path() + "/run_gemm.o") > 0);
  EXPECT_EQ(r.output.find("serialized"), std::string::npos) << r.output;  // ptxas C7510
  std::string ptx;
  for (const auto& e : std::filesystem::directory_iterator(dir.path()))
    if (e.path().extension() == ".ptx") ptx += slurp(e.path().string());
  ASSERT_FALSE(ptx.empty()) << "nvcc -keep left no PTX";
  EXPECT_NE(ptx.find("m64n144k16"), std::string::npos) << "the extended WGMMA shape is missing";
  EXPECT_NE(ptx.find(".entry"), std::string::npos);
  // The host function is there, unmangled.
  const RunResult nm = run_argv({"nm", dir.path() + "/run_gemm.o"});
  if (nm.started) {
    EXPECT_NE(nm.output.find(" T run_gemm"), std::string::npos) << nm.output.substr(0, 2000);
  }
}

// The same for a sliced-K kernel's file (the swapped ping-pong kernel nvcc builds into a library in
// CompileNvcc.SlicedKernelBuildsAndSizesItsPartials): the batched kernel, slice_reduce and the host
// function compile to one object, with no spills.
TEST(EmitNvcc, EmittedSlicedKernelCompilesWithItsReduction) {
  const std::string nvcc = find_nvcc();
  const std::string cutlass = default_cutlass_dir();
  if (nvcc.empty()) GTEST_SKIP() << "nvcc not found (PATH, CUDA_HOME, /usr/local/cuda)";
  if (cutlass.empty()) GTEST_SKIP() << "CUTLASS headers not found (scripts/setup.sh)";
  const KernelDesc k = KernelDesc::from_canonical(kSliced);
  ASSERT_TRUE(find_kernel(k.layout, k.id()));
  compile_test::ScratchDir dir;
  const std::string cu = dir.path() + "/sliced_gemm.cu";
  const auto emitted = test::run_cli({"emit", k.id(), "--knobs", "r=m,s=1,d=sk,k=4", "--name", "sliced_gemm", "-o", cu});
  ASSERT_EQ(emitted.code(), 0) << emitted.err;
  RunOptions o;
  o.stderr_to_output = true;
  const auto t0 = std::chrono::steady_clock::now();
  std::vector<std::string> argv{nvcc};
  for (const auto& f : standalone_nvcc_flags()) argv.push_back(f);
  for (const std::string& a : {"-I" + cutlass + "/include", "-I" + cutlass + "/tools/util/include", std::string("-Xptxas=-v"),
                              std::string("-c"), cu, std::string("-o"), dir.path() + "/sliced_gemm.o"})
    argv.push_back(a);
  const RunResult r = run_argv(argv, o);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  ASSERT_TRUE(r.ok()) << r.output;
  std::printf("nvcc -c of the emitted sliced-K file: %.0f s\n", seconds);
  EXPECT_TRUE(std::filesystem::file_size(dir.path() + "/sliced_gemm.o") > 0);
  EXPECT_EQ(r.output.find("serialized"), std::string::npos) << r.output;  // ptxas C7510
  EXPECT_NE(r.output.find("bytes spill stores"), std::string::npos) << r.output;  // -Xptxas=-v reported
  EXPECT_FALSE(std::regex_search(r.output, std::regex("[1-9][0-9]* bytes spill stores"))) << r.output;
  const RunResult nm = run_argv({"nm", "-C", dir.path() + "/sliced_gemm.o"});
  if (nm.started) {
    EXPECT_NE(nm.output.find(" T sliced_gemm"), std::string::npos) << nm.output.substr(0, 2000);
    EXPECT_NE(nm.output.find("cks_gen::slice_reduce("), std::string::npos) << nm.output.substr(0, 2000);
  }
}
