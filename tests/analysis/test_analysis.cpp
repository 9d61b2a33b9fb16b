// The analysis studies (cks/analysis.hpp) on small synthetic registries written through the
// Registry API: rank statistics, the feature study, the sampling study and `cks analyze`.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <functional>
#include <numeric>
#include <random>
#include <set>

#include <nlohmann/json.hpp>

#include "cks/analysis.hpp"
#include "cks/features.hpp"
#include "cks/registry.hpp"
#include "cks/sampling.hpp"
#include "registry/registry_test_util.hpp"
#include "shapes/cli_run.hpp"

using namespace cks;

namespace {

struct GroupSpec {
  long m, n, k;
  std::string set = "eval";
  size_t candidates = 200;  // distinct catalogue candidates measured
  size_t cut = 0;           // of which the first `cut` are written as cut rows
};

// Throughput (TFLOP/s) of a candidate from its feature row.
using TflopsOf = std::function<double(const float* row)>;

// Writes distinct, uniformly drawn tn catalogue candidates per group: status ok with the
// throughput `tflops_of` gives, except the first `cut`, written as cut rows at `cut_fraction` of
// the group's best. Deterministic for a seed.
void write_registry(const std::string& path, const std::vector<GroupSpec>& groups, uint64_t seed,
                    const TflopsOf& tflops_of, double cut_fraction = 0.1) {
  Registry reg(path);
  const std::string run = reg.begin_run(test::test_run());
  const Catalogue& cat = Catalogue::get(Layout::tn);
  std::mt19937_64 rng(seed);
  for (const GroupSpec& gs : groups) {
    reg.upsert_group(test::test_group(gs.m, gs.n, gs.k, gs.set));
    std::set<size_t> chosen;
    std::uniform_int_distribution<size_t> pick(0, cat.candidates().size() - 1);
    while (chosen.size() < gs.candidates) chosen.insert(pick(rng));
    std::vector<Candidate> picked;
    for (size_t i : chosen) picked.push_back(cat.candidates()[i]);
    std::shuffle(picked.begin(), picked.end(), rng);
    FeatureMatrix x;
    FeatureComputer(cat.kernels(), default_hw()).compute(Problem{gs.m, gs.n, gs.k, Layout::tn}, picked, x);
    const std::string key = group_key(gs.m, gs.n, gs.k, Layout::tn);
    const double flops = 2.0 * gs.m * gs.n * gs.k;
    double best = 0;
    for (size_t i = gs.cut; i < picked.size(); ++i) best = std::max(best, tflops_of(x.row(i)));
    std::vector<MeasurementRow> rows;
    for (size_t i = 0; i < picked.size(); ++i) {
      const bool cut = i < gs.cut;
      MeasurementRow mr = test::test_row(run, key, cat.kernels()[picked[i].kernel].id(), cut ? "cut" : "ok");
      mr.knobs = picked[i].knobs.canonical();
      mr.tflops = cut ? cut_fraction * best : tflops_of(x.row(i));
      mr.mean_us = flops / (mr.tflops * 1e12) * 1e6;
      mr.std_us = mr.mean_us * 0.002;
      rows.push_back(mr);
    }
    MeasurementRow cublas = test::test_row(run, key, "cublas", "ok");
    cublas.tflops = best;
    rows.push_back(cublas);
    reg.insert_measurements(std::move(rows));
  }
  reg.end_run(run);
}

float feature(const float* row, std::string_view name) { return row[FeatureSchema::get().index(name)]; }

// Throughput strictly increasing in T_K alone (so in every group strictly decreasing in n_K when
// K is a multiple of every T_K).
double tk_monotone(const float* row) { return 10.0 + feature(row, "tile_k") / 8.0; }

// A throughput with many distinct values and a sparse fast tail.
double varied(const float* row) {
  const double eff = feature(row, "est_efficiency");
  return 5.0 + 600.0 * std::pow(std::clamp(eff, 0.0, 1.0), 3.0) + 0.001 * feature(row, "stage_bytes") / 1024.0;
}

AnalysisData load(const std::string& path, GroupSelection sel, bool include_cut = true) {
  Registry reg(path);
  AnalysisLoadOptions o;
  o.groups = sel;
  o.include_cut = include_cut;
  return load_analysis_data(reg, default_hw(), o);
}

const FeatureCorrelation& find_row(const std::vector<FeatureCorrelation>& rows, std::string_view feature,
                                   std::string_view partition = "all", std::string_view value = "all") {
  for (const auto& r : rows)
    if (r.feature == feature && r.partition == partition && r.value == value) return r;
  throw std::runtime_error("no row " + std::string(feature) + " " + std::string(partition) + "=" + std::string(value));
}

// Shapes with K a multiple of 256 (every T_K divides it), over several size/geometry classes.
std::vector<GroupSpec> monotone_groups() {
  return {{64, 4096, 4096, "eval"},  {4096, 4096, 4096, "eval"}, {1024, 1024, 2048, "train"},
          {8192, 512, 1024, "train"}, {256, 8192, 512, "eval"}};
}

}  // namespace

