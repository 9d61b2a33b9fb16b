// cks::Selector and the C API: train -> save -> load -> the same scores, top-K order (exhaustive
// and two-stage), the cascade, the cache, the static classes and fallback, and error handling at
// the ABI boundary.
#include <gtest/gtest.h>

#include <set>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <numeric>
#include <random>

#include "cks/c_api.h"
#include "cks/sampling.hpp"
#include "cks/selector.hpp"
#include "common/test_util.hpp"
#include "models/synthetic.hpp"
#include "cli/selector_opts.hpp"
#include "selector/static_index.hpp"

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

// A small XGBoost model (an additive model: the cascade applies), trained once.
std::shared_ptr<const Model> xgboost_model() {
  static test::ScratchDir dir;
  static const std::shared_ptr<const Model> model = [] {
    const Dataset d = test::synthetic_dataset(dir.file("syn.db"), 10, 0, 80, 7);
    TrainOptions o;
    o.rounds = 40;
    o.threads = 2;
    return std::shared_ptr<const Model>(train_model(d, o));
  }();
  return model;
}

const Problem kProblem{2048, 1024, 4096, Layout::tn};

SelectorOptions exhaustive_options() {
  SelectorOptions o = test::own_orientation();
  o.prefilter = 0;
  return o;
}

// The full model's score of one candidate.
float model_score(const Model& model, const Problem& p, const Selection& s) {
  FeatureMatrix one;
  one.resize(1, FeatureSchema::get().size());
  compute_features(p, Catalogue::get(p.layout).kernels()[s.kernel], s.knobs, default_hw(), one.row(0));
  float score = 0;
  model.predict(one, std::span<float>(&score, 1));
  return score;
}

bool same_candidate(const Selection& a, const Selection& b) { return a.kernel == b.kernel && a.knobs == b.knobs; }

// The default sliced-K rule as Selector::mode() names it (SlicedRule; on since session 42).
const std::string kSliced = "; sliced-K rule (<= 8 64x64 tiles, M <= 128, K >= 6144; tiles x slices <= 96, K / slices >= 512)";

}  // namespace

TEST(SelectorModel, ExhaustiveTopKMatchesTheModelsScoresOfTheCatalogue) {
  const Selector sel(model_path(), exhaustive_options());
  EXPECT_EQ(sel.mode(), "exhaustive" + kSliced);
  SelectorOptions both = exhaustive_options();
  both.orientations = Orientations::both;
  EXPECT_EQ(Selector(model_path(), both).mode(),
            "exhaustive; both orientations (M <= 256; tn, nn, tt; or M > 4096 with N <= 512; or M > 256 with N <= 512 and K <= 4096)" + kSliced);
  both.swap_max_m = 0;
  both.swap_layouts = 0xF;
  EXPECT_EQ(Selector(model_path(), both).mode(), "exhaustive; both orientations" + kSliced);
  both.swap_layouts = 1u << static_cast<int>(Layout::nt);
  both.swap_tall_min_m = 0;
  both.swap_tall_max_k = 0;
  EXPECT_EQ(Selector(model_path(), both).mode(), "exhaustive; both orientations (nt)" + kSliced);
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

TEST(SelectorModel, TwoStageRanksTheFinalistsByTheFullModel) {
  const auto model = std::shared_ptr<const Model>(Model::load(model_path()));
  SelectorOptions o = test::own_orientation();
  o.prefilter = 700;
  o.evidence_groups = 0;  // the prefilter alone (evidence: SelectorEvidence)
  const Selector sel(model, o);
  EXPECT_EQ(sel.mode(), "prefilter 700" + kSliced);  // ridge: not additive, no cascade
  const std::vector<uint32_t> kept = sel.prefiltered(kProblem, 8);
  ASSERT_EQ(kept.size(), 700u);
  EXPECT_TRUE(std::is_sorted(kept.begin(), kept.end()));
  // The ranking is the exact top-8 of the kept by the model's score (ties: lower index).
  const Catalogue& cat = Catalogue::get(Layout::tn);
  std::vector<Candidate> cands;
  for (uint32_t i : kept) cands.push_back(cat.candidates()[i]);
  FeatureMatrix x;
  FeatureComputer(cat.kernels(), default_hw()).compute(kProblem, cands, x);
  std::vector<float> scores(x.rows);
  model->predict(x, scores);
  std::vector<uint32_t> order(kept.size());
  std::iota(order.begin(), order.end(), 0u);
  std::stable_sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) { return scores[a] > scores[b]; });
  const Ranking r = sel.select_uncached(kProblem, 8);
  ASSERT_EQ(r.size(), 8u);
  for (size_t i = 0; i < 8; ++i) {
    EXPECT_EQ(r[i].kernel, cands[order[i]].kernel) << i;
    EXPECT_EQ(r[i].knobs, cands[order[i]].knobs) << i;
    EXPECT_FLOAT_EQ(static_cast<float>(r[i].score), scores[order[i]]);
  }
  // A request deeper than the prefilter keeps at least that many.
  EXPECT_EQ(sel.prefiltered(kProblem, 900).size(), 900u);
  EXPECT_EQ(sel.select_uncached(kProblem, 900).size(), 900u);
}

