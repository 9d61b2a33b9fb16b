// The evaluation of the real pick (issue 16): what the selector returns over the whole catalogue,
// scored where it was measured, with its coverage; and the static-score baseline ranking exactly
// as `cks select --fallback static` does (ties by catalogue position).
#include <gtest/gtest.h>

#include <algorithm>
#include <random>

#include "cks/models.hpp"
#include "cks/registry.hpp"
#include "cks/selector.hpp"
#include "common/test_util.hpp"

using namespace cks;

namespace {

const Selector& static_selector() {
  static const Selector s = Selector::static_score(default_hw(), test::own_orientation());
  return s;
}

Candidate candidate_of(const Selection& s) { return Candidate{s.kernel, s.knobs}; }

// Appends a group of the given (candidate, TFLOP/s) rows.
void add_group(Dataset& d, const Problem& p, const std::vector<std::pair<Candidate, double>>& rows, double cublas) {
  DataGroup g;
  g.key = group_key(p.m, p.n, p.k, p.layout);
  g.set = "eval";
  g.problem = p;
  g.begin = d.tflops.size();
  for (const auto& [c, t] : rows) {
    d.candidates.push_back(c);
    d.tflops.push_back(t);
  }
  g.end = d.tflops.size();
  g.cublas_tflops = cublas;
  d.groups.push_back(g);
}

}  // namespace

TEST(RealPicks, ScoredWhereMeasuredWithCoverage) {
  const Problem p1{1024, 2048, 4096, Layout::tn}, p2{256, 8192, 1024, Layout::tn};
  const Ranking r1 = static_selector().select(p1, 20), r2 = static_selector().select(p2, 20);
  Dataset d;
  d.hw_preset = default_hw().preset;
  // Group 1: the first pick (90), the third (100), and a candidate no method picked (120).
  add_group(d, p1, {{candidate_of(r1[2]), 100}, {candidate_of(r1[19]), 120}, {candidate_of(r1[0]), 90}}, 80);
  // Group 2: the second pick only: the real first pick was never measured.
  add_group(d, p2, {{candidate_of(r2[1]), 50}, {candidate_of(r2[15]), 60}}, 40);
  const MethodOutcomes m = real_pick_outcomes("static real pick", static_selector(), d);
  ASSERT_EQ(m.groups.size(), 2u);
  ASSERT_TRUE(m.groups[0].covered);
  EXPECT_NEAR(m.groups[0].regret, 1 - 90.0 / 120, 1e-12);
  EXPECT_NEAR(m.groups[0].topk_regret[2], 1 - 100.0 / 120, 1e-12) << "top-4: the best measured of the first four";
  EXPECT_NEAR(m.groups[0].vs_cublas, 90.0 / 80, 1e-12);
  EXPECT_EQ(m.groups[0].pick, 2) << "row offset of the first pick";
  EXPECT_FALSE(m.groups[1].covered) << "its first pick has no measurement";
  EXPECT_NE(m.note.find("top-1 in 1/2"), std::string::npos) << m.note;
  EXPECT_NE(m.note.find("top-4 in 0/2"), std::string::npos) << m.note;
}

TEST(StaticBaseline, RanksLikeCksSelectFallbackStatic) {
  // Groups holding a selector's top 16 in a shuffled row order: the baseline's pick and order
  // are the selector's (ties included), for several problems.
  std::mt19937 rng(3);
  Dataset d;
  d.hw_preset = default_hw().preset;
  std::vector<Ranking> want;
  for (const Problem& p : {Problem{4096, 4096, 4096, Layout::tn}, Problem{64, 4096, 4096, Layout::tn},
                           Problem{8192, 128, 1024, Layout::nt}, Problem{512, 512, 16384, Layout::nn}}) {
    const Ranking r = static_selector().select(p, 16);
    std::vector<std::pair<Candidate, double>> rows;
    for (const Selection& s : r) rows.push_back({candidate_of(s), 100.0 - rows.size()});
    std::shuffle(rows.begin(), rows.end(), rng);
    add_group(d, p, rows, 50);
    want.push_back(r);
  }
  const MethodOutcomes m = static_score_baseline(d);
  for (size_t g = 0; g < d.groups.size(); ++g) {
    ASSERT_TRUE(m.groups[g].covered);
    const Candidate& picked = d.candidates[d.groups[g].begin + static_cast<size_t>(m.groups[g].pick)];
    EXPECT_EQ(picked.kernel, want[g][0].kernel) << g;
    EXPECT_EQ(picked.knobs, want[g][0].knobs) << g;
    EXPECT_DOUBLE_EQ(m.groups[g].regret, 0.0) << "the selector's first pick is the group's fastest here";
  }
}

TEST(StaticBaseline, SkipsMeasuredKnobVariantsTheCatalogueDoesNotEnumerate) {
  // Lease 37's exploration measured knob variants outside the catalogue's knob set; the baseline
  // threw on them ("... is not in the catalogue"). Such a row still sets the group's best, but
  // cks select --fallback static can never return it, so the baseline never ranks it.
  const Problem p{4096, 4096, 4096, Layout::tn};
  const Ranking r = static_selector().select(p, 4);
  Candidate odd = candidate_of(r[0]);
  odd.knobs = RuntimeKnobs{RasterOrder::along_m, 8, Decomposition::split_k, 8};
  ASSERT_FALSE(find_catalogue_position(p.layout, odd)) << "the variant must be outside the catalogue for this test";
  EXPECT_THROW(catalogue_position(p.layout, odd), Error);
  Dataset d;
  d.hw_preset = default_hw().preset;
  add_group(d, p, {{odd, 120}, {candidate_of(r[1]), 90}, {candidate_of(r[0]), 100}}, 80);
  const MethodOutcomes m = static_score_baseline(d);
  ASSERT_TRUE(m.groups[0].covered);
  EXPECT_EQ(m.groups[0].pick, 2) << "the selector's first pick, not the unrankable variant";
  EXPECT_NEAR(m.groups[0].regret, 1 - 100.0 / 120, 1e-12) << "the variant still counts for the group's best";
}