TEST(AnalysisStats, AverageRanksShareTies) {
  EXPECT_EQ(average_ranks(std::vector<double>{10, 20, 20, 30}), (std::vector<double>{1, 2.5, 2.5, 4}));
  EXPECT_EQ(average_ranks(std::vector<double>{3, 1, 2}), (std::vector<double>{3, 1, 2}));
  EXPECT_EQ(average_ranks(std::vector<double>{5, 5, 5}), (std::vector<double>{2, 2, 2}));
}

TEST(AnalysisStats, SpearmanMatchesTheTextbookValues) {
  const std::vector<double> x{1, 2, 3, 4, 5};
  EXPECT_DOUBLE_EQ(spearman(x, std::vector<double>{1, 8, 27, 64, 125}), 1.0);  // monotone, not linear
  EXPECT_DOUBLE_EQ(spearman(x, std::vector<double>{5, 4, 3, 2, 1}), -1.0);
  // 1 - 6 sum d^2 / (n (n^2 - 1)) = 1 - 6 * 4 / 120 without ties.
  EXPECT_NEAR(spearman(x, std::vector<double>{2, 1, 4, 3, 5}), 0.8, 1e-12);
  EXPECT_TRUE(std::isnan(spearman(x, std::vector<double>{7, 7, 7, 7, 7})));  // constant: not computable
  EXPECT_TRUE(std::isnan(spearman(std::vector<double>{1}, std::vector<double>{2})));
  const double nan = std::nan("");
  EXPECT_DOUBLE_EQ(spearman(std::vector<double>{1, nan, 3, 4}, std::vector<double>{10, 0, 30, 40}), 1.0);
}

TEST(AnalysisData, ReadsTheUniverseWithCutRowsInCatalogueOrder) {
  test::ScratchDir dir;
  const std::string db = dir.file("a.db");
  write_registry(db, {{512, 512, 512, "eval", 120, 20}, {1024, 256, 512, "train", 80, 0}}, 3, varied);
  const AnalysisData eval = load(db, GroupSelection::eval);
  ASSERT_EQ(eval.groups.size(), 1u);
  const AnalysisGroup& g = eval.groups[0];
  EXPECT_EQ(g.key, "512x512x512_tn");
  EXPECT_EQ(g.set, "eval");
  EXPECT_EQ(g.size(), 120u);
  EXPECT_EQ(g.cut_count(), 20u);
  EXPECT_EQ(g.tags.size, tags_for(512, 512, 512, default_hw()).size);
  double best_ok = 0;
  for (size_t i = 0; i < g.size(); ++i)
    if (!g.cut[i]) best_ok = std::max(best_ok, g.tflops[i]);
  EXPECT_DOUBLE_EQ(g.oracle, best_ok);
  // Catalogue order: kernel index, then the kernel's knob order.
  for (size_t i = 1; i < g.size(); ++i) EXPECT_LE(g.candidates[i - 1].kernel, g.candidates[i].kernel);

  EXPECT_EQ(load(db, GroupSelection::eval, false).groups[0].size(), 100u);
  EXPECT_EQ(load(db, GroupSelection::train).groups.size(), 1u);
  EXPECT_EQ(load(db, GroupSelection::all).groups.size(), 2u);
  EXPECT_EQ(parse_group_selection("train"), GroupSelection::train);
  EXPECT_THROW(parse_group_selection("holdout"), Error);
}

