// Shape tags, the budget rule, group keys and the set dispatcher.
#include <algorithm>
#include <array>
#include <cmath>
#include <nlohmann/json.hpp>

#include "cks/common.hpp"
#include "cks/shapes.hpp"

namespace cks {

namespace {
constexpr std::array<std::string_view, 5> kClassNames{"interior", "boundary", "anchor", "transition", "llm"};
constexpr std::array<std::string_view, 2> kRegionNames{"interior", "boundary"};
constexpr std::array<std::string_view, 4> kGeometryNames{"square", "tall", "wide", "skinny_k"};
constexpr std::array<std::string_view, 3> kSizeNames{"small", "medium", "large"};
constexpr std::array<std::string_view, 3> kRegimeNames{"memory_bound", "balanced", "compute_bound"};

// Geometry: an aspect of 4 separates "much larger" from comparable dimensions.
constexpr double kGeometryAspect = 4.0;
// Size classes by FLOPs (see SizeClass).
constexpr double kSmallFlops = 2.0 * 1024.0 * 1024.0 * 1024.0;
constexpr double kLargeFlops = 2.0 * 2048.0 * 2048.0 * 2048.0;
// Regimes: a factor of 2 either side of the ridge.
constexpr double kRegimeFactor = 2.0;
}  // namespace

Region region_of(const GemmShape& s) {
  auto in = [](long d) { return d >= kInteriorMin && d <= kInteriorMax; };
  return in(s.m) && in(s.n) && in(s.k) ? Region::interior : Region::boundary;
}

std::string_view to_string(ShapeClass c) { return kClassNames[static_cast<int>(c)]; }
std::string_view to_string(Region r) { return kRegionNames[static_cast<int>(r)]; }
std::string_view to_string(Geometry g) { return kGeometryNames[static_cast<int>(g)]; }
std::string_view to_string(SizeClass s) { return kSizeNames[static_cast<int>(s)]; }
std::string_view to_string(Regime r) { return kRegimeNames[static_cast<int>(r)]; }

ShapeTags tags_for(long m, long n, long k, const HardwareDesc& hw) {
  ShapeTags t;
  const double M = static_cast<double>(m), N = static_cast<double>(n), K = static_cast<double>(k);
  t.region = region_of(GemmShape{m, n, k});

  if (kGeometryAspect * K <= std::min(M, N))
    t.geometry = Geometry::skinny_k;
  else if (M >= kGeometryAspect * N)
    t.geometry = Geometry::tall;
  else if (N >= kGeometryAspect * M)
    t.geometry = Geometry::wide;
  else
    t.geometry = Geometry::square;

  t.flops = 2.0 * M * N * K;
  t.size = t.flops < kSmallFlops ? SizeClass::small : t.flops < kLargeFlops ? SizeClass::medium : SizeClass::large;

  // BF16 (2 bytes): A (MxK) and B (KxN) read once, D (MxN) written once; C is void.
  t.bytes = 2.0 * (M * K + K * N + M * N);
  t.intensity = t.flops / t.bytes;
  const double ridge = hw.ridge_flops_per_byte();
  t.ridge_ratio = t.intensity / ridge;
  t.regime = t.ridge_ratio < 1.0 / kRegimeFactor ? Regime::memory_bound
             : t.ridge_ratio > kRegimeFactor     ? Regime::compute_bound
                                                 : Regime::balanced;
  t.llc_ratio = t.bytes / hw.l2_bytes;
  t.near_ridge = std::abs(t.ridge_ratio - 1.0) <= kTransitionTolerance;
  t.near_llc = std::abs(t.llc_ratio - 1.0) <= kTransitionTolerance;

  t.largest = t.flops >= kLargestFlops;
  const double aspect = std::max({M, N, K}) / std::min({M, N, K});
  t.atypical = t.near_ridge || t.near_llc || aspect >= kAtypicalAspect;
  return t;
}

int auto_budget(const ShapeTags& t) {
  if (t.largest) return kBudgetLargest;
  if (t.atypical) return kBudgetAtypical;
  return kBudgetDefault;
}

std::string_view budget_reason(const ShapeTags& t) {
  if (t.largest) return "largest";
  if (t.atypical) return "atypical";
  return "default";
}

std::string group_key(const GemmShape& s, Layout l) {
  return std::to_string(s.m) + "x" + std::to_string(s.n) + "x" + std::to_string(s.k) + "_" + std::string(to_string(l));
}

std::string ShapeGroup::key() const { return group_key(shape, layout); }

std::string tags_json(const ShapeGroup& g) {
  nlohmann::ordered_json j;
  j["class"] = to_string(g.construction);
  j["detail"] = g.detail;
  j["region"] = to_string(g.tags.region);
  j["geometry"] = to_string(g.tags.geometry);
  j["size"] = to_string(g.tags.size);
  j["regime"] = to_string(g.tags.regime);
  j["intensity"] = g.tags.intensity;
  j["ridge_ratio"] = g.tags.ridge_ratio;
  j["llc_ratio"] = g.tags.llc_ratio;
  j["near_ridge"] = g.tags.near_ridge;
  j["near_llc"] = g.tags.near_llc;
  j["budget_reason"] = budget_reason(g.tags);
  return j.dump();
}

std::vector<ShapeGroup> make_shape_set(const std::string& set, uint64_t seed, const HardwareDesc& hw) {
  if (set == "llm") return make_llm_set(llm_models_path(), seed, hw);
  if (set == "llm-train") return make_llm_set(llm_models_path("llm_train.json"), seed, hw);
  if (set == "family") return make_llm_set(llm_models_path("llm_family.json"), seed, hw);
  if (set != "paper" && set != "heldout")
    throw Error("unknown shape set '" + set + "' (expected paper, heldout, llm, llm-train or family)");
  std::vector<ShapeGroup> out;
  const auto base = set == "paper" ? paper_base_shapes(seed, hw) : heldout_anchor_shapes(seed, hw);
  out.reserve(base.size() * kLayouts.size());
  for (const auto& b : base) {
    ShapeGroup g;
    g.shape = b.shape;
    g.construction = b.construction;
    g.detail = b.detail;
    g.tags = tags_for(b.shape, hw);
    g.budget = auto_budget(g.tags);
    g.seed = seed;
    for (Layout l : kLayouts) {
      g.layout = l;
      out.push_back(g);
    }
  }
  return out;
}

}  // namespace cks
