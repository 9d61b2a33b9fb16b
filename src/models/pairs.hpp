// Pair sampling and LambdaRank pair weights of Model B (paper, "Model B"). Header-only: used by
// the libtorch training plugin and unit-tested in the core without libtorch.
//
// Pairs: ordered (hi, lo) within one group with y_hi > y_lo beyond measurement noise, i.e.
// grade_hi > grade_lo (candidates of one band are indistinguishable and form no pair).
// Needle guarantee: every pair touching one of the `needle_top` highest-y rows is kept; the
// remaining pairs are subsampled uniformly (without replacement) up to `cap` pairs in total.
// LambdaRank weight of (i, j): |dNDCG| = |g_i - g_j| |1/log2(1 + r_i) - 1/log2(1 + r_j)| / IDCG,
// gains g = y (linear) or 2^y - 1 (exponential), r = 1-based ranks by the current scores,
// IDCG = sum_r g_pi(r) / log2(1 + r) for the y-sorted order pi.
#pragma once
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <numeric>
#include <random>
#include <span>
#include <unordered_set>
#include <vector>

namespace cks::models_detail {

struct RankPair {
  uint32_t hi = 0, lo = 0;  // row offsets within the group
};

inline std::vector<RankPair> sample_pairs(std::span<const float> y, std::span<const int> grade, size_t cap,
                                          size_t needle_top, std::mt19937_64& rng) {
  const size_t n = y.size();
  std::vector<uint32_t> by_y(n);
  std::iota(by_y.begin(), by_y.end(), 0u);
  std::stable_sort(by_y.begin(), by_y.end(), [&](uint32_t a, uint32_t b) { return y[a] > y[b]; });
  const size_t needles = std::min(n, needle_top);
  std::vector<char> needle(n, 0);
  for (size_t r = 0; r < needles; ++r) needle[by_y[r]] = 1;
  auto ordered = [&](uint32_t a, uint32_t b) { return grade[a] > grade[b] ? RankPair{a, b} : RankPair{b, a}; };

  std::vector<RankPair> kept;
  for (size_t r = 0; r < needles; ++r) {
    const uint32_t a = by_y[r];
    for (uint32_t j = 0; j < n; ++j)
      // Each needle-needle pair once (from its higher-y end).
      if (grade[a] != grade[j] && (!needle[j] || std::find(by_y.begin(), by_y.begin() + r, j) == by_y.begin() + r))
        kept.push_back(ordered(a, j));
  }
  if (kept.size() >= cap) return kept;

  // The rest: pairs of non-needle rows of different grades, uniformly without replacement.
  std::vector<uint32_t> others;
  for (uint32_t i = 0; i < n; ++i)
    if (!needle[i]) others.push_back(i);
  std::vector<RankPair> rest;
  const size_t want = cap - kept.size();
  const size_t all_pairs = others.size() * (others.size() - (others.empty() ? 0 : 1)) / 2;
  if (all_pairs <= 4 * want) {
    // Few enough to enumerate, then a partial Fisher-Yates shuffle.
    for (size_t a = 0; a < others.size(); ++a)
      for (size_t b = a + 1; b < others.size(); ++b)
        if (grade[others[a]] != grade[others[b]]) rest.push_back(ordered(others[a], others[b]));
    const size_t take = std::min(rest.size(), want);
    for (size_t t = 0; t < take; ++t) {
      std::uniform_int_distribution<size_t> pick(t, rest.size() - 1);
      std::swap(rest[t], rest[pick(rng)]);
    }
    rest.resize(take);
  } else {
    // Rejection sampling of unordered index pairs; bounded attempts (groups of one band have none).
    std::unordered_set<uint64_t> seen;
    std::uniform_int_distribution<size_t> pick(0, others.size() - 1);
    for (size_t attempt = 0; rest.size() < want && attempt < 16 * want; ++attempt) {
      uint32_t a = others[pick(rng)], b = others[pick(rng)];
      if (a == b || grade[a] == grade[b]) continue;
      if (a > b) std::swap(a, b);
      const uint64_t key = (uint64_t(a) << 32) | b;
      if (!seen.insert(key).second) continue;
      rest.push_back(ordered(a, b));
    }
  }
  kept.insert(kept.end(), rest.begin(), rest.end());
  return kept;
}

inline double lambdarank_gain(double y, bool exponential) { return exponential ? std::exp2(y) - 1.0 : y; }

// |dNDCG| weight of every pair, from the current scores of the group's rows.
inline std::vector<float> lambdarank_weights(std::span<const float> y, std::span<const float> scores,
                                             std::span<const RankPair> pairs, bool exponential) {
  const size_t n = y.size();
  std::vector<uint32_t> order(n);
  std::iota(order.begin(), order.end(), 0u);
  std::stable_sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) { return scores[a] > scores[b]; });
  std::vector<double> discount(n);  // 1 / log2(1 + rank) of each row under the current scores
  for (size_t r = 0; r < n; ++r) discount[order[r]] = 1.0 / std::log2(2.0 + static_cast<double>(r));
  std::vector<double> gains(n);
  for (size_t i = 0; i < n; ++i) gains[i] = lambdarank_gain(y[i], exponential);
  std::vector<double> ideal = gains;
  std::sort(ideal.begin(), ideal.end(), std::greater<>());
  double idcg = 0;
  for (size_t r = 0; r < n; ++r) idcg += ideal[r] / std::log2(2.0 + static_cast<double>(r));
  std::vector<float> w(pairs.size());
  for (size_t p = 0; p < pairs.size(); ++p) {
    const auto [i, j] = pairs[p];
    w[p] = idcg > 0 ? static_cast<float>(std::abs(gains[i] - gains[j]) * std::abs(discount[i] - discount[j]) / idcg) : 0.f;
  }
  return w;
}

}  // namespace cks::models_detail
