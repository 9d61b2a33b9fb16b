// cks::Selector and the C API: train -> save -> load -> the same scores, top-K order, the
// cache, the static fallback and error handling at the ABI boundary.
#include <gtest/gtest.h>

#include <fstream>

#include "cks/c_api.h"
#include "cks/sampling.hpp"
#include "cks/selector.hpp"
#include "models/synthetic.hpp"

using namespace cks;

namespace {

// A ridge model trained on a small synthetic registry, saved once for the suite.
const std::string& model_path() {
  static test::ScratchDir dir;
  static const std::string path = [] {
    const Dataset d = test::synthetic_dataset(dir.file("syn.db"), 10, 0, 80, 5);
    TrainOptions o;
    o.kind = ModelKind::ridge;
    train_model(d, o)->save(dir.file("ridge.json"));
    return dir.file("ridge.json");
  }();
  return path;
}

const Problem kProblem{2048, 1024, 4096, Layout::tn};

}  // namespace

TEST(SelectorModel, TopKMatchesTheModelsScoresOfTheCatalogue) {
  const Selector sel(model_path());
  const Ranking top = sel.select_uncached(kProblem, 5);
  ASSERT_EQ(top.size(), 5u);
  // Recompute the full catalogue's scores directly: the selector must return its best five.
  const auto model = Model::load(model_path());
  const Catalogue& cat = Catalogue::get(Layout::tn);
  FeatureMatrix x;
  compute_matrix(kProblem, cat, default_hw(), x);
  std::vector<float> scores(x.rows);
  model->predict(x, scores);
  std::vector<float> sorted = scores;
  std::partial_sort(sorted.begin(), sorted.begin() + 5, sorted.end(), std::greater<>());
  for (size_t i = 0; i < 5; ++i) {
    EXPECT_FLOAT_EQ(static_cast<float>(top[i].score), sorted[i]);
    EXPECT_EQ(top[i].kernel_id, cat.kernels()[top[i].kernel].id());
    float row[512];
    compute_features(kProblem, cat.kernels()[top[i].kernel], top[i].knobs, default_hw(), row);
    FeatureMatrix one;
    one.resize(1, x.cols);
    std::copy(row, row + x.cols, one.data.begin());
    float s = 0;
    model->predict(one, std::span<float>(&s, 1));
    EXPECT_FLOAT_EQ(s, static_cast<float>(top[i].score));
  }
}

TEST(SelectorModel, CacheServesRepeatsAndDeeperRequests) {
  const Selector sel(model_path());
  const Ranking a = sel.select(kProblem, 3);
  EXPECT_EQ(sel.cached_problems(), 1u);
  const Ranking b = sel.select(kProblem, 10);  // within the cached depth of 16
  EXPECT_EQ(sel.cached_problems(), 1u);
  ASSERT_EQ(b.size(), 10u);
  EXPECT_EQ(&a[0], &b[0]);  // the same cached list
  const Ranking c = sel.select(kProblem, 40);  // deeper: re-ranked
  EXPECT_EQ(c.size(), 40u);
  EXPECT_EQ(c[0].kernel_id, a[0].kernel_id);
  for (size_t i = 1; i < c.size(); ++i) EXPECT_GE(c[i - 1].score, c[i].score);
  EXPECT_THROW(sel.select(kProblem, 0), Error);
  EXPECT_THROW(sel.select(Problem{0, 64, 64, Layout::tn}, 1), Error);
}

TEST(SelectorStatic, FallbackRanksByTheStaticScore) {
  const Selector sel = Selector::static_score(default_hw());
  const Ranking r = sel.select(Problem{4096, 4096, 4096, Layout::nt}, 4);
  ASSERT_EQ(r.size(), 4u);
  const auto& kernels = Catalogue::get(Layout::nt).kernels();
  for (size_t i = 0; i < r.size(); ++i) {
    EXPECT_NEAR(r[i].score, static_score(GemmShape{4096, 4096, 4096}, kernels[r[i].kernel], r[i].knobs, default_hw()),
                1e-12);
    if (i) {
      EXPECT_GE(r[i - 1].score, r[i].score);
    }
  }
  EXPECT_EQ(sel.description(), "static score");
}

TEST(SelectorCApi, SelectsThroughTheAbi) {
  cks_selector_handle h = nullptr;
  ASSERT_EQ(cks_selector_create(model_path().c_str(), &h), 0) << cks_last_error();
  cks_selection out[8];
  uint32_t n = 0;
  ASSERT_EQ(cks_selector_select(h, 2048, 1024, 4096, "tn", 8, out, &n), 0) << cks_last_error();
  EXPECT_EQ(n, 8u);
  const Ranking ref = Selector(model_path()).select(kProblem, 8);
  for (uint32_t i = 0; i < n; ++i) {
    EXPECT_EQ(std::string(out[i].kernel_id), ref[i].kernel_id);
    EXPECT_EQ(std::string(out[i].knobs), ref[i].knobs_text);
    EXPECT_EQ(std::string(out[i].canonical), ref[i].canonical);
    EXPECT_DOUBLE_EQ(out[i].score, ref[i].score);
    EXPECT_GT(out[i].tile_m, 0);
  }
  // Errors come back as -1 with a message, never as an exception or a crash.
  EXPECT_EQ(cks_selector_select(h, 2048, 1024, 4096, "xy", 8, out, &n), -1);
  EXPECT_NE(std::string(cks_last_error()).find("unknown layout"), std::string::npos);
  EXPECT_EQ(cks_selector_select(h, 0, 1024, 4096, "tn", 8, out, &n), -1);
  EXPECT_EQ(cks_selector_select(h, 64, 64, 64, "tn", 8, nullptr, &n), -1);
  EXPECT_EQ(cks_selector_select(nullptr, 64, 64, 64, "tn", 1, out, &n), -1);
  EXPECT_EQ(cks_selector_free(h), 0);

  cks_selector_handle bad = nullptr;
  EXPECT_EQ(cks_selector_create("/nonexistent/model.json", &bad), -1);
  EXPECT_EQ(bad, nullptr);
  EXPECT_NE(std::string(cks_last_error()).find("cannot read model file"), std::string::npos);
  EXPECT_EQ(cks_selector_create(nullptr, nullptr), -1);

  cks_selector_handle st = nullptr;
  ASSERT_EQ(cks_selector_create_static(&st), 0);
  ASSERT_EQ(cks_selector_select(st, 128, 128, 128, "tt", 1, out, &n), 0);
  EXPECT_EQ(n, 1u);
  cks_selector_free(st);
}
