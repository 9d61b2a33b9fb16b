// cks/catalogue.hpp — the statically valid SM90 BF16 GEMM configuration catalogue K.
//
// A *kernel* is one compiled CUTLASS 3.x GemmUniversal instantiation (KernelDesc).
// A *candidate* is a kernel x a runtime-knob setting that needs no recompilation (RuntimeKnobs).
// This header is a frozen interface: features, sampling, codegen, registry and the models
// all key on it. Enum level orders are part of the feature schema: append only.
#pragma once
#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "cks/hw.hpp"

namespace cks {

// Operand layout tag l. First letter: A, second: B. 't' = row-major ("transposed" in BLAS
// terms), 'n' = column-major. D (and C) are always column-major (CUTLASS "tnn" etc.).
// For A (MxK): t => K contiguous. For B (KxN): n => K contiguous. So "tn" is the K-major x
// K-major layout of LLM inference (CUTLASS's fastest path).
enum class Layout : uint8_t { tn = 0, nt = 1, nn = 2, tt = 3 };
inline constexpr std::array<Layout, 4> kLayouts{Layout::tn, Layout::nt, Layout::nn, Layout::tt};
std::string_view to_string(Layout l);
Layout parse_layout(std::string_view s);  // throws Error "unknown layout 'x' (expected tn, nt, nn or tt)"
inline bool a_row_major(Layout l) { return l == Layout::tn || l == Layout::tt; }
inline bool b_row_major(Layout l) { return l == Layout::nt || l == Layout::tt; }
// The layout of the transposed problem D^T = B^T A^T: A' = B^T, B' = A^T, so each operand's
// storage order flips with its role. tn and nt map to themselves; nn and tt to each other.
inline Layout swap_layout(Layout l) {
  return l == Layout::nn ? Layout::tt : l == Layout::tt ? Layout::nn : l;
}

// --- Problem dimensions: the one check every boundary uses (CLI, plans, shape CSVs, C API) ---
//
// A GEMM problem D (MxN) = A (MxK) * B (KxN) of this catalogue is valid when
//   * M, N and K are each in [1, kMaxProblemDim] (CUTLASS's problem shape and the worker's
//     protocol are 32-bit ints; every operand's byte count, 2 * rows * cols, then fits in int64), and
//   * the contiguous (leading) dimension of every BF16 operand is a multiple of 8: TMA needs
//     16-byte aligned rows (and the kernels are built with alignment 8 for A, B and D).
// Which dimension is contiguous (A row-major = K, column-major = M; B column-major = K,
// row-major = N; D is column-major in every kernel of this catalogue, so M):
//   layout  A (MxK)       B (KxN)       D (MxN)     multiples of 8   free
//   tn      row-major: K  col-major: K  col-major: M  M, K           N
//   nt      col-major: M  row-major: N  col-major: M  M, N           K
//   nn      col-major: M  col-major: K  col-major: M  M, K           N
//   tt      row-major: K  row-major: N  col-major: M  M, N, K        -
// M is contiguous in D for every layout: with tokens on M (the LLM mapping of src/shapes), a
// decode GEMM with M not a multiple of 8 has to be padded (or run as its transpose, tokens on N).
inline constexpr int64_t kMaxProblemDim = 2147483647;  // 2^31 - 1
inline constexpr int64_t kOperandAlignment = 8;       // BF16 elements in 16 bytes
struct ContiguousDims {
  bool m = false, n = false, k = false;  // true: must be a multiple of kOperandAlignment
};
ContiguousDims contiguous_dims(Layout l);
// Throws cks::Error with one line, the same text for the CLI and the C API, e.g.
// "N must be a multiple of 8 for layout tt (got 12): it is the contiguous dimension of B (KxN, row-major)".
void check_problem(int64_t m, int64_t n, int64_t k, Layout layout);

enum class MainloopSchedule : uint8_t {
  tma_ws = 0,       // KernelTmaWarpSpecialized (1 producer + 1 consumer WG, not persistent)
  pingpong = 1,     // KernelTmaWarpSpecializedPingpong (2 consumer WGs, alternate tiles, persistent)
  cooperative = 2,  // KernelTmaWarpSpecializedCooperative (2 consumer WGs split one tile, persistent)
};
enum class EpilogueSchedule : uint8_t {
  tma_ws = 0,              // cutlass::epilogue::TmaWarpSpecialized
  tma_ws_cooperative = 1,  // cutlass::epilogue::TmaWarpSpecializedCooperative
  no_smem = 2,             // cutlass::epilogue::NoSmemWarpSpecialized
};
enum class TileSchedulerKind : uint8_t { persistent = 0, stream_k = 1 };

std::string_view to_string(MainloopSchedule s);
std::string_view to_string(EpilogueSchedule s);
std::string_view to_string(TileSchedulerKind s);
MainloopSchedule parse_mainloop(std::string_view s);
EpilogueSchedule parse_epilogue(std::string_view s);
TileSchedulerKind parse_scheduler(std::string_view s);

// Canonical kernel descriptor. Element types are fixed for this catalogue:
// A, B = bf16, accumulator = f32, epilogue compute = f32, C = void (D = alpha*A*B; see
// docs/catalogue.md for how CUTLASS's C=bf16 variants map here), D = bf16, alignment 8.
//
// A *swapped* kernel (swapped = true; docs/catalogue.md, "Swapped kernels") takes the operands of
// a problem (M, N, K) in `layout` like any other kernel of that layout, but runs the transposed
// problem D^T = B^T A^T, i.e. (N, M, K) in swap_layout(layout), with a row-major D^T (the same
// memory as the column-major D). Its tile, cluster and schedules are those of the CUTLASS kernel
// it instantiates, so tile M covers the problem's N and tile N (steps of 8 or 16) its M: an M
// that pads badly to 64-row tiles (M = 136 -> 192) pads well along tile N (136 -> 144). Its
// mainloop, validity and resources are those of its unswapped twin (kernel_layout(), not
// swapped) but for the epilogue's row-major store. The catalogue of a layout holds no swapped
// kernels; find_kernel() resolves their IDs (the twins of swap_layout(layout)'s catalogue).
struct KernelDesc {
  Layout layout = Layout::tn;
  int tm = 128, tn = 128, tk = 64;  // CTA tile
  int cm = 1, cn = 1;               // cluster shape (CTAs), cluster K = 1
  int stages = 0;                   // mainloop pipeline stages; 0 = CUTLASS auto carve-out
  MainloopSchedule mainloop = MainloopSchedule::cooperative;
  EpilogueSchedule epilogue = EpilogueSchedule::tma_ws_cooperative;
  TileSchedulerKind scheduler = TileSchedulerKind::persistent;
  bool swapped = false;             // runs D^T = B^T A^T with a row-major D^T (see above)
  // A *sliced-K* kernel (sliced = true; docs/catalogue.md, "Sliced-K kernels"): deterministic
  // parallel split-K. The kernel runs S = knobs.splits independent GEMMs over K slices of K / S
  // (a batched GEMM, L = S) into FP32 partials in its workspace, and a second kernel sums the S
  // partials in a fixed order into D. Unlike the stream-K scheduler's split-K (deterministic: each
  // split waits for the one before; nondeterministic: atomics), the slices run and reduce in
  // parallel and the result is bitwise reproducible; any mainloop works (ping-pong's 64-row tiles
  // too). Only with the no-smem epilogue (its FP32 store needs no staging) and the persistent or
  // basic scheduler. Measured by plans (KnobScope::measurable) before any selector ranks them: no
  // catalogue holds them; find_kernel() resolves their IDs.
  bool sliced = false;