TEST(SelectorModel, PrefilterCoveringTheCatalogueEqualsExhaustive) {
  const auto model = std::shared_ptr<const Model>(Model::load(model_path()));
  SelectorOptions o = test::own_orientation();
  o.prefilter = 1u << 30;
  const Selector all(model, o), exhaustive(model, exhaustive_options());
  for (const Problem& p : {kProblem, Problem{64, 64, 8192, Layout::nt}}) {
    const Ranking a = all.select_uncached(p, 8), b = exhaustive.select_uncached(p, 8);
    ASSERT_EQ(a.size(), b.size());
    for (size_t i = 0; i < a.size(); ++i) {
      EXPECT_TRUE(same_candidate(a[i], b[i])) << i;
      EXPECT_EQ(a[i].score, b[i].score);
    }
  }
}

TEST(SelectorModel, KnowsTheLayoutsItWasTrainedOn) {
  const Selector sel(model_path());  // 10 TN training groups
  EXPECT_EQ(sel.training_groups(Layout::tn), std::optional<size_t>(10));
  EXPECT_EQ(sel.training_groups(Layout::tt), std::optional<size_t>(0));
  EXPECT_FALSE(Selector::static_score(default_hw(), test::own_orientation()).training_groups(Layout::tn).has_value());
}

// A small cascade for the test model: prefilter 600, 10 trees for all, the other trees for 50.
SelectorOptions small_cascade() {
  SelectorOptions o = test::own_orientation();
  o.prefilter = 600;
  o.cascade_terms = 10;
  o.cascade_keep = 50;
  o.prior_terms = 10;
  o.evidence_groups = 0;
  return o;
}

TEST(SelectorModel, CascadeReturnsTheFullModelsScores) {
  const auto model = xgboost_model();
  SelectorOptions o = small_cascade();
  const Selector sel(model, o);
  EXPECT_EQ(sel.mode(), "prefilter 600, cascade 10 trees -> 50" + kSliced);
  EXPECT_EQ(sel.prefiltered(kProblem, 8).size(), 600u);
  const Ranking r = sel.select_uncached(kProblem, 8);
  ASSERT_EQ(r.size(), 8u);
  for (size_t i = 0; i < r.size(); ++i) {
    EXPECT_EQ(static_cast<float>(r[i].score), model_score(*model, kProblem, r[i])) << i;  // bit for bit
    if (i) {
      EXPECT_GE(r[i - 1].score, r[i].score);
    }
  }
  // Keeping every prefiltered candidate makes the cascade the plain two-stage ranking.
  o.cascade_keep = 600;
  const Ranking plain = Selector(model, [&] { SelectorOptions p = o; p.cascade_terms = 0; return p; }()).select_uncached(kProblem, 8);
  const Ranking kept = Selector(model, o).select_uncached(kProblem, 8);
  for (size_t i = 0; i < 8; ++i) EXPECT_TRUE(same_candidate(plain[i], kept[i])) << i;
}

