// The paper's 593 base shapes on [32, 16384]^3 (multiples of 32), deterministic per seed.
//
//   297 interior   log-uniform draws per dimension over the whole domain, kept when every
//                  dimension lies in the interior band [128, 8192]
//   172 boundary   deliberate hull extremes, one family at a time (table kBoundaryFamilies)
//    92 anchors    one dimension of a primary shape halved or doubled (47 interior, 45 boundary;
//                  the neighbour stays in its parent's region)
//    32 transition shapes whose intensity is within 5% of the roofline ridge, or whose working
//                  set is within 5% of the LLC capacity (14 interior, 18 boundary)
// Every shape is distinct: a draw that repeats an earlier shape is rejected and redrawn from
// the same stream, so the result depends only on the seed and the hardware descriptor.
#include <algorithm>
#include <cmath>
#include <optional>
#include <set>
#include <stdexcept>

#include "cks/shapes.hpp"
#include "shapes/rng.hpp"

namespace cks {

namespace {

using detail::Rng;

struct Band {
  long lo, hi;  // inclusive, multiples of kShapeStep
};
constexpr Band kFullBand{kShapeMin, kShapeMax};
constexpr Band kInteriorBand{kInteriorMin, kInteriorMax};
// Extreme bands: every value lies outside the interior band.
constexpr Band kLowBand{kShapeMin, kInteriorMin - kShapeStep};   // 32..96
constexpr Band kHighBand{kInteriorMax + kShapeStep, kShapeMax};  // 8224..16384
constexpr Band kMidLargeBand{1024, kShapeMax};
constexpr Band kMidSmallBand{kShapeMin, 1024};
constexpr Band pin(long v) { return {v, v}; }

// Primary counts and the split of the supplements (the paper's numbers).
constexpr int kInteriorCount = 297;
constexpr int kAnchorInterior = 47, kAnchorBoundary = 45;
constexpr int kRidgeInterior = 7, kLlcInterior = 7;  // 14 interior transition shapes
constexpr int kRidgeBoundary = 9, kLlcBoundary = 9;  // 18 boundary transition shapes
// Attempts per accepted shape before construction is declared impossible (a bug, not input).
constexpr int kMaxAttemptsPerShape = 100000;

struct BoundaryFamily {
  const char* name;
  int count;
  Band m, n, k;
};
// 172 boundary shapes: the 8 corners of the domain, 30 each of very tall (M >= 8224, N <= 96),
// very wide (mirror), skinny-K (K <= 96 under M, N >= 1024) and deep-K (K >= 8224 over
// M, N <= 1024), and 44 face points with one dimension pinned at 32 or 16384.
constexpr BoundaryFamily kBoundaryFamilies[] = {
    {"corner", 1, pin(kShapeMin), pin(kShapeMin), pin(kShapeMin)},
    {"corner", 1, pin(kShapeMin), pin(kShapeMin), pin(kShapeMax)},
    {"corner", 1, pin(kShapeMin), pin(kShapeMax), pin(kShapeMin)},
    {"corner", 1, pin(kShapeMin), pin(kShapeMax), pin(kShapeMax)},
    {"corner", 1, pin(kShapeMax), pin(kShapeMin), pin(kShapeMin)},
    {"corner", 1, pin(kShapeMax), pin(kShapeMin), pin(kShapeMax)},
    {"corner", 1, pin(kShapeMax), pin(kShapeMax), pin(kShapeMin)},
    {"corner", 1, pin(kShapeMax), pin(kShapeMax), pin(kShapeMax)},
    {"tall", 30, kHighBand, kLowBand, kFullBand},
    {"wide", 30, kLowBand, kHighBand, kFullBand},
    {"skinny_k", 30, kMidLargeBand, kMidLargeBand, kLowBand},
    {"deep_k", 30, kMidSmallBand, kMidSmallBand, kHighBand},
    {"face_m_min", 8, pin(kShapeMin), kFullBand, kFullBand},
    {"face_m_max", 8, pin(kShapeMax), kFullBand, kFullBand},
    {"face_n_min", 7, kFullBand, pin(kShapeMin), kFullBand},
    {"face_n_max", 7, kFullBand, pin(kShapeMax), kFullBand},
    {"face_k_min", 7, kFullBand, kFullBand, pin(kShapeMin)},
    {"face_k_max", 7, kFullBand, kFullBand, pin(kShapeMax)},
};
constexpr int boundary_total() {
  int t = 0;
  for (const auto& f : kBoundaryFamilies) t += f.count;
  return t;
}
static_assert(boundary_total() == 172, "the paper's boundary count");

// Nearest multiple of kShapeStep, clamped to the band.
long snap(double x, Band b) {
  const long v = std::lround(x / kShapeStep) * kShapeStep;
  return std::clamp(v, b.lo, b.hi);
}
long& dim_of(GemmShape& s, int axis) { return axis == 0 ? s.m : axis == 1 ? s.n : s.k; }
constexpr char kAxisNames[] = {'m', 'n', 'k'};

class PaperBuilder {
 public:
  PaperBuilder(uint64_t seed, const HardwareDesc& hw) : rng_(seed), hw_(hw) {}

