// What the selector's prefilter changes, measured on evaluation groups (cks/models.hpp,
// kept_outcomes and selector_outcomes).
#include <algorithm>
#include <map>
#include <mutex>
#include <numeric>
#include <unordered_map>

#include "cks/models.hpp"
#include "cks/selector.hpp"
#include "cks/shapes.hpp"

namespace cks {

namespace {

uint64_t candidate_key(uint32_t kernel, const RuntimeKnobs& k) {
  return (uint64_t{kernel} << 32) | (uint64_t(k.raster) << 24) | (uint64_t(k.max_swizzle & 0xff) << 16) |
         (uint64_t(k.decomposition) << 8) | (uint64_t(k.reduction) << 7) | uint64_t(k.splits & 0x7f);
}

// Catalogue index of a candidate, by kernel and knobs.
const std::unordered_map<uint64_t, uint32_t>& catalogue_index(Layout layout) {
  static std::mutex mu;
  static std::map<Layout, std::unordered_map<uint64_t, uint32_t>> maps;
  std::lock_guard lock(mu);
  auto& m = maps[layout];
  if (m.empty()) {
    const auto& cands = Catalogue::get(layout).candidates();
    for (uint32_t i = 0; i < cands.size(); ++i) m.emplace(candidate_key(cands[i].kernel, cands[i].knobs), i);
  }
  return m;
}

std::vector<uint32_t> indices_of(const Ranking& r, Layout layout) {
  const auto& index = catalogue_index(layout);
  std::vector<uint32_t> out;
  for (const Selection& s : r) out.push_back(index.at(candidate_key(s.kernel, s.knobs)));
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace

std::optional<uint32_t> find_catalogue_position(Layout layout, const Candidate& c) {
  const auto& index = catalogue_index(layout);
  const auto it = index.find(candidate_key(c.kernel, c.knobs));
  if (it == index.end()) return std::nullopt;
  return it->second;
}

uint32_t catalogue_position(Layout layout, const Candidate& c) {
  const auto& index = catalogue_index(layout);
  const auto it = index.find(candidate_key(c.kernel, c.knobs));
  if (it == index.end()) throw Error("candidate " + c.knobs.canonical() + " of kernel " + std::to_string(c.kernel) + " is not in the catalogue");
  return it->second;
}

MethodOutcomes real_pick_outcomes(const std::string& name, const Selector& selector, const Dataset& eval) {
  constexpr size_t kDepth = kTopK.back();
  MethodOutcomes m{name, "", {}};
  size_t first = 0, first4 = 0, swapped_first = 0;
  for (const DataGroup& g : eval.groups) {
    std::unordered_map<uint64_t, uint32_t> rows;  // candidate -> row offset in the group
    for (size_t r = g.begin; r < g.end; ++r)
      rows.emplace(candidate_key(eval.candidates[r].kernel, eval.candidates[r].knobs), static_cast<uint32_t>(r - g.begin));
    const Ranking ranking = selector.select(g.problem, kDepth);
    swapped_first += !ranking.empty() && ranking[0].swapped;
    std::vector<uint32_t> order;
    bool top1 = false;
    size_t in4 = 0;
    for (size_t i = 0; i < ranking.size(); ++i) {
      // A swapped pick (SelectorOptions::orientations = both) indexes another catalogue, and a
      // sliced-K one (SelectorOptions::sliced) is no catalogue candidate: neither is a candidate
      // of the group's data set, so both count as unmeasured here.
      if (ranking[i].swapped || ranking[i].sliced) continue;
      const auto it = rows.find(candidate_key(ranking[i].kernel, ranking[i].knobs));
      if (it == rows.end()) continue;
      if (i == 0) top1 = true;
      if (i < 4) ++in4;
      order.push_back(it->second);
    }
    first += top1;
    first4 += in4 == std::min<size_t>(4, ranking.size());
    GroupOutcome o;
    if (top1) {
      o = outcome_of_order(std::span<const double>(eval.tflops).subspan(g.begin, g.size()), order, g.cublas_tflops);
      o.pick_score = ranking[0].score;
    }
    m.groups.push_back(o);
  }
  m.note = selector.mode() + "; real picks measured: top-1 in " + std::to_string(first) + "/" +
           std::to_string(eval.groups.size()) + " groups, all of the top-4 in " + std::to_string(first4) + "/" +
           std::to_string(eval.groups.size());
  if (swapped_first)
    m.note += "; " + std::to_string(swapped_first) +
              " first picks are swapped kernels, not scored here (cks analyze sidebyside scores them)";
  return m;
}

MethodOutcomes kept_outcomes(const std::string& name, const Model& model, const Dataset& eval,
                             const std::function<std::vector<uint32_t>(const Problem&)>& kept_set) {
  MethodOutcomes m{name, "", {}};
  std::vector<float> scores(eval.rows());
  model.predict(eval.x, scores);
  constexpr size_t kDepth = kTopK.back();
  size_t measured = 0, kept_count = 0;
  for (const DataGroup& g : eval.groups) {
    const auto& index = catalogue_index(g.problem.layout);
    const std::vector<uint32_t> set = kept_set(g.problem);
    kept_count += set.size();
    std::vector<uint32_t> kept;  // row offsets in the group
    for (size_t r = g.begin; r < g.end; ++r) {
      const auto it = index.find(candidate_key(eval.candidates[r].kernel, eval.candidates[r].knobs));
      if (it != index.end() && std::binary_search(set.begin(), set.end(), it->second))
        kept.push_back(static_cast<uint32_t>(r - g.begin));
    }
    measured += kept.size();
    std::sort(kept.begin(), kept.end(), [&](uint32_t a, uint32_t b) {
      const float sa = scores[g.begin + a], sb = scores[g.begin + b];
      return sa > sb || (sa == sb && a < b);
    });
    kept.resize(std::min(kept.size(), kDepth));
    m.groups.push_back(
        outcome_of_order(std::span<const double>(eval.tflops).subspan(g.begin, g.size()), kept, g.cublas_tflops));
  }
  const double groups = std::max<double>(1.0, static_cast<double>(eval.groups.size()));
  m.note = "kept per group " + format_double(static_cast<double>(kept_count) / groups) + ", of them measured " +
           format_double(static_cast<double>(measured) / groups);
  return m;
}

std::vector<MethodOutcomes> selector_outcomes(const std::string& name, const Model& model, const Selector& selector,
                                              const Selector& exhaustive, const Dataset& eval) {
  if (selector.options().orientations != Orientations::own || exhaustive.options().orientations != Orientations::own)
    throw Error("selector_outcomes: the prefilter proxies rank the candidates of the group's own catalogue: "
                "selectors of the own orientation only");
  constexpr size_t kDepth = kTopK.back();
  std::map<std::string, size_t> kept_count;  // per group key
  MethodOutcomes two_stage = kept_outcomes(name, model, eval, [&](const Problem& p) {
    std::vector<uint32_t> kept = selector.prefiltered(p, kDepth);
    kept_count[group_key(GemmShape{p.m, p.n, p.k}, p.layout)] = kept.size();
    return kept;
  });
  MethodOutcomes top_n = kept_outcomes(name + " exhaustive top-N", model, eval, [&](const Problem& p) {
    return indices_of(exhaustive.select(p, kept_count.at(group_key(GemmShape{p.m, p.n, p.k}, p.layout))), p.layout);
  });
  top_n.note = "the exhaustive ranking's top N (N = what " + name + " keeps); " + top_n.note;
  size_t same_top1 = 0, overlap8 = 0;
  for (const DataGroup& g : eval.groups) {
    const Ranking a = selector.select_uncached(g.problem, 8), b = exhaustive.select(g.problem, 8);
    auto same = [](const Selection& x, const Selection& y) { return x.kernel == y.kernel && x.knobs == y.knobs; };
    same_top1 += !a.empty() && !b.empty() && same(a[0], b[0]);
    for (const Selection& x : a)
      overlap8 += std::any_of(b.begin(), b.end(), [&](const Selection& y) { return same(x, y); });
  }
  const size_t groups = eval.groups.size();
  two_stage.note = selector.mode() + "; " + two_stage.note + "; catalogue top-1 = exhaustive in " +
                   std::to_string(same_top1) + "/" + std::to_string(groups) + " groups, top-8 overlap " +
                   format_double(groups ? static_cast<double>(overlap8) / (8.0 * groups) : 0.0);
  return {std::move(two_stage), std::move(top_n)};
}

}  // namespace cks
