// Regret, top-k regret, rank and the summary table on hand examples.
#include <gtest/gtest.h>

#include <map>

#include <algorithm>
#include <cmath>
#include <numeric>

#include "cks/models.hpp"

using namespace cks;

TEST(EvalMetrics, OutcomeOfScoresOnAHandExample) {
  const std::vector<double> t{10, 20, 15, 5};
  const std::vector<float> s{0.9f, 0.1f, 0.5f, 0.0f};
  const GroupOutcome o = outcome_of_scores(t, s, 12.5);
  ASSERT_TRUE(o.covered);
  EXPECT_DOUBLE_EQ(o.regret, 0.5);
  EXPECT_DOUBLE_EQ(o.rank, 3);
  EXPECT_DOUBLE_EQ(o.hit, 0);
  EXPECT_DOUBLE_EQ(o.topk_regret[0], 0.5);   // k = 1
  EXPECT_DOUBLE_EQ(o.topk_regret[1], 0.25);  // k = 2: rows 0, 2
  EXPECT_DOUBLE_EQ(o.topk_regret[2], 0.0);   // k = 4: everything
  EXPECT_DOUBLE_EQ(o.topk_regret[4], 0.0);   // k = 16 > group size
  EXPECT_DOUBLE_EQ(o.vs_cublas, 0.8);
}

TEST(EvalMetrics, TiesAndMinimumRank) {
  // Equal scores: the lower row wins. Equal throughputs: minimum rank, and a hit.
  const std::vector<double> t{7, 9, 9, 1};
  const GroupOutcome o = outcome_of_scores(t, std::vector<float>{0, 1, 1, 0}, NAN);
  EXPECT_DOUBLE_EQ(o.regret, 0);
  EXPECT_DOUBLE_EQ(o.hit, 1);
  EXPECT_TRUE(std::isnan(o.vs_cublas));
  const std::vector<uint32_t> order{0};
  EXPECT_DOUBLE_EQ(outcome_of_order(t, order, NAN).rank, 3);  // two candidates are faster
  EXPECT_FALSE(outcome_of_order(t, std::vector<uint32_t>{}, NAN).covered);
}

TEST(EvalMetrics, TopFourOrCublasKeepsTheFasterOfThePicksAndCublas) {
  const std::vector<double> t{10, 20, 30, 40, 50};
  const std::vector<uint32_t> order{0, 1, 2, 3, 4};  // the fastest is the fifth pick
  EXPECT_DOUBLE_EQ(outcome_of_order(t, order, 35).top4_or_cublas, 40.0 / 35);
  EXPECT_DOUBLE_EQ(outcome_of_order(t, order, 45).top4_or_cublas, 1.0);  // cuBLAS is faster
  const std::vector<uint32_t> two{2, 1};  // fewer than four picks: the best of them
  EXPECT_DOUBLE_EQ(outcome_of_order(t, two, 15).top4_or_cublas, 2.0);
  EXPECT_TRUE(std::isnan(outcome_of_order(t, order, NAN).top4_or_cublas));
  EXPECT_TRUE(std::isnan(outcome_of_random(t, 35).top4_or_cublas));
}

TEST(EvalMetrics, RandomIsTheExactExpectation) {
  const std::vector<double> t{4, 2};
  const GroupOutcome o = outcome_of_random(t, NAN);
  EXPECT_DOUBLE_EQ(o.regret, 0.25);
  EXPECT_DOUBLE_EQ(o.rank, 1.5);
  EXPECT_DOUBLE_EQ(o.hit, 0.5);
  EXPECT_DOUBLE_EQ(o.topk_regret[1], 0.0);

  // Best of k draws without replacement vs brute force over every k-subset.
  const std::vector<double> u{3, 9, 1, 7, 7, 4};
  const GroupOutcome r = outcome_of_random(u, NAN);
  for (size_t j = 0; j < 3; ++j) {  // k = 1, 2, 4
    const int k = kTopK[j];
    double sum = 0;
    int subsets = 0;
    for (int mask = 0; mask < 64; ++mask) {
      if (__builtin_popcount(mask) != k) continue;
      double best = 0;
      for (int i = 0; i < 6; ++i)
        if (mask >> i & 1) best = std::max(best, u[i]);
      sum += best;
      ++subsets;
    }
    EXPECT_NEAR(r.topk_regret[j], 1.0 - sum / subsets / 9.0, 1e-12) << "k=" << k;
  }
}