TEST(AnalysisFeatures, AFeatureMonotoneInThroughputHasRhoOneWithinEveryGroup) {
  test::ScratchDir dir;
  const std::string db = dir.file("mono.db");
  write_registry(db, monotone_groups(), 11, tk_monotone);
  const AnalysisData data = load(db, GroupSelection::all);
  ASSERT_EQ(data.groups.size(), 5u);
  const auto rows = feature_study(data, default_hw());

  const FeatureCorrelation& tk = find_row(rows, "tile_k");
  EXPECT_EQ(tk.groups, 5u);
  EXPECT_EQ(tk.groups_computable, 5u);
  EXPECT_DOUBLE_EQ(tk.rho_within_mean, 1.0);
  EXPECT_DOUBLE_EQ(tk.rho_within_median, 1.0);
  EXPECT_DOUBLE_EQ(tk.share_positive, 1.0);
  EXPECT_DOUBLE_EQ(tk.rho_global_raw, 1.0);  // the same function of T_K in every group
  EXPECT_EQ(tk.rows, 5u * 200u);

  // n_K = K / T_K strictly decreases in T_K: rho -1 in every group, never positive.
  const FeatureCorrelation& nk = find_row(rows, "n_k_iters");
  EXPECT_DOUBLE_EQ(nk.rho_within_mean, -1.0);
  EXPECT_DOUBLE_EQ(nk.share_positive, 0.0);

  // Constant over every candidate: never computable, globally or within a group.
  const FeatureCorrelation& sm = find_row(rows, "hw_sm_count");
  EXPECT_EQ(sm.groups_computable, 0u);
  EXPECT_TRUE(std::isnan(sm.rho_within_mean));
  EXPECT_TRUE(std::isnan(sm.share_positive));
  EXPECT_TRUE(std::isnan(sm.rho_global));
  // A problem dimension: constant within each group, but it varies over the pooled groups.
  const FeatureCorrelation& k = find_row(rows, "k");
  EXPECT_EQ(k.groups_computable, 0u);
  EXPECT_FALSE(std::isnan(k.rho_global_raw));

  // The static score is studied too.
  EXPECT_EQ(find_row(rows, kStaticScoreFeature).feature_group, "sampling");
}

TEST(AnalysisFeatures, PartitionsSplitTheGroupsByTheirTags) {
  test::ScratchDir dir;
  const std::string db = dir.file("part.db");
  write_registry(db, monotone_groups(), 5, tk_monotone);
  const AnalysisData data = load(db, GroupSelection::all);
  const auto rows = feature_study(data, default_hw());
  for (std::string_view partition : {"size", "geometry", "regime"}) {
    size_t groups = 0;
    for (const auto& r : rows)
      if (r.feature == "tile_k" && r.partition == partition) {
        groups += r.groups;
        size_t expected = 0;
        for (const auto& g : data.groups) expected += partition_value(partition, g.tags) == r.value;
        EXPECT_EQ(r.groups, expected) << partition << "=" << r.value;
        EXPECT_GT(r.groups, 0u) << "absent partition values are not listed";
        EXPECT_DOUBLE_EQ(r.rho_within_mean, 1.0);
      }
    EXPECT_EQ(groups, data.groups.size()) << partition;
  }
  // Every numeric schema column plus the static score, once per partition value.
  size_t numeric = 0;
  for (const auto& f : FeatureSchema::get().features()) numeric += f.kind == FeatureKind::numeric;
  size_t values = 0;
  for (const auto& r : rows) values += r.feature == "tile_k";
  EXPECT_EQ(rows.size(), (numeric + 1) * values);
  const Table t = feature_table(rows);
  EXPECT_EQ(t.columns().front(), "feature");
  EXPECT_EQ(t.size(), rows.size());
}