  // The operand layout of the CUTLASS kernel it instantiates (swap_layout(layout) if swapped).
  Layout kernel_layout() const { return swapped ? swap_layout(layout) : layout; }
  // The sliced-K variant of this kernel (throws Error when it has none: sliced already, a TMA
  // epilogue, or the stream-K scheduler).
  KernelDesc sliced_variant() const;
  // Why this kernel has no sliced-K variant ("" when it has one).
  std::string sliced_unsupported() const;

  // The catalogue kernel whose mainloop it shares: itself, or for a swapped kernel the kernel of
  // swap_layout(layout) with the same tile, cluster and schedules (column-major D).
  KernelDesc unswapped() const;
  // The swapped kernel of layout swap_layout(this->layout) that shares this kernel's mainloop
  // (this must not be swapped itself).
  KernelDesc swapped_twin() const;

  // WGMMA instruction shape chosen by CUTLASS's builder: 64 x tn x 16 for bf16
  // (N = tile N; M = 64 per warpgroup atom).
  int inst_m() const { return 64; }
  int inst_n() const { return tn; }
  int inst_k() const { return 16; }
  int cluster_size() const { return cm * cn; }

  // Canonical text, e.g. "sm90_bf16_tn_128x128x64_2x1x1_s0_cooperative+tma_ws_cooperative+persistent";
  // a swapped kernel appends "+swap", a sliced-K kernel "+slicek" (after "+swap" when both), so
  // every earlier kernel keeps its ID.
  std::string canonical() const;
  // Stable ID: "k" + 16 hex digits of fnv1a64(canonical()).
  std::string id() const;
  // Parses canonical() text back (throws Error).
  static KernelDesc from_canonical(std::string_view s);
  bool operator==(const KernelDesc&) const = default;
};

// The kernel axes by name, as `cks catalogue stats --by` and `cks analyze failures` report them:
// tile_m, tile_n, tile_k, cluster ("2x1"), stages ("auto" for 0: CUTLASS's carve-out), mainloop,
// epilogue, scheduler.
inline constexpr std::string_view kKernelAxes[] = {"tile_m",   "tile_n",   "tile_k",   "cluster",
                                                   "stages",   "mainloop", "epilogue", "scheduler"};
// A kernel's value on one of kKernelAxes (throws Error "unknown kernel axis 'x' (expected ...)").
std::string kernel_axis_value(const KernelDesc& k, std::string_view axis);

// Resource model as CUTLASS 4.2 applies it (shared by validity, features and codegen).
struct KernelResources {
  int threads = 0;                  // threads per CTA (128 per WG; producer WG included)
  int consumer_wgs = 0;             // warpgroups executing the mainloop math
  long smem_per_stage = 0;          // bytes of A+B tile for one stage: (tm + tn) * tk * 2
  long smem_epilogue = 0;           // bytes of epilogue SharedStorage (0 for no-smem)
  long smem_pipeline = 0;           // barrier / pipeline storage bytes
  int stages = 0;                   // resolved stage count (auto => CUTLASS's carve-out)
  long smem_total = 0;              // bytes the kernel requests (mainloop + epilogue [+ overlap rule])
  int acc_regs_per_thread = 0;      // fp32 accumulator registers per consumer thread
  int reg_limit_consumer = 0;       // registers per consumer thread after setmaxnreg
  bool spills_expected = false;     // accumulators exceed the consumer register budget
};
KernelResources resources(const KernelDesc& k, const HardwareDesc& hw);

// Why a descriptor is not in the catalogue (empty => valid).
std::string invalid_reason(const KernelDesc& k, const HardwareDesc& hw);

// Runtime knobs (no recompilation). Values follow CUTLASS's PersistentTileSchedulerSm90 /
// StreamK arguments.
enum class RasterOrder : uint8_t { heuristic = 0, along_m = 1, along_n = 2 };
enum class Decomposition : uint8_t { heuristic = 0, data_parallel = 1, split_k = 2, stream_k = 3 };
// How the stream-K scheduler adds the partial tiles of one output tile (CUTLASS ReductionMode):
// deterministic, each split after the one before (the generated kernels' default: bitwise
// reproducible); nondeterministic, the splits add into the workspace concurrently (faster with
// many splits, results may differ in the last bits between runs). Stream-K kernels only.
enum class Reduction : uint8_t { deterministic = 0, nondeterministic = 1 };
std::string_view to_string(RasterOrder r);
std::string_view to_string(Decomposition d);
std::string_view to_string(Reduction r);

struct RuntimeKnobs {
  RasterOrder raster = RasterOrder::heuristic;
  int max_swizzle = 1;  // 1, 2, 4, 8
  Decomposition decomposition = Decomposition::heuristic;  // stream-K scheduler only
  int splits = 1;       // split-K factor (decomposition split_k only)
  Reduction reduction = Reduction::deterministic;  // stream-K scheduler only
  // e.g. "r=m,s=2,d=h,k=1"; a nondeterministic reduction appends ",x=n" (the deterministic
  // default is not written, so every string measured before the knob existed is unchanged)
  std::string canonical() const;
  static RuntimeKnobs from_canonical(std::string_view s);
  bool operator==(const RuntimeKnobs&) const = default;
};
// Which knob settings: `catalogue`, those the selector ranks (Catalogue::candidates()); `measurable`,
// those plus values a plan may measure before the catalogue offers them, so that the data comes
// first: split-K 16 and 32 on stream-K kernels (lease 43 measured them in few-tile, large-K groups:
// never the best, the splits reduce in order; NOTES.md "Lease 43 read, B"), and the
// nondeterministic reduction of every stream-K setting (session 35's probe: 1.18x the
// deterministic best in 12 such groups; no feature describes it yet, so the dataset leaves its
// rows out of training).
enum class KnobScope : uint8_t { catalogue, measurable };
// The knob settings a kernel admits (a non-persistent tma_ws kernel admits only the default).
std::vector<RuntimeKnobs> knob_settings(const KernelDesc& k, KnobScope scope = KnobScope::catalogue);
// `knobs` with reduction `r` where kernel `k` has a reduction to choose (a stream-K kernel); any
// other kernel's knobs come back as they are. The opt-in of `cks select --nondeterministic` and of
// the runtime's nondeterministic option: at the same kernel and setting the nondeterministic
// reduction was never slower beyond the noise (session 36, leases 45-46 on an H100: 1,530 pairs,
// median 1.06-1.48x by decomposition; NOTES.md "Session 36").
RuntimeKnobs with_reduction(const KernelDesc& k, RuntimeKnobs knobs, Reduction r);

struct Candidate {
  uint32_t kernel;  // index into Catalogue::kernels()
  RuntimeKnobs knobs;
};

// The catalogue for one layout (or all). Deterministic order (sorted by canonical()).
class Catalogue {
 public:
  // Enumerates every statically valid kernel for the given layouts under hw (default H200).
  static const Catalogue& get(Layout layout);  // cached, thread-safe
  static Catalogue build(Layout layout, const HardwareDesc& hw);

