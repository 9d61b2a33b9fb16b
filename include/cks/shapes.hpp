// cks/shapes.hpp — GEMM problem shapes, their tags, and the shape sets groups are built from.
//
// A *group* is one (M, N, K, layout): the unit that is measured (a budgeted subset of the
// catalogue per group) and evaluated. Tags computed here (region, geometry, size, regime,
// transition proximity) are shared by sampling (budget rule) and evaluation (per-regime
// reports). Every threshold is documented next to its constant and in docs/shapes-and-sampling.md.
#pragma once
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "cks/catalogue.hpp"
#include "cks/hw.hpp"

namespace cks {

// The paper's shape domain: [32, 16384]^3, every dimension a multiple of 32.
inline constexpr long kShapeMin = 32;
inline constexpr long kShapeMax = 16384;
inline constexpr long kShapeStep = 32;
// Interior region: every dimension in [kInteriorMin, kInteriorMax] (the middle six of the
// domain's nine octaves). A shape with any dimension outside is in the boundary region.
inline constexpr long kInteriorMin = 128;
inline constexpr long kInteriorMax = 8192;

struct GemmShape {
  long m = 0, n = 0, k = 0;
  bool operator==(const GemmShape&) const = default;
  auto operator<=>(const GemmShape&) const = default;
};

// How a shape entered its set (the paper's construction axes; llm = model-derived).
enum class ShapeClass : uint8_t { interior = 0, boundary = 1, anchor = 2, transition = 3, llm = 4 };
// Geometry class of the domain (independent of construction: an anchor can be interior or boundary).
enum class Region : uint8_t { interior = 0, boundary = 1 };
// Output geometry. skinny_k: 4K <= min(M,N); else tall: M >= 4N; wide: N >= 4M; else square.
enum class Geometry : uint8_t { square = 0, tall = 1, wide = 2, skinny_k = 3 };
// FLOPs = 2MNK. small: < 2*1024^3 (launch/latency dominated: < ~2 us at H200 peak);
// large: >= 2*2048^3 (>= ~17 us at peak); medium in between. On the paper set (seed 0) this
// splits the 593 base shapes 297 / 198 / 98.
enum class SizeClass : uint8_t { small = 0, medium = 1, large = 2 };
// Problem intensity I vs the roofline ridge R: memory_bound I < R/2, compute_bound I > 2R.
enum class Regime : uint8_t { memory_bound = 0, balanced = 1, compute_bound = 2 };

// interior iff every dimension lies in [kInteriorMin, kInteriorMax].
Region region_of(const GemmShape& s);

std::string_view to_string(ShapeClass c);
std::string_view to_string(Region r);
std::string_view to_string(Geometry g);
std::string_view to_string(SizeClass s);
std::string_view to_string(Regime r);

// Relative tolerance of "near the ridge" / "near the LLC boundary": |x / threshold - 1| <= 5%.
inline constexpr double kTransitionTolerance = 0.05;
// "Largest" shapes (budget 1000): FLOPs >= 2 * 8192^3.
inline constexpr double kLargestFlops = 2.0 * 8192.0 * 8192.0 * 8192.0;
// "Atypical" aspect (budget 3000): max(M,N,K) / min(M,N,K) >= 64, six of the domain's nine
// octaves between the largest and the smallest dimension (the hull extremes).
inline constexpr double kAtypicalAspect = 64.0;
// Budget rule (candidates measured per group).
inline constexpr int kBudgetDefault = 2000;
inline constexpr int kBudgetLargest = 1000;
inline constexpr int kBudgetAtypical = 3000;

struct ShapeTags {
  Region region = Region::interior;
  Geometry geometry = Geometry::square;
  SizeClass size = SizeClass::small;
  Regime regime = Regime::balanced;
  double flops = 0;         // 2MNK
  double bytes = 0;         // compulsory traffic = working set = 2(MK + KN + MN) (bf16 A, B read; D written)
  double intensity = 0;     // flops / bytes = MNK / (MK + KN + MN)  [flop/byte]
  double ridge_ratio = 0;   // intensity / hw.ridge_flops_per_byte()
  double llc_ratio = 0;     // bytes / hw.l2_bytes
  bool near_ridge = false;  // |ridge_ratio - 1| <= kTransitionTolerance
  bool near_llc = false;    // |llc_ratio - 1| <= kTransitionTolerance
  bool largest = false;     // flops >= kLargestFlops
  bool atypical = false;    // near_ridge || near_llc || aspect >= kAtypicalAspect
};
ShapeTags tags_for(long m, long n, long k, const HardwareDesc& hw);
inline ShapeTags tags_for(const GemmShape& s, const HardwareDesc& hw) { return tags_for(s.m, s.n, s.k, hw); }

// The paper's budget rule from a shape's tags: 1000 for the largest shapes (each measurement
// is expensive), else 3000 for atypical/transition shapes (rankings change sharply), else 2000.
// (With the thresholds above no shape in [32,16384]^3 is both largest and atypical.)
int auto_budget(const ShapeTags& t);
// Why auto_budget chose its value: "largest", "atypical" or "default".
std::string_view budget_reason(const ShapeTags& t);

struct ShapeGroup {
  GemmShape shape;
  Layout layout = Layout::tn;
  ShapeClass construction = ShapeClass::interior;
  std::string detail;  // sub-family: boundary family, anchor move, transition kind, llm source(s)
  ShapeTags tags;
  int budget = kBudgetDefault;  // auto_budget(tags)
  uint64_t seed = 0;            // seed of the set (sampling derives its per-group stream from it)
  std::string key() const;
};
// "<m>x<n>x<k>_<layout>", the registry's group key.
std::string group_key(const GemmShape& s, Layout l);
// Compact JSON object of the tags ({"class","region","geometry","size","regime",...}) for the
// registry's groups.tags_json.
std::string tags_json(const ShapeGroup& g);

// The paper's base-shape construction (Section "A GEMM problem shape is a triple..."):
// 297 interior + 172 boundary + 92 anchors (47 interior, 45 boundary) + 32 transition
// (14 interior, 18 boundary) = 593 distinct shapes, in that order, deterministic per seed.
struct BaseShape {
  GemmShape shape;
  ShapeClass construction;
  std::string detail;
};
std::vector<BaseShape> paper_base_shapes(uint64_t seed, const HardwareDesc& hw);
// Held-out anchor-grid shapes for evaluation: every on-grid one-axis neighbour (halve/double
// M, N or K) of a paper base shape that is not itself a base shape, deduplicated, in a seeded
// random order (construction = anchor, detail "heldout <move> of <parent>").
std::vector<BaseShape> heldout_anchor_shapes(uint64_t seed, const HardwareDesc& hw);

// LLM shapes from public model configurations. Passes: fwd (tn: M=tokens, N=out, K=in),
// dgrad (nt: M=tokens, N=in, K=out), wgrad (nn: M=in, N=out, K=tokens). Deduplicated on
// (m, n, k, layout); `detail` lists every model/TP/GEMM/pass that produced the group.
// shapes/<file> found like hw/presets.json (docs/library.md "Data files"): llm_models.json (the
// "llm" set, whose groups the evaluation set draws from), llm_train.json ("llm-train": more
// families for training) or llm_family.json ("family": held-out families, never trained on).
std::string llm_models_path(const std::string& file = "llm_models.json");
std::vector<ShapeGroup> make_llm_set(const std::string& models_path, uint64_t seed, const HardwareDesc& hw);

// "paper": paper_base_shapes x the four layouts (2,372 groups); "heldout":
// heldout_anchor_shapes x the four layouts; "llm", "llm-train", "family": make_llm_set with
// llm_models_path() of the set's file (above).
// Throws Error on an unknown set name.
std::vector<ShapeGroup> make_shape_set(const std::string& set, uint64_t seed, const HardwareDesc& hw);

// Groups from a `cks shapes` CSV (columns m, n, k and layout by name, in any order; class, detail
// and seed when present; tags recomputed for `hw`). A file without a layout column gives each row
// once per layout of `layouts` (empty: the column is required). Every group passes check_problem,
// after `rewrite` when given (cks bundle: a row product as the column problem the runtime runs).
// Throws Error "<path>:<line>: ..." on a bad row.
std::vector<ShapeGroup> read_shapes_csv(const std::string& path, const HardwareDesc& hw,
                                        const std::vector<Layout>& layouts = {},
                                        const std::function<void(ShapeGroup&)>& rewrite = nullptr);

}  // namespace cks
