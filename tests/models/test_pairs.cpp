// Model B's pair sampling (needle guarantee, cap) and LambdaRank weights.
#include <gtest/gtest.h>

#include <set>

#include "cks/models.hpp"
#include "models/pairs.hpp"

using namespace cks;
using models_detail::RankPair;

TEST(ModelsPairs, NeedlePairsAlwaysKeptRestCapped) {
  std::vector<float> y;
  std::vector<int> grade;
  for (int i = 0; i < 200; ++i) {
    y.push_back(1.0f - i * 0.004f);
    grade.push_back(31 - i / 4);  // bands of four
  }
  std::mt19937_64 rng(1);
  const auto pairs = models_detail::sample_pairs(y, grade, 3000, 8, rng);
  std::set<std::pair<uint32_t, uint32_t>> seen;
  size_t needle = 0;
  for (const RankPair& p : pairs) {
    EXPECT_GT(grade[p.hi], grade[p.lo]);
    EXPECT_TRUE(seen.insert({p.hi, p.lo}).second) << "duplicate pair";
    needle += p.hi < 8 || p.lo < 8;
  }
  // Rows 0..7 are bands 0 and 1: 196 other-band partners each; the 16 pairs between them counted once.
  EXPECT_EQ(needle, 8u * 196 - 16);
  EXPECT_EQ(pairs.size(), 3000u);
  // A cap below the needle count keeps all needle pairs and nothing else.
  std::mt19937_64 rng2(1);
  EXPECT_EQ(models_detail::sample_pairs(y, grade, 10, 8, rng2).size(), needle);
}

TEST(ModelsPairs, LambdaRankWeightsAreDeltaNdcg) {
  const std::vector<float> y{1.0f, 0.5f};
  const std::vector<RankPair> pairs{{0, 1}};
  // Scores rank row 1 first: swapping fixes the order. Linear gains: IDCG = 1 + 0.5/log2(3).
  const auto w = models_detail::lambdarank_weights(y, std::vector<float>{0.f, 1.f}, pairs, false);
  const double idcg = 1.0 + 0.5 / std::log2(3.0);
  EXPECT_NEAR(w[0], 0.5 * (1.0 - 1.0 / std::log2(3.0)) / idcg, 1e-6);
  const auto e = models_detail::lambdarank_weights(y, std::vector<float>{0.f, 1.f}, pairs, true);
  const double g0 = 1.0, g1 = std::exp2(0.5) - 1.0;
  EXPECT_NEAR(e[0], (g0 - g1) * (1.0 - 1.0 / std::log2(3.0)) / (g0 + g1 / std::log2(3.0)), 1e-6);
}