TEST(EvalMetrics, QuantilesInterpolateLikeNumpy) {
  EXPECT_DOUBLE_EQ(quantile({4, 1, 3, 2}, 0.5), 2.5);
  EXPECT_DOUBLE_EQ(quantile({4, 1, 3, 2}, 0.95), 3.85);
  EXPECT_DOUBLE_EQ(quantile({5}, 0.95), 5);
  EXPECT_TRUE(std::isnan(quantile({}, 0.5)));
}

TEST(EvalMetrics, SummaryTableAggregatesPerSlice) {
  std::vector<DataGroup> groups(2);
  groups[0].problem = Problem{8, 4096, 4096, Layout::tn};      // m<=16
  groups[1].problem = Problem{4096, 4096, 4096, Layout::tn};   // m>256, large, square
  MethodOutcomes m{"model", "", {}};
  m.groups.push_back(outcome_of_scores(std::vector<double>{10, 20}, std::vector<float>{1, 0}, 10));  // regret 0.5
  m.groups.push_back(outcome_of_scores(std::vector<double>{10, 20}, std::vector<float>{0, 1}, 10));  // regret 0
  const Table t = summarize({m}, groups, default_hw());
  ASSERT_GE(t.size(), 3u);
  const auto& cols = t.columns();
  auto col = [&](const std::string& name) {
    return static_cast<size_t>(std::find(cols.begin(), cols.end(), name) - cols.begin());
  };
  const auto& all = t.rows()[0];
  EXPECT_EQ(std::get<std::string>(all[col("slice")]), "all");
  EXPECT_EQ(std::get<int64_t>(all[col("groups")]), 2);
  EXPECT_DOUBLE_EQ(std::get<double>(all[col("regret_mean")]), 0.25);
  EXPECT_DOUBLE_EQ(std::get<double>(all[col("regret_max")]), 0.5);
  EXPECT_DOUBLE_EQ(std::get<double>(all[col("top1_hit")]), 0.5);
  EXPECT_NEAR(std::get<double>(all[col("vs_cublas_geomean")]), std::sqrt(1.0 * 2.0), 1e-12);
  // Both groups' two picks include the fastest (20 against cuBLAS's 10): 2 in each.
  EXPECT_NEAR(std::get<double>(all[col("top4_or_cublas_geomean")]), 2.0, 1e-12);
  bool saw_small_m = false;
  for (const auto& row : t.rows())
    if (std::get<std::string>(row[col("slice")]) == "m<=16") {
      saw_small_m = true;
      EXPECT_DOUBLE_EQ(std::get<double>(row[col("regret_mean")]), 0.5);
    }
  EXPECT_TRUE(saw_small_m);
  for (const auto& row : t.rows())
    EXPECT_NE(std::get<std::string>(row[col("slice")]).rfind("layout=", 0), 0u) << "one layout: no layout slice";

  // Groups of two layouts: a slice per layout.
  groups[1].problem.layout = Layout::nt;
  const Table two = summarize({m}, groups, default_hw());
  std::map<std::string, double> by_layout;
  for (const auto& row : two.rows()) {
    const std::string slice = std::get<std::string>(row[col("slice")]);
    if (slice.rfind("layout=", 0) == 0) by_layout[slice] = std::get<double>(row[col("regret_mean")]);
  }
  ASSERT_EQ(by_layout.size(), 2u);
  EXPECT_DOUBLE_EQ(by_layout["layout=tn"], 0.5);
  EXPECT_DOUBLE_EQ(by_layout["layout=nt"], 0.0);
}