TEST(AnalysisSampling, TheWholePoolHasZeroRegretAndTheTailIsCountedExactly) {
  test::ScratchDir dir;
  const std::string db = dir.file("s.db");
  write_registry(db, {{4096, 4096, 4096, "eval", 300, 30}, {64, 2048, 1024, "eval", 250, 40}}, 17, varied, 0.995);
  const AnalysisData data = load(db, GroupSelection::eval);
  SamplingStudyOptions o;
  o.budgets = {16, 100000};  // the second is capped at each pool's size
  o.reps = 5;
  o.alphas = {0.75};
  o.alpha_budgets = {16};
  const SamplingStudy s = sampling_study(data, default_hw(), o);
  ASSERT_EQ(s.tails.size(), 2u);
  ASSERT_EQ(s.points.size(), 3u * 2u + 1u);
  for (const SamplingPoint& p : s.points)
    if (p.budget == 100000) {
      EXPECT_DOUBLE_EQ(p.regret_mean, 0.0) << to_string(p.policy);
      EXPECT_DOUBLE_EQ(p.regret_max, 0.0);
      EXPECT_DOUBLE_EQ(p.budget_fraction, 1.0);
      for (double w : p.p_within) EXPECT_DOUBLE_EQ(w, 1.0);
    } else {
      EXPECT_GT(p.regret_mean, 0.0);  // 16 of ~300 candidates rarely hold the single best
    }
  for (size_t gi = 0; gi < 2; ++gi) {
    const AnalysisGroup& g = data.groups[gi];
    const GroupTail& t = s.tails[gi];
    EXPECT_EQ(t.candidates, g.size());
    EXPECT_EQ(t.cut, g.cut_count());
    for (size_t e = 0; e < o.eps.size(); ++e) {
      size_t within = 0;
      for (size_t i = 0; i < g.size(); ++i) within += !g.cut[i] && g.tflops[i] >= (1 - o.eps[e]) * g.oracle;
      EXPECT_DOUBLE_EQ(t.within[e], static_cast<double>(within) / g.size());
    }
    // Cut rows were written at 99.5% of the best (within every eps by throughput), yet are
    // never counted: the count above leaves them out and matches.
    for (size_t i = 0; i < g.size(); ++i) EXPECT_TRUE(!g.cut[i] || g.tflops[i] >= 0.99 * g.oracle);
    EXPECT_GE(t.oracle_static_rank, 1);
    EXPECT_LE(t.first_static_rank[2], t.first_static_rank[0]);  // within 10% is reached no later than 1%
  }
}