  std::vector<BaseShape> build() {
    add_n(kInteriorCount, ShapeClass::interior, "log_uniform", [&]() -> std::optional<GemmShape> {
      GemmShape s{draw(kFullBand), draw(kFullBand), draw(kFullBand)};
      if (region_of(s) != Region::interior) return std::nullopt;
      return s;
    });
    for (const auto& f : kBoundaryFamilies)
      add_n(f.count, ShapeClass::boundary, f.name, [&]() -> std::optional<GemmShape> {
        return GemmShape{draw(f.m), draw(f.n), draw(f.k)};
      });
    const size_t primaries = out_.size();
    add_anchors(Region::interior, kAnchorInterior, primaries);
    add_anchors(Region::boundary, kAnchorBoundary, primaries);
    add_transition(Transition::ridge, Region::interior, kRidgeInterior);
    add_transition(Transition::llc, Region::interior, kLlcInterior);
    add_transition(Transition::ridge, Region::boundary, kRidgeBoundary);
    add_transition(Transition::llc, Region::boundary, kLlcBoundary);
    return std::move(out_);
  }

 private:
  long draw(Band b) { return b.lo == b.hi ? b.lo : snap(rng_.log_uniform(b.lo, b.hi), b); }

  bool add(const GemmShape& s, ShapeClass c, std::string detail) {
    if (!seen_.insert(s).second) return false;
    out_.push_back({s, c, std::move(detail)});
    return true;
  }

  // Adds `count` distinct shapes from `propose` (nullopt = rejected draw).
  template <class Propose>
  void add_n(int count, ShapeClass c, const std::string& detail, Propose propose) {
    for (int added = 0, attempts = 0; added < count; ++attempts) {
      if (attempts > kMaxAttemptsPerShape * count) throw std::logic_error("shape construction cannot reach " + detail);
      if (auto s = propose(); s && add(*s, c, detail)) ++added;
    }
  }

  // Anchors: for each primary shape of the region, in a seeded random order, the first of its
  // six one-axis moves (halve or double M, N or K; moves also in random order) that stays in
  // the domain and region and is new. Parents are revisited until `count` anchors exist.
  void add_anchors(Region region, int count, size_t primaries) {
    std::vector<uint32_t> parents;
    for (uint32_t i = 0; i < primaries; ++i)
      if (region_of(out_[i].shape) == region) parents.push_back(i);
    const auto order = rng_.choose(static_cast<uint32_t>(parents.size()), static_cast<uint32_t>(parents.size()));
    int added = 0;
    for (size_t pass = 0; added < count; ++pass) {
      if (pass > 6) throw std::logic_error("anchor construction ran out of parents");
      for (uint32_t o : order) {
        if (added == count) break;
        const GemmShape parent = out_[parents[o]].shape;
        for (uint32_t move : rng_.choose(6, 6)) {
          const int axis = static_cast<int>(move / 2);
          const bool up = move % 2 == 1;
          GemmShape s = parent;
          long& d = dim_of(s, axis);
          d = up ? d * 2 : d / 2;
          if (d % kShapeStep != 0 || d < kShapeMin || d > kShapeMax || region_of(s) != region) continue;
          const std::string detail = std::string(1, kAxisNames[axis]) + (up ? "*2" : "/2") + " of " +
                                     std::to_string(parent.m) + "x" + std::to_string(parent.n) + "x" +
                                     std::to_string(parent.k);
          if (add(s, ShapeClass::anchor, detail)) {
            ++added;
            break;
          }
        }
      }
    }
  }

  enum class Transition { ridge, llc };