  Layout layout() const { return layout_; }
  const std::vector<KernelDesc>& kernels() const { return kernels_; }
  const std::vector<Candidate>& candidates() const { return candidates_; }
  // Index by kernel ID; nullopt if absent (swapped kernels are not in a catalogue: find_kernel).
  std::optional<uint32_t> find(std::string_view kernel_id) const;
  // The candidate of a kernel ID and canonical knobs (a measured row); nullopt if the kernel is
  // not in this catalogue or the knobs do not parse.
  std::optional<Candidate> find_candidate(std::string_view kernel_id, std::string_view knobs) const;

 private:
  Layout layout_ = Layout::tn;
  std::vector<KernelDesc> kernels_;
  std::vector<Candidate> candidates_;
  std::vector<std::pair<std::string, uint32_t>> by_id_;  // sorted
};

// The descriptor of a kernel ID of `layout`: a kernel of Catalogue::get(layout), or a swapped
// kernel of that layout (the swapped twin of a kernel of swap_layout(layout)'s catalogue; the
// index of twin IDs is built on first use). nullopt when neither.
std::optional<KernelDesc> find_kernel(Layout layout, std::string_view kernel_id);

// The exact CUTLASS C++ type this kernel instantiates (GemmUniversal<...> with its two
// CollectiveBuilders), as a complete `using <name> = ...;` block.
std::string cutlass_type(const KernelDesc& k, std::string_view type_name = "Gemm");

}  // namespace cks