TEST(AnalysisSampling, TopBIsDeterministicAndEqualsTheStaticRanking) {
  test::ScratchDir dir;
  const std::string db = dir.file("top.db");
  write_registry(db, {{2048, 2048, 2048, "eval", 300, 0}, {128, 4096, 2048, "eval", 300, 0}}, 23, varied);
  const AnalysisData data = load(db, GroupSelection::eval);
  SamplingStudyOptions o;
  o.budgets = {4, 32};
  o.reps = 3;
  o.alphas = {1.0};
  o.alpha_budgets = {32};
  const SamplingStudy a = sampling_study(data, default_hw(), o), b = sampling_study(data, default_hw(), o);
  for (const int budget : o.budgets) {
    // Expected regret: 1 - the best y among the first B of rank_candidates over the universe.
    double expected = 0;
    for (const AnalysisGroup& g : data.groups) {
      const auto ranked = rank_candidates(GemmShape{g.problem.m, g.problem.n, g.problem.k},
                                          Catalogue::get(Layout::tn).kernels(), g.candidates, default_hw());
      double best = 0;
      for (int r = 0; r < budget; ++r) best = std::max(best, g.tflops[ranked[r].pool_index] / g.oracle);
      expected += (1 - best) / data.groups.size();
    }
    for (const SamplingStudy* s : {&a, &b}) {
      const auto top = std::find_if(s->points.begin(), s->points.end(), [&](const SamplingPoint& p) {
        return p.study == "budget" && p.policy == Policy::top && p.budget == budget;
      });
      ASSERT_NE(top, s->points.end());
      EXPECT_EQ(top->reps, 1);
      EXPECT_NEAR(top->regret_mean, expected, 1e-12) << "B = " << budget;
    }
  }
  // alpha = 1 takes the whole budget from the top: the top-B sample.
  const auto& alpha1 = a.points.back();
  ASSERT_EQ(alpha1.study, "alpha");
  const auto top32 = std::find_if(a.points.begin(), a.points.end(), [](const SamplingPoint& p) {
    return p.study == "budget" && p.policy == Policy::top && p.budget == 32;
  });
  ASSERT_NE(top32, a.points.end());
  EXPECT_DOUBLE_EQ(alpha1.regret_mean, top32->regret_mean);
}

TEST(AnalysisSampling, UniformDrawsAreSeededAndNestedAcrossBudgets) {
  test::ScratchDir dir;
  const std::string db = dir.file("u.db");
  write_registry(db, {{1024, 1024, 1024, "eval", 300, 10}, {512, 4096, 256, "eval", 300, 10}}, 29, varied);
  const AnalysisData data = load(db, GroupSelection::eval);
  SamplingStudyOptions o;
  o.budgets = {8, 32, 128};
  o.reps = 20;
  o.alphas = {0.0};
  o.alpha_budgets = {32};
  const SamplingStudy a = sampling_study(data, default_hw(), o), b = sampling_study(data, default_hw(), o);
  std::vector<double> uniform;
  for (size_t i = 0; i < a.points.size(); ++i) {
    EXPECT_EQ(a.points[i].regret_mean, b.points[i].regret_mean);  // same seeds, same samples
    if (a.points[i].policy == Policy::uniform) uniform.push_back(a.points[i].regret_mean);
  }
  ASSERT_EQ(uniform.size(), 3u);
  // One seed draws nested samples (a prefix of one Fisher-Yates shuffle): regret never grows with B.
  EXPECT_GE(uniform[0], uniform[1]);
  EXPECT_GE(uniform[1], uniform[2]);
  // alpha = 0 explores the whole budget: exactly the uniform samples of the same seeds.
  EXPECT_DOUBLE_EQ(a.points.back().regret_mean, uniform[1]);

  o.seed = 1000;
  const SamplingStudy c = sampling_study(data, default_hw(), o);
  EXPECT_NE(c.points[0].regret_mean, a.points[0].regret_mean);
}

TEST(AnalysisSampling, OptionsAreValidated) {
  SamplingStudyOptions o;
  EXPECT_NO_THROW(validate(o));
  o.reps = 0;
  EXPECT_THROW(validate(o), Error);
  o = {};
  o.budgets = {};
  EXPECT_THROW(validate(o), Error);
  o = {};
  o.eps = {1.5};
  EXPECT_THROW(validate(o), Error);
  o = {};
  o.alphas = {-0.1};
  EXPECT_THROW(validate(o), Error);
  o = {};
  o.alpha_budgets = {200, 0};
  EXPECT_THROW(validate(o), Error);
  EXPECT_EQ(eps_label(0.01), "1pct");
  EXPECT_EQ(eps_label(0.1), "10pct");
}