TEST(SelectorModel, TheRankingsHeadIsTheSameForEveryDepth) {
  // A deeper request (cks bundle asks for 256) appends to what the default cascade keeps: it never
  // changes the first picks (a wider cascade alone let a candidate the default one cuts become the
  // first, so a bundle ran another kernel than cks select printed).
  const auto model = xgboost_model();
  const Selector sel(model, small_cascade());
  for (const Problem& p : {kProblem, Problem{4096, 4096, 4096, Layout::tn}, Problem{128, 1024, 512, Layout::tn}}) {
    const Ranking shallow = sel.select_uncached(p, 50);
    for (size_t depth : {size_t{1}, size_t{8}, size_t{51}, size_t{256}, size_t{900}}) {
      const Ranking deep = sel.select_uncached(p, depth);
      ASSERT_EQ(deep.size(), depth);
      for (size_t i = 0; i < std::min<size_t>(depth, shallow.size()); ++i)
        EXPECT_TRUE(same_candidate(shallow[i], deep[i])) << "depth " << depth << ", rank " << i + 1;
      std::set<std::pair<uint32_t, std::string>> seen;  // no candidate twice
      for (const Selection& s : deep) EXPECT_TRUE(seen.insert({s.kernel, s.knobs_text}).second) << s.kernel_id << " " << s.knobs_text;
    }
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
  const Selector sel = Selector::static_score(default_hw(), test::own_orientation());
  EXPECT_EQ(sel.description(), "static score");
  for (const Problem& p : {Problem{4096, 4096, 4096, Layout::nt}, Problem{24, 4096, 640, Layout::tn}}) {
    // The whole catalogue by (static score desc, index asc), directly.
    const Catalogue& cat = Catalogue::get(p.layout);
    std::vector<std::pair<double, uint32_t>> all;
    for (uint32_t i = 0; i < cat.candidates().size(); ++i)
      all.emplace_back(-static_score(GemmShape{p.m, p.n, p.k}, cat.kernels()[cat.candidates()[i].kernel],
                                     cat.candidates()[i].knobs, default_hw()),
                       i);
    std::partial_sort(all.begin(), all.begin() + 40, all.end());
    const Ranking r = sel.select(p, 40);
    ASSERT_EQ(r.size(), 40u);
    for (size_t i = 0; i < r.size(); ++i) {
      EXPECT_EQ(r[i].score, -all[i].first) << i;
      EXPECT_EQ(r[i].kernel, cat.candidates()[all[i].second].kernel) << i;
      EXPECT_EQ(r[i].knobs, cat.candidates()[all[i].second].knobs) << i;
    }
  }
}

// --orientations both: where the swapped orientation's best static estimate is ahead (M = 136:
// tile N 144 against tile M 192), the transposed problem's ranking, run by swapped kernels,
// interleaved with the own one, the swapped first; elsewhere the own ranking alone. The head does
// not depend on depth; swap_max_m and swap_layouts limit the problems it is tried on.
TEST(SelectorOrientations, BothInterleavesTheTransposedProblemsSwappedKernels) {
  SelectorOptions o = test::own_orientation();
  o.orientations = Orientations::both;
  const Selector both = Selector::static_score(default_hw(), o);
  const Selector own = Selector::static_score(default_hw(), test::own_orientation());
  EXPECT_EQ(both.mode(), "static score; both orientations (M <= 256; tn, nn, tt; or M > 4096 with N <= 512; or M > 256 with N <= 512 and K <= 4096)" + kSliced);
  const Problem odd{136, 14336, 5120, Layout::nn};
  const Problem transposed{14336, 136, 5120, Layout::tt};
  const Ranking r = both.select(odd, 16);
  const Ranking mine = own.select(odd, 8), theirs = own.select(transposed, 8);
  ASSERT_EQ(r.size(), 16u);
  for (size_t i = 0; i < 8; ++i) {
    const Selection& s = r[2 * i];  // the swapped orientation leads
    EXPECT_TRUE(s.swapped) << i;
    EXPECT_TRUE(same_candidate(s, theirs[i])) << i;  // an index into the tt catalogue
    const KernelDesc t = Catalogue::get(Layout::tt).kernels()[s.kernel].swapped_twin();
    EXPECT_EQ(s.canonical, t.canonical());
    EXPECT_EQ(s.kernel_id, t.id());
    EXPECT_EQ(find_kernel(Layout::nn, s.kernel_id), std::optional<KernelDesc>(t));
    EXPECT_FALSE(r[2 * i + 1].swapped);
    EXPECT_TRUE(same_candidate(r[2 * i + 1], mine[i])) << i;
    EXPECT_EQ(r[2 * i + 1].kernel_id, mine[i].kernel_id);
  }
  EXPECT_GT(theirs[0].score, 1.05 * mine[0].score);
  EXPECT_TRUE(same_candidate(both.select_uncached(odd, 1)[0], r[0]));
  // A square problem: the own orientation leads (the two estimates are equal): its ranking alone.
  const Problem square{4096, 4096, 4096, Layout::tn};
  const Ranking sq = both.select(square, 16), sq_own = own.select(square, 16);
  ASSERT_EQ(sq.size(), 16u);
  for (size_t i = 0; i < 16; ++i) {
    EXPECT_FALSE(sq[i].swapped) << i;
    EXPECT_TRUE(same_candidate(sq[i], sq_own[i])) << i;
  }
  // own (the default) never returns a swapped kernel.
  for (const Selection& s : own.select(odd, 16)) EXPECT_FALSE(s.swapped);
  // Limits: M above swap_max_m, or a layout outside swap_layouts, keeps the own ranking.
  for (const auto& [max_m, layouts] : {std::pair<long, unsigned>{128, 0xFu}, {0, 0xFu & ~(1u << int(Layout::nn))}}) {
    SelectorOptions lo = o;
    lo.swap_max_m = max_m;
    lo.swap_layouts = layouts;
    EXPECT_FALSE(swap_eligible(lo, odd));
    const Ranking limited = Selector::static_score(default_hw(), lo).select(odd, 4);
    for (size_t i = 0; i < 4; ++i) EXPECT_TRUE(same_candidate(limited[i], mine[i])) << i;
  }
  SelectorOptions lo = o;
  lo.swap_max_m = 136;
  lo.swap_layouts = 1u << int(Layout::nn);
  EXPECT_TRUE(swap_eligible(lo, odd));
  EXPECT_TRUE(Selector::static_score(default_hw(), lo).select(odd, 1)[0].swapped);
}

TEST(SelectorOrientations, TheRankingIsTheSameAtOnceAndInTurn) {
  // Both orientations ranked at once (each ranking with its own workers) or one after the other
  // (the transposed ranking skipped where the best static score of its catalogue cannot beat the
  // bar): the same ranking, bit for bit, on 1 or 3 select threads. The problems cover the three
  // cases: the swapped orientation leads, the own one leads by the bound alone, and the own one
  // leads after both rankings.
  const auto model = xgboost_model();
  const std::vector<Problem> problems{{136, 14336, 5120, Layout::nn}, {4096, 4096, 4096, Layout::tn},
                                      {16, 6144, 4096, Layout::tn},   {1024, 512, 8192, Layout::nt},
                                      {160, 256, 8128, Layout::nn},   {8, 4096, 4096, Layout::tt},
                                      {12000, 4096, 4096, Layout::tn}, {4096, 136, 5120, Layout::tt}};
  SelectorOptions o = small_cascade();
  o.orientations = Orientations::both;
  std::vector<std::vector<Selection>> reference;
  for (const int concurrent : {1, 0}) {
    for (const int threads : {1, 3}) {
      SelectorOptions so = o;
      so.concurrent_orientations = concurrent;
      so.select_threads = threads;
      const Selector sel(model, so);
      EXPECT_EQ(sel.concurrent_orientations(), concurrent == 1);
      for (size_t i = 0; i < problems.size(); ++i) {
        const Ranking r = sel.select_uncached(problems[i], 16);
        const std::vector<Selection> list(r.begin(), r.end());
        if (reference.size() <= i) {
          reference.push_back(list);
          continue;
        }
        ASSERT_EQ(list.size(), reference[i].size()) << i;
        for (size_t j = 0; j < list.size(); ++j) {
          EXPECT_TRUE(same_candidate(list[j], reference[i][j])) << i << " " << j;
          EXPECT_EQ(list[j].swapped, reference[i][j].swapped) << i << " " << j;
          EXPECT_EQ(list[j].score, reference[i][j].score) << i << " " << j;
        }
      }
    }
  }
  // The three cases, from the own ranking and the transposed catalogue's best static score.
  SelectorOptions oo = o;
  oo.orientations = Orientations::own;
  const Selector own(model, oo);
  size_t swapped = 0, bound = 0, both_ranked = 0;
  for (size_t i = 0; i < problems.size(); ++i) {
    const Problem& p = problems[i];
    if (reference[i][0].swapped) {
      ++swapped;
      continue;
    }
    const Ranking mine = own.select_uncached(p, 16);
    double estimate = 0;
    for (size_t j = 0; j < o.orientation_depth; ++j)
      estimate = std::max(estimate, static_score(GemmShape{p.m, p.n, p.k}, Catalogue::get(p.layout).kernels()[mine[j].kernel],
                                                 mine[j].knobs, default_hw()));
    const Problem q{p.n, p.m, p.k, swap_layout(p.layout)};
    const selector_detail::StaticIndex index(Catalogue::get(q.layout), default_hw());
    (index.top_static(q, 1).front().first > (1 + o.swap_margin) * estimate ? both_ranked : bound)++;
  }
  EXPECT_GT(swapped, 0u);
  EXPECT_GT(bound, 0u);
  EXPECT_GT(both_ranked, 0u);
}

TEST(SelectorStaticIndex, ClassScoresAreTheStaticScore) {
  const Catalogue& cat = Catalogue::get(Layout::tn);
  const selector_detail::StaticIndex index(cat, default_hw());
  EXPECT_LT(index.classes(), cat.candidates().size() / 10);
  std::vector<double> scores;
  for (const Problem& p : {Problem{4096, 4096, 4096, Layout::tn}, Problem{7, 13, 100000, Layout::tn},
                           Problem{100, 5000, 64, Layout::tn}}) {
    index.class_scores(p, scores);
    size_t differ = 0;
    for (uint32_t i = 0; i < cat.candidates().size(); ++i) {
      const Candidate& c = cat.candidates()[i];
      differ += scores[index.class_of(i)] != static_score(GemmShape{p.m, p.n, p.k}, cat.kernels()[c.kernel], c.knobs, default_hw());
    }
    EXPECT_EQ(differ, 0u) << p.m << "x" << p.n << "x" << p.k;  // bit for bit
  }
}

TEST(SelectorStaticIndex, PrefilterIsTheTopByKey) {
  const Catalogue& cat = Catalogue::get(Layout::nt);
  selector_detail::StaticIndex index(cat, default_hw());
  // Two priors (two views) with many ties (quarter steps).
  std::vector<std::vector<float>> priors(2, std::vector<float>(cat.candidates().size()));
  std::mt19937 rng(3);
  std::normal_distribution<float> normal;
  for (auto& prior : priors)
    for (float& v : prior) v = std::round(normal(rng) * 4) / 4;
  index.set_priors(priors, 0.3);
  ASSERT_EQ(index.views(), 2u);
  std::vector<double> scores;
  for (size_t view = 0; view < priors.size(); ++view) {
    const std::vector<float>& prior = priors[view];
    for (const auto& [p, n] : std::vector<std::pair<Problem, size_t>>{{{4096, 4096, 4096, Layout::nt}, 2048},
                                                                      {{40, 9000, 200, Layout::nt}, 1},
                                                                      {{3000, 64, 7000, Layout::nt}, 5000}}) {
      index.class_scores(p, scores);
      std::vector<std::pair<double, uint32_t>> all;
      for (uint32_t i = 0; i < cat.candidates().size(); ++i)
        all.emplace_back(-(scores[index.class_of(i)] * std::exp(0.3 * static_cast<double>(prior[i]))), i);
      std::partial_sort(all.begin(), all.begin() + static_cast<std::ptrdiff_t>(n), all.end());
      std::vector<uint32_t> expected;
      for (size_t i = 0; i < n; ++i) expected.push_back(all[i].second);
      std::sort(expected.begin(), expected.end());
      double best = -1;
      EXPECT_EQ(index.top_prefilter(p, n, view, &best), expected) << "view " << view << ": " << p.m << "x" << p.n << "x" << p.k;
      EXPECT_EQ(best, index.top_static(p, 1).front().first);  // the catalogue's best static score
      EXPECT_EQ(best, index.best_static(p));
    }
  }
  EXPECT_THROW(index.top_prefilter(Problem{64, 64, 64, Layout::nt}, 10, 2), Error);
  // One prior is view 0; weight 0 is no prior (the static top).
  index.set_prior(priors[1], 0.3);
  EXPECT_EQ(index.views(), 1u);
  const Problem p{500, 3000, 1000, Layout::nt};
  index.set_priors(priors, 0);
  EXPECT_EQ(index.views(), 0u);
  std::vector<uint32_t> statics;
  for (const auto& [score, i] : index.top_static(p, 300)) statics.push_back(i);
  std::sort(statics.begin(), statics.end());
  double best = -1;
  EXPECT_EQ(index.top_prefilter(p, 300, 1, &best), statics);
  EXPECT_EQ(best, index.top_static(p, 1).front().first);
}

// PriorMode::nearest: a problem ranks with the prior of its nearest reference problem, i.e.
// exactly as a mean-mode selector whose only reference problem is that one.
TEST(SelectorModel, NearestPriorIsTheNearestReferenceProblemsPrior) {
  const auto model = xgboost_model();
  SelectorOptions near = test::own_orientation();
  near.prefilter = 500;
  near.prior_terms = 10;
  near.prior_mode = PriorMode::nearest;
  near.prior_problems = {{4096, 4096, 4096}, {64, 4096, 512}, {4096, 128, 128}};
  near.evidence_groups = 0;
  const Selector sel(model, near);
  EXPECT_EQ(sel.mode(), "prefilter 500 (prior of the nearest of 3 reference problems)" + kSliced);  // 40 trees: no cascade
  const std::vector<Problem> problems{{3000, 5000, 2048, Layout::tn}, {100, 2000, 700, Layout::tn}, {8192, 96, 200, Layout::tn}};
  std::vector<std::vector<uint32_t>> kept;
  for (size_t i = 0; i < problems.size(); ++i) {
    SelectorOptions one = near;
    one.prior_mode = PriorMode::mean;
    one.prior_problems = {near.prior_problems[i]};
    const auto expected = Selector(model, one).prefiltered(problems[i], 8);
    EXPECT_EQ(sel.prefiltered(problems[i], 8), expected) << i;
    kept.push_back(expected);
  }
  EXPECT_NE(kept[0], kept[1]);  // the priors differ, so do the kept sets
  EXPECT_NE(kept[1], kept[2]);
}

TEST(SelectorCApi, SelectsThroughTheAbi) {
  cks_selector_handle h = nullptr;
  ASSERT_EQ(cks_selector_create(model_path().c_str(), &h), 0) << cks_last_error();
  cks_selection out[8];
  uint32_t n = 0;
  ASSERT_EQ(cks_selector_select(h, 2048, 1024, 4096, "tn", 8, out, &n), 0) << cks_last_error();
  EXPECT_EQ(n, 8u);
  const Ranking ref = Selector(model_path()).select(kProblem, 8);  // the C API's default options
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

// `--methods ...,prefilterN,...` (cks plan picks|sidebyside, cks analyze sidebyside): the
// deployed ranking with another prefilter size, ranked as deep as the deployed method.
TEST(SelectorMethods, PrefilterNAndEvidenceAreTheDeployedRankingWithOtherSettings) {
  const cli::SelectionMethods m(model_path(), "deployed,prefilter4096,exhaustive,static", {4, 8, 2});
  ASSERT_EQ(m.methods.size(), 4u);
  EXPECT_EQ(m.methods[1].name, "prefilter4096");
  EXPECT_EQ(m.methods[1].top, 4u) << "as deep as deployed";
  EXPECT_EQ(m.methods[1].selector->options().prefilter, 4096u);
  EXPECT_EQ(m.methods[0].selector->options().prefilter, test::own_orientation().prefilter);
  EXPECT_EQ(m.methods[2].selector->options().prefilter, 0u);
  const Problem p{96, 4096, 4096, Layout::tn};
  const Ranking wide = m.methods[1].selector->select(p, 4);
  SelectorOptions o;  // the methods' defaults (both orientations)
  o.prefilter = 4096;
  const Ranking same = Selector(model_path(), o).select(p, 4);
  ASSERT_EQ(wide.size(), same.size());
  for (size_t i = 0; i < wide.size(); ++i) EXPECT_TRUE(same_candidate(wide[i], same[i])) << i;
  const cli::SelectionMethods ev(model_path(), "deployed,evidence16:4", {4, 8, 2});
  EXPECT_EQ(ev.methods[1].name, "evidence16:4");
  EXPECT_EQ(ev.methods[1].top, 4u);
  EXPECT_EQ(ev.methods[1].selector->options().evidence_groups, 16u);
  EXPECT_EQ(ev.methods[1].selector->options().evidence_top, 4u);
  EXPECT_EQ(ev.methods[1].selector->options().prefilter, test::own_orientation().prefilter);
  for (const char* bad : {"deployed,prefilter0", "deployed,prefilter", "deployed,prefilterx", "prefilter12x",
                          "deployed,prefilter123456789", "evidence16", "evidence0:4", "evidence16:0", "evidence:4",
                          "evidence16:4x", "evidence1234567:4"}) {
    try {
      const cli::SelectionMethods b(model_path(), bad, {4, 8, 2});
      ADD_FAILURE() << bad << " was accepted";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("unknown method"), std::string::npos) << e.what();
    }
  }
  // both and its rule variants: both:gMARGIN, both:mMAX_M, both:lLAYOUT+LAYOUT, combined.
  const cli::SelectionMethods bo(model_path(), "deployed,both,both:g0.2:m256:ltn+nn", {4, 8, 2});
  ASSERT_EQ(bo.methods.size(), 3u);
  EXPECT_EQ(bo.methods[1].selector->options().orientations, Orientations::both);
  EXPECT_EQ(bo.methods[1].selector->options().swap_max_m, 0);  // "both": the unrestricted rule
  EXPECT_EQ(bo.methods[1].selector->options().swap_layouts, 0xFu);
  // deployed: the default rule chosen on training groups in lease 41 (M <= 256; tn, nn, tt).
  EXPECT_EQ(bo.methods[0].selector->options().swap_max_m, 256);
  EXPECT_EQ(bo.methods[0].selector->options().swap_layouts,
            (1u << int(Layout::tn)) | (1u << int(Layout::nn)) | (1u << int(Layout::tt)));
  EXPECT_FALSE(swap_eligible(SelectorOptions{}, Problem{64, 4096, 4096, Layout::nt}));
  EXPECT_FALSE(swap_eligible(SelectorOptions{}, Problem{264, 4096, 4096, Layout::tn}));
  EXPECT_TRUE(swap_eligible(SelectorOptions{}, Problem{256, 4096, 4096, Layout::tt}));
  // ... and, since lease 43, the tall problems in any layout: M > 4096 with N <= 512.
  EXPECT_EQ(bo.methods[0].selector->options().swap_tall_min_m, 4096);
  EXPECT_EQ(bo.methods[0].selector->options().swap_tall_max_n, 512);
  EXPECT_EQ(bo.methods[1].selector->options().swap_tall_min_m, 0);  // "both" covers them anyway
  EXPECT_TRUE(swap_eligible(SelectorOptions{}, Problem{8192, 512, 4096, Layout::nt}));
  EXPECT_TRUE(swap_eligible(SelectorOptions{}, Problem{4104, 64, 4096, Layout::tn}));
  EXPECT_FALSE(swap_eligible(SelectorOptions{}, Problem{4096, 64, 8192, Layout::tn}));
  EXPECT_FALSE(swap_eligible(SelectorOptions{}, Problem{8192, 520, 4096, Layout::tt}));
  // ... and, since session 38, M > 256 with N <= 512 and K <= 4096, any layout.
  EXPECT_EQ(bo.methods[0].selector->options().swap_tall_max_k, 4096);
  EXPECT_EQ(bo.methods[1].selector->options().swap_tall_max_k, 0);
  EXPECT_TRUE(swap_eligible(SelectorOptions{}, Problem{3072, 320, 3776, Layout::nt}));
  EXPECT_TRUE(swap_eligible(SelectorOptions{}, Problem{264, 512, 4096, Layout::tn}));
  EXPECT_FALSE(swap_eligible(SelectorOptions{}, Problem{3072, 320, 4104, Layout::tn}));
  EXPECT_FALSE(swap_eligible(SelectorOptions{}, Problem{3072, 520, 2048, Layout::tn}));
  EXPECT_FALSE(swap_eligible(SelectorOptions{}, Problem{64, 320, 2048, Layout::nt}));  // M <= 256: nt stays own
  SelectorOptions no_tall;
  no_tall.swap_tall_min_m = 0;
  no_tall.swap_tall_max_k = 0;
  EXPECT_FALSE(swap_eligible(no_tall, Problem{8192, 512, 4096, Layout::nt}));
  EXPECT_FALSE(swap_eligible(no_tall, Problem{3072, 320, 3776, Layout::nt}));
  const cli::SelectionMethods tall(model_path(), "both:m256:ltn+nn+tt:t4096x512:k4096,both:t8192x128,both:m256:k2048",
                                   {4, 8, 2});
  EXPECT_EQ(tall.methods[0].selector->options().swap_max_m, 256);
  EXPECT_EQ(tall.methods[0].selector->options().swap_tall_min_m, 4096);
  EXPECT_EQ(tall.methods[0].selector->options().swap_tall_max_n, 512);
  EXPECT_EQ(tall.methods[0].selector->options().swap_tall_max_k, 4096);
  EXPECT_EQ(tall.methods[0].selector->mode(), bo.methods[0].selector->mode()) << "the default rule, spelled out";
  EXPECT_EQ(tall.methods[1].selector->options().swap_tall_max_k, 0);
  EXPECT_EQ(tall.methods[2].selector->options().swap_tall_max_k, 2048);
  EXPECT_EQ(tall.methods[2].selector->options().swap_tall_min_m, 0);
  EXPECT_EQ(tall.methods[1].selector->options().swap_tall_min_m, 8192);
  EXPECT_EQ(tall.methods[1].selector->options().swap_tall_max_n, 128);
  const SelectorOptions& rule = bo.methods[2].selector->options();
  EXPECT_EQ(bo.methods[2].name, "both:g0.2:m256:ltn+nn");
  EXPECT_DOUBLE_EQ(rule.swap_margin, 0.2);
  EXPECT_EQ(rule.swap_max_m, 256);
  EXPECT_EQ(rule.swap_layouts, (1u << int(Layout::tn)) | (1u << int(Layout::nn)));
  for (const char* bad : {"both:", "both:x1", "both:g", "both:g-1", "both:gabc", "both:m12a", "both:lxy", "both:ltn+",
                          "bothm256", "both:m256:", "both:t4096", "both:tx512", "both:t4096x", "both:t4096x0",
                          "both:t40a6x512", "both:k", "both:k-1", "both:k4o96"}) {
    try {
      const cli::SelectionMethods b(model_path(), bad, {4, 8, 2});
      ADD_FAILURE() << bad << " was accepted";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("--methods"), std::string::npos) << e.what();
    }
  }
}