TEST(EvalMetrics, PerGroupTableNamesThePickAndTheBest) {
  // One TN group of three catalogue candidates at 10, 30, 20 TFLOP/s; cuBLAS 25.
  const Catalogue& cat = Catalogue::get(Layout::tn);
  Dataset d;
  d.groups.resize(1);
  d.groups[0].key = "512x512x512_tn";
  d.groups[0].set = "eval";
  d.groups[0].problem = Problem{512, 512, 512, Layout::tn};
  d.groups[0].begin = 0;
  d.groups[0].end = 3;
  d.groups[0].cublas_tflops = 25;
  d.candidates = {cat.candidates()[0], cat.candidates()[1], cat.candidates()[2]};
  d.tflops = {10, 30, 20};
  MethodOutcomes model{"model", "", {outcome_of_scores(d.tflops, std::vector<float>{0, 1, 2}, 25)}};  // picks row 2
  MethodOutcomes random{"random", "", {outcome_of_random(d.tflops, 25)}};
  EXPECT_EQ(model.groups[0].pick, 2);
  EXPECT_EQ(random.groups[0].pick, -1) << "an expectation has no pick";
  const Table t = per_group_table({model, random}, d);
  ASSERT_EQ(t.size(), 2u);
  const auto& cols = t.columns();
  auto at = [&](size_t row, const std::string& name) {
    return t.rows()[row][static_cast<size_t>(std::find(cols.begin(), cols.end(), name) - cols.begin())];
  };
  auto id = [&](size_t row) { return cat.kernels()[d.candidates[row].kernel].id(); };
  EXPECT_EQ(std::get<std::string>(at(0, "method")), "model");
  EXPECT_EQ(std::get<std::string>(at(0, "group")), "512x512x512_tn");
  EXPECT_EQ(std::get<std::string>(at(0, "layout")), "tn");
  EXPECT_NEAR(std::get<double>(at(0, "regret")), 1.0 / 3.0, 1e-12);
  EXPECT_EQ(std::get<std::string>(at(0, "pick_kernel")), id(2));
  EXPECT_EQ(std::get<std::string>(at(0, "pick_knobs")), d.candidates[2].knobs.canonical());
  EXPECT_DOUBLE_EQ(std::get<double>(at(0, "pick_tflops")), 20);
  EXPECT_EQ(std::get<std::string>(at(0, "best_kernel")), id(1));
  EXPECT_DOUBLE_EQ(std::get<double>(at(0, "best_tflops")), 30);
  EXPECT_DOUBLE_EQ(std::get<double>(at(0, "cublas_tflops")), 25);
  EXPECT_TRUE(std::holds_alternative<std::monostate>(at(1, "pick_kernel"))) << "random has no pick";
  EXPECT_EQ(std::get<std::string>(at(1, "best_kernel")), id(1));
  // Outcomes of another group count: refused.
  model.groups.push_back(model.groups[0]);
  EXPECT_THROW(per_group_table({model}, d), Error);
}

TEST(EvalMetrics, FoldsKeepEveryLayoutOfAShapeTogether) {
  std::vector<DataGroup> groups;
  for (long s = 1; s <= 10; ++s)
    for (Layout l : kLayouts) {
      DataGroup g;
      g.problem = Problem{64 * s, 128, 256, l};
      groups.push_back(g);
    }
  const std::vector<int> f = shape_folds(groups, 5, 3);
  std::vector<int> per_fold(5, 0);
  for (size_t i = 0; i < groups.size(); ++i) {
    EXPECT_EQ(f[i], f[i / 4 * 4]);  // same shape, same fold
    ++per_fold[f[i]];
  }
  for (int c : per_fold) EXPECT_EQ(c, 8);  // 10 shapes dealt into 5 folds, 4 layouts each
  EXPECT_EQ(shape_folds(groups, 5, 3), f);  // deterministic
  EXPECT_THROW(shape_folds(groups, 11, 3), Error);
  EXPECT_THROW(shape_folds(groups, 1, 3), Error);
}