namespace {

// A registry for the CLI tests, built once.
const std::string& cli_registry() {
  static test::ScratchDir dir;
  static const std::string path = [] {
    write_registry(dir.file("cli.db"), monotone_groups(), 31, tk_monotone);
    return dir.file("cli.db");
  }();
  return path;
}

void expect_error(const std::string& args, const std::string& mentions) {
  const test::CliResult r = test::run_cks(args);
  EXPECT_NE(r.exit_code, 0) << args;
  EXPECT_EQ(r.err.rfind("cks: error: ", 0), 0u) << args << " -> " << r.err;
  EXPECT_EQ(test::count_lines(r.err), 1u) << r.err;
  EXPECT_NE(r.err.find(mentions), std::string::npos) << args << " -> " << r.err;
  EXPECT_TRUE(r.out.empty()) << args;
}

}  // namespace

TEST(AnalysisCli, FeaturesListsEveryFeatureAndPartition) {
  const test::CliResult r = test::run_cks("analyze features --registry " + cli_registry() + " --groups all --format json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  bool found = false;
  for (const auto& row : j)
    if (row["feature"] == "tile_k" && row["partition"] == "all") {
      found = true;
      EXPECT_EQ(row["rho_within_mean"], 1.0);
      EXPECT_EQ(row["groups_computable"], 5);
    }
  EXPECT_TRUE(found);
  EXPECT_NE(r.err.find("cks analyze features: 5 all groups"), std::string::npos) << r.err;

  const test::CliResult md = test::run_cks("analyze features --registry " + cli_registry() + " --format md");
  ASSERT_EQ(md.exit_code, 0) << md.err;
  EXPECT_EQ(md.out.rfind("| feature |", 0), 0u);
}

TEST(AnalysisCli, SamplingWritesBothTablesToTheOutputDirectory) {
  test::ScratchDir out;
  const test::CliResult r = test::run_cks("analyze sampling --registry " + cli_registry() +
                                          " --reps 2 --budgets 4,1000 --alpha-budgets 8 --out-dir " + out.path());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("sampling_tail.csv"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("sampling_curves.csv"), std::string::npos) << r.out;
  std::ifstream in(out.file("sampling_curves.csv"));
  std::string header;
  std::getline(in, header);
  EXPECT_EQ(header.rfind("study,policy,alpha,budget,budget_fraction,reps,groups,regret_mean", 0), 0u) << header;

  const test::CliResult tail =
      test::run_cks("analyze sampling --registry " + cli_registry() + " --reps 1 --budgets 4 --table tail --format json");
  ASSERT_EQ(tail.exit_code, 0) << tail.err;
  const auto j = nlohmann::json::parse(tail.out);
  ASSERT_EQ(j.size(), 3u + 4u);  // the three eval groups, then mean, median, min, max
  EXPECT_EQ(j[3]["group"], "mean");
}

TEST(AnalysisCli, BadInputIsOneClearErrorLine) {
  const std::string reg = " --registry " + cli_registry();
  expect_error("analyze features" + reg + " --groups holdout", "unknown --groups 'holdout'");
  expect_error("analyze features" + reg + " --format xml", "xml");
  expect_error("analyze features --registry /nonexistent.db", "no registry");
  expect_error("analyze sampling" + reg + " --reps 0", "--reps must be at least 1");
  expect_error("analyze sampling" + reg + " --budgets 0,8", "--budgets must be positive");
  expect_error("analyze sampling" + reg + " --alphas 0.5,2", "--alphas must lie in [0, 1]");
  expect_error("analyze sampling" + reg + " --table both", "unknown --table 'both'");
  expect_error("analyze sampling" + reg + " --out-dir /dev/null/x", "--out-dir");
  expect_error("analyze features" + reg + " --layouts nt", "no groups of set 'eval' of layout nt");
  expect_error("analyze features" + reg + " --layouts xy", "unknown layout 'xy'");
  expect_error("analyze counters" + reg, "no hardware-counter profiles");
}