// Evidence: train_model records every training group's fastest candidates; the model file keeps
// them (and a file without them still loads); with evidence_groups the selector's prefilter keeps
// the leaders of the problem's nearest training groups whatever its key says.
TEST(SelectorEvidence, TheNearestGroupsLeadersJoinThePrefiltersCandidates) {
  test::ScratchDir dir;
  const Dataset d = test::synthetic_dataset(dir.file("syn.db"), 6, 0, 60, 11);
  TrainOptions o;
  o.kind = ModelKind::ridge;
  auto model = train_model(d, o);
  const Evidence ev = model->info().evidence;  // a copy: the model's is cleared below
  ASSERT_EQ(ev.groups.size(), d.groups.size());
  EXPECT_EQ(ev.top, kEvidenceTop);
  const DataGroup& g0 = d.groups[0];
  ASSERT_EQ(ev.groups[0].leaders.size(), std::min(kEvidenceTop, g0.size()));
  double best = 0;
  size_t best_row = g0.begin;
  for (size_t r = g0.begin; r < g0.end; ++r)
    if (d.tflops[r] > best) best = d.tflops[r], best_row = r;
  const Catalogue& cat = Catalogue::get(g0.problem.layout);
  EXPECT_EQ(ev.groups[0].leaders[0].first, cat.kernels()[d.candidates[best_row].kernel].id()) << "fastest first";
  EXPECT_EQ(ev.groups[0].leaders[0].second, d.candidates[best_row].knobs.canonical());

  // The file keeps it; a file without it loads with none.
  model->save(dir.file("m.json"));
  auto loaded = Model::load(dir.file("m.json"));
  EXPECT_EQ(loaded->info().evidence.to_json(), ev.to_json());
  model->info().evidence = {};
  model->save(dir.file("bare.json"));
  EXPECT_TRUE(Model::load(dir.file("bare.json"))->info().evidence.empty());
  std::ifstream bare(dir.file("bare.json"));
  const std::string bare_text((std::istreambuf_iterator<char>(bare)), std::istreambuf_iterator<char>());
  EXPECT_EQ(bare_text.find("\"evidence\""), std::string::npos);

  // A tiny prefilter keeps the nearest group's (the problem's own shape) first leaders.
  SelectorOptions so = test::own_orientation();
  so.prefilter = 16;
  so.cascade_terms = 0;
  so.evidence_groups = 1;
  so.evidence_top = 3;
  const std::shared_ptr<const Model> shared = std::move(loaded);
  const Selector with(shared, so);
  EXPECT_NE(with.mode().find("evidence 3 of the 1 nearest"), std::string::npos) << with.mode();
  const std::vector<uint32_t> kept = with.prefiltered(g0.problem, 4);
  EXPECT_TRUE(std::is_sorted(kept.begin(), kept.end()));
  EXPECT_EQ(std::adjacent_find(kept.begin(), kept.end()), kept.end()) << "no duplicates";
  const auto leader = cat.find_candidate(ev.groups[0].leaders[0].first, ev.groups[0].leaders[0].second);
  ASSERT_TRUE(leader);
  size_t leader_index = cat.candidates().size();
  for (size_t i = 0; i < cat.candidates().size(); ++i)
    if (cat.candidates()[i].kernel == leader->kernel && cat.candidates()[i].knobs == leader->knobs) leader_index = i;
  EXPECT_TRUE(std::binary_search(kept.begin(), kept.end(), static_cast<uint32_t>(leader_index)));
  so.evidence_groups = 0;
  const std::vector<uint32_t> plain = Selector(shared, so).prefiltered(g0.problem, 4);
  EXPECT_EQ(plain.size(), 16u);
  EXPECT_LE(kept.size(), plain.size() + 3);
  EXPECT_TRUE(std::includes(kept.begin(), kept.end(), plain.begin(), plain.end()));
  // A model without evidence adds nothing, and says so.
  so.evidence_groups = 4;
  const Selector none(std::shared_ptr<const Model>(Model::load(dir.file("bare.json"))), so);
  EXPECT_EQ(none.prefiltered(g0.problem, 4), plain);
  EXPECT_NE(none.mode().find("no evidence"), std::string::npos) << none.mode();
}