  // Transition shapes: two dimensions drawn, the third solved so the criterion hits a target
  // drawn within +-tolerance/2 of its threshold, then the three placed in a random order of
  // (M, N, K) (both criteria are symmetric in M, N, K). Accepted when the snapped shape is in
  // the domain and region and tags_for() confirms it is near the threshold.
  //   ridge: I = abc / (ab + bc + ca) = R      =>  c = 1 / (1/R - 1/a - 1/b)
  //   llc:   2 (ab + bc + ca) = L2 bytes       =>  c = (L2/2 - ab) / (a + b)
  // Interior shapes draw both free dimensions from the interior band; boundary shapes draw one
  // from an extreme band (ridge: only the high band, since every dimension must exceed R).
  void add_transition(Transition kind, Region region, int count) {
    const bool ridge = kind == Transition::ridge;
    const char* detail = ridge ? "ridge" : "llc";
    const double threshold = ridge ? hw_.ridge_flops_per_byte() : hw_.l2_bytes;
    add_n(count, ShapeClass::transition, detail, [&]() -> std::optional<GemmShape> {
      const double target = threshold * rng_.uniform(1 - kTransitionTolerance / 2, 1 + kTransitionTolerance / 2);
      double a, b;
      if (region == Region::interior) {
        a = static_cast<double>(draw(kInteriorBand));
        b = static_cast<double>(draw(kInteriorBand));
      } else {
        const bool low = !ridge && rng_.below(2) == 0;
        a = static_cast<double>(draw(low ? kLowBand : kHighBand));
        b = static_cast<double>(draw(kFullBand));
      }
      const double c = ridge ? 1.0 / (1.0 / target - 1.0 / a - 1.0 / b) : (target / 2 - a * b) / (a + b);
      if (!(c >= kShapeMin - kShapeStep / 2 && c <= kShapeMax + kShapeStep / 2)) return std::nullopt;
      const long dims[3] = {static_cast<long>(a), static_cast<long>(b), snap(c, kFullBand)};
      static constexpr int kPerms[6][3] = {{0, 1, 2}, {0, 2, 1}, {1, 0, 2}, {1, 2, 0}, {2, 0, 1}, {2, 1, 0}};
      const auto& p = kPerms[rng_.below(6)];
      const GemmShape s{dims[p[0]], dims[p[1]], dims[p[2]]};
      const ShapeTags t = tags_for(s, hw_);
      if (region_of(s) != region || !(ridge ? t.near_ridge : t.near_llc)) return std::nullopt;
      return s;
    });
  }

  Rng rng_;
  const HardwareDesc& hw_;
  std::set<GemmShape> seen_;
  std::vector<BaseShape> out_;
};

}  // namespace

std::vector<BaseShape> paper_base_shapes(uint64_t seed, const HardwareDesc& hw) {
  return PaperBuilder(seed, hw).build();
}


// Held-out anchor-grid shapes: every one-axis neighbour (M, N or K halved or doubled) of every
// paper base shape that stays on the grid (multiples of 32 in [32, 16384]) and is not itself a
// base shape, deduplicated, in a seeded random order. They share the anchors' construction rule
// but no shape with the training set, so evaluation groups drawn from them are disjoint from it.
std::vector<BaseShape> heldout_anchor_shapes(uint64_t seed, const HardwareDesc& hw) {
  const auto base = paper_base_shapes(seed, hw);
  std::set<GemmShape> taken;
  for (const auto& b : base) taken.insert(b.shape);
  std::vector<BaseShape> out;
  for (const auto& b : base)
    for (int move = 0; move < 6; ++move) {
      const int axis = move / 2;
      const bool up = move % 2 == 1;
      GemmShape s = b.shape;
      long& d = dim_of(s, axis);
      d = up ? d * 2 : d / 2;
      if (d % kShapeStep != 0 || d < kShapeMin || d > kShapeMax || !taken.insert(s).second) continue;
      out.push_back({s, ShapeClass::anchor,
                     std::string("heldout ") + kAxisNames[axis] + (up ? "*2" : "/2") + " of " +
                         std::to_string(b.shape.m) + "x" + std::to_string(b.shape.n) + "x" + std::to_string(b.shape.k)});
    }
  Rng rng(detail::mix64(seed ^ 0x68656c646f7574ULL));  // "heldout"
  const auto order = rng.choose(static_cast<uint32_t>(out.size()), static_cast<uint32_t>(out.size()));
  std::vector<BaseShape> shuffled;
  shuffled.reserve(out.size());
  for (uint32_t i : order) shuffled.push_back(out[i]);
  return shuffled;
}

}  // namespace cks