// The sliced-K rule (SlicedRule, on by default since session 42): a few-tile, long-K problem's ranking is led by
// the ping-pong 64x64x128 kernel's sliced-K variant at the largest slice count that fits, with the
// next smaller count after the ranking's first entry; elsewhere the ranking is unchanged.
TEST(SelectorSliced, TheRuleLeadsFewTileLongKProblemsWithTheSlicedKernel) {
  SlicedRule r;
  EXPECT_EQ(r.max_tiles, 8);
  r.max_tiles = 0;
  EXPECT_TRUE(sliced_rule_slices(r, Problem{32, 512, 15232, Layout::tn}).empty()) << "0: off";
  r.max_tiles = 8;
  // 1 x 8 tiles; K = 15232 = 8 x 1904: 16 slices make 128 CTAs (> 96), 12 and 6 do not divide
  // K / 8, so 8 (64 CTAs, K / 8 = 1904) first and 4 next.
  EXPECT_EQ(sliced_rule_slices(r, Problem{32, 512, 15232, Layout::tn}), (std::vector<int>{8, 4}));
  r.alternates = 0;
  EXPECT_EQ(sliced_rule_slices(r, Problem{32, 512, 15232, Layout::tn}), (std::vector<int>{8}));
  r.alternates = 1;
  EXPECT_EQ(sliced_rule_slices(r, Problem{32, 64, 16384, Layout::nt}), (std::vector<int>{16, 8}));  // one tile
  EXPECT_TRUE(sliced_rule_slices(r, Problem{32, 1536, 24576, Layout::nt}).empty());  // 24 tiles
  EXPECT_TRUE(sliced_rule_slices(r, Problem{32, 576, 8192, Layout::nn}).empty());    // 9 tiles
  EXPECT_TRUE(sliced_rule_slices(r, Problem{160, 128, 8192, Layout::nn}).empty());   // M > 128
  EXPECT_TRUE(sliced_rule_slices(r, Problem{32, 512, 4096, Layout::nn}).empty());    // K < 6144
  // 2 x 4 tiles, K = 6144: 12 slices are 96 CTAs with K / 12 = 512.
  EXPECT_EQ(sliced_rule_slices(r, Problem{128, 256, 6144, Layout::tt}), (std::vector<int>{12, 8}));
  EXPECT_TRUE(sliced_rule_slices(r, Problem{32, 512, 8200, Layout::nn}).empty());    // 8200 = 8 x 1025: no S divides
  r.max_m = 0;
  EXPECT_EQ(sliced_rule_slices(r, Problem{160, 128, 8192, Layout::nn}), (std::vector<int>{16, 8}));  // 6 tiles

  SelectorOptions o = test::own_orientation();
  o.sliced.max_tiles = 0;
  const Selector plain = Selector::static_score(default_hw(), o);
  o.sliced.max_tiles = 8;
  const Selector sel = Selector::static_score(default_hw(), o);
  EXPECT_NE(sel.mode().find("sliced-K rule (<= 8 64x64 tiles, M <= 128, K >= 6144"), std::string::npos) << sel.mode();
  const Problem p{32, 512, 15232, Layout::tn};
  const Ranking got = sel.select(p, 8), base = plain.select(p, 8);
  ASSERT_EQ(got.size(), 8u);
  const KernelDesc sk = sliced_rule_kernel(Layout::tn);
  EXPECT_EQ(sk.canonical(), "sm90_bf16_tn_64x64x128_1x1x1_s0_pingpong+no_smem+persistent+slicek");
  for (size_t i : {0u, 2u}) {
    EXPECT_TRUE(got[i].sliced) << i;
    EXPECT_FALSE(got[i].swapped) << i;
    EXPECT_EQ(got[i].kernel_id, sk.id());
    EXPECT_EQ(got[i].canonical, sk.canonical());
    EXPECT_EQ(selected_kernel(got[i], Layout::tn), sk);
    EXPECT_EQ(find_kernel(Layout::tn, got[i].kernel_id), std::optional<KernelDesc>(sk));
  }
  EXPECT_EQ(got[0].knobs_text, "r=m,s=1,d=sk,k=8");
  EXPECT_EQ(got[2].knobs_text, "r=m,s=1,d=sk,k=4");
  EXPECT_TRUE(same_candidate(got[1], base[0]));
  for (size_t i = 3; i < 8; ++i) {
    EXPECT_FALSE(got[i].sliced) << i;
    EXPECT_TRUE(same_candidate(got[i], base[i - 2])) << i;
  }
  EXPECT_TRUE(same_candidate(sel.select(p, 1)[0], got[0]));  // the head does not depend on depth
  // Outside the region: the ranking without the rule.
  const Problem wide{32, 1536, 24576, Layout::nt};
  const Ranking w = sel.select(wide, 8), wb = plain.select(wide, 8);
  ASSERT_EQ(w.size(), wb.size());
  for (size_t i = 0; i < w.size(); ++i) {
    EXPECT_FALSE(w[i].sliced);
    EXPECT_TRUE(same_candidate(w[i], wb[i])) << i;
  }
  // The method spec of plans and side-by-side reads.
  const cli::SelectionMethods m(model_path(), "deployed,sliced:t0,sliced:t8:m0:k4096:c132:s256:a0", {4, 8, 2});
  ASSERT_EQ(m.methods.size(), 3u);
  EXPECT_EQ(m.methods[0].selector->options().sliced.max_tiles, 8);
  EXPECT_EQ(m.methods[1].selector->options().sliced.max_tiles, 0);
  EXPECT_EQ(m.methods[1].selector->options().sliced.max_m, 128);
  const SlicedRule& v = m.methods[2].selector->options().sliced;
  EXPECT_EQ(v.max_tiles, 8);
  EXPECT_EQ(v.max_m, 0);
  EXPECT_EQ(v.min_k, 4096);
  EXPECT_EQ(v.max_ctas, 132);
  EXPECT_EQ(v.min_slice_k, 256);
  EXPECT_EQ(v.alternates, 0u);
  for (const char* bad : {"sliced:", "sliced:x4", "sliced:t", "sliced:c1", "sliced:k0", "sliced:t-1", "sliced8"}) {
    try {
      const cli::SelectionMethods b(model_path(), bad, {4, 8, 2});
      ADD_FAILURE() << bad << " was accepted";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("sliced"), std::string::npos) << e.what();
    }
  }
}
