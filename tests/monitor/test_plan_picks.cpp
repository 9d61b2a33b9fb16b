// `cks plan picks` and `cks plan sidebyside` (issue 16) on a real registry, with the static-score
// selector as the selection method (the model's code path is the same Selector); the plan-file
// features they need (variant keys, whole groups, priority tiers, union of groups whose budgets
// differ); a whole group measured in one stretch by the monitor; priority tiers in the compile
// batches.
#include <gtest/gtest.h>

#include <fstream>
#include <set>

#include "cks/plan.hpp"
#include "cks/registry.hpp"
#include "cks/selector.hpp"
#include "common/test_util.hpp"
#include "monitor/collect_fixture.hpp"
#include "monitor/compile_source.hpp"
#include "registry/registry_test_util.hpp"
#include "shapes/cli_run.hpp"

using namespace cks;
using namespace cks::test;

namespace {

constexpr long M = 1024, N = 2048, K = 4096;

// The static selector's ranking of the TN problem.
Ranking static_ranking(size_t top) {
  static const Selector s = Selector::static_score(default_hw(), test::own_orientation());
  return s.select(Problem{M, N, K, Layout::tn}, top);
}

// An eval group whose measured candidates are the static top-1 (fast) and the 20th (faster),
// and a training group with one measurement.
std::string write_registry(const ScratchDir& dir) {
  const std::string path = dir.file("r.db");
  Registry reg(path);
  const std::string run = reg.begin_run(test_run());
  reg.upsert_group(test_group(M, N, K, "eval"));
  reg.upsert_group(test_group(512, 512, 512, "train"));
  const Ranking r = static_ranking(20);
  const std::string key = group_key(M, N, K, Layout::tn);
  MeasurementRow a = test_row(run, key, r[0].kernel_id, "ok", 10.0), b = test_row(run, key, r[19].kernel_id, "ok", 9.0);
  a.knobs = r[0].knobs_text;
  a.tflops = 100;
  b.knobs = r[19].knobs_text;
  b.tflops = 120;
  reg.insert_measurements({a, b, test_row(run, key, "cublas", "ok", 9.5)});
  reg.insert_measurements({test_row(run, group_key(512, 512, 512, Layout::tn), r[0].kernel_id, "ok", 5.0)});
  return path;
}

const Selector& static_selector() {
  static const Selector s = Selector::static_score(default_hw(), test::own_orientation());
  return s;
}

std::vector<GroupInfo> eval_groups(const Registry& reg) {
  std::vector<GroupInfo> out;
  for (auto& g : reg.groups())
    if (g.set == "eval") out.push_back(g);
  return out;
}

}  // namespace

TEST(PlanPicks, TheMethodsPicksLessWhatWasMeasuredFirstPicksAndTheirKnobVariantsFirst) {
  ScratchDir dir;
  const std::string path = write_registry(dir);
  const Registry reg(path, RegistryOptions{.create = false});
  const std::vector<GroupInfo> groups = eval_groups(reg);
  PicksOptions o;
  o.knob_top = 2;
  const Plan p = make_picks_plan(groups, &reg, {{"deployed", &static_selector(), 6}}, o);
  ASSERT_EQ(p.groups.size(), 1u);
  const PlanGroup& g = p.groups[0];
  EXPECT_EQ(g.group.set, "eval") << "the group keeps its registry identity";
  EXPECT_EQ(g.group.seed, 7u);
  const Ranking r = static_ranking(6);
  const std::set<CandidateRef> listed(g.candidates.begin(), g.candidates.end());
  EXPECT_FALSE(listed.count({r[0].kernel_id, r[0].knobs_text})) << "measured already";
  for (size_t i = 1; i < 6; ++i) EXPECT_TRUE(listed.count({r[i].kernel_id, r[i].knobs_text})) << i;
  EXPECT_EQ(g.candidates[0], (CandidateRef{r[1].kernel_id, r[1].knobs_text})) << "the second pick leads";
  // Every knob variant of the first two picks' kernels comes before the picks 3..6.
  const Catalogue& cat = Catalogue::get(Layout::tn);
  std::set<CandidateRef> variants;
  for (const Candidate& c : cat.candidates())
    if (c.kernel == r[0].kernel || c.kernel == r[1].kernel)
      variants.insert({cat.kernels()[c.kernel].id(), c.knobs.canonical()});
  variants.erase({r[0].kernel_id, r[0].knobs_text});
  size_t pos3 = 0;
  while (g.candidates[pos3] != CandidateRef{r[2].kernel_id, r[2].knobs_text}) ++pos3;
  for (size_t i = 0; i < pos3; ++i) EXPECT_TRUE(variants.count(g.candidates[i]) || i == 0) << i;
  for (const auto& v : variants) EXPECT_TRUE(listed.count(v));

  o.include_measured = true;
  const Plan all = make_picks_plan(groups, &reg, {{"deployed", &static_selector(), 6}}, o);
  EXPECT_EQ(all.groups[0].candidates[0], (CandidateRef{r[0].kernel_id, r[0].knobs_text}));
  EXPECT_THROW(make_picks_plan(groups, &reg, {}, o), Error);
}

TEST(PlanSideBySide, RepetitionsOfThePicksAndTheMeasuredLeadersRotatedAndWhole) {
  ScratchDir dir;
  const std::string path = write_registry(dir);
  const Registry reg(path, RegistryOptions{.create = false});
  SideBySidePlanOptions o;
  o.reps = 3;
  o.pick_top = 2;
  o.measured_top = 2;
  o.priority = 1;
  const Plan p = make_sidebyside_plan(eval_groups(reg), &reg, {{"deployed", &static_selector(), 16}}, o);
  ASSERT_EQ(p.groups.size(), 3u);
  const Ranking r = static_ranking(20);
  // Compared: picks 1 and 2, and the measured leaders (the 20th pick at 120, then pick 1).
  const std::set<CandidateRef> want{{r[0].kernel_id, r[0].knobs_text}, {r[1].kernel_id, r[1].knobs_text},
                                    {r[19].kernel_id, r[19].knobs_text}};
  for (size_t i = 0; i < 3; ++i) {
    const PlanGroup& g = p.groups[i];
    EXPECT_EQ(g.group.key, group_key(M, N, K, Layout::tn) + "~r" + std::to_string(i + 1));
    EXPECT_EQ(sidebyside_base_key(g.group.key), group_key(M, N, K, Layout::tn));
    EXPECT_EQ(g.group.set, "sbs");
    EXPECT_EQ(g.group.seed, 7u) << "the base group's operand data";
    EXPECT_TRUE(g.whole);
    EXPECT_EQ(g.priority, 1);
    EXPECT_EQ(std::set<CandidateRef>(g.candidates.begin(), g.candidates.end()), want);
    EXPECT_EQ(g.candidates[0], p.groups[0].candidates[i]) << "rotated by one third per repetition";
  }
  // Round trip through the file: variant keys, whole and priority survive.
  write_plan(p, dir.file("sbs.jsonl"));
  const Plan back = read_plan(dir.file("sbs.jsonl"));
  ASSERT_EQ(back.groups.size(), 3u);
  EXPECT_EQ(back.groups[2].group.key, p.groups[2].group.key);
  EXPECT_TRUE(back.groups[2].whole);
  EXPECT_EQ(back.groups[2].priority, 1);
  EXPECT_NE(back.groups[2].group.tags_json.find("\"base_key\""), std::string::npos);
  o.reps = 1;
  EXPECT_THROW(make_sidebyside_plan(eval_groups(reg), &reg, {{"deployed", &static_selector(), 16}}, o), Error);

  // A later round: groups of their own, "<key>~s<R>r<i>", tagged with the round.
  o.reps = 2;
  o.round = 3;
  const Plan later = make_sidebyside_plan(eval_groups(reg), &reg, {{"deployed", &static_selector(), 16}}, o);
  ASSERT_EQ(later.groups.size(), 2u);
  EXPECT_EQ(later.groups[1].group.key, group_key(M, N, K, Layout::tn) + "~s3r2");
  EXPECT_EQ(sidebyside_base_key(later.groups[1].group.key), group_key(M, N, K, Layout::tn));
  EXPECT_EQ(sidebyside_round(later.groups[1].group.key), 3u);
  EXPECT_NE(later.groups[1].group.tags_json.find("\"round\":3"), std::string::npos);
  write_plan(later, dir.file("later.jsonl"));  // the variant key is valid in a plan file
  EXPECT_EQ(read_plan(dir.file("later.jsonl")).groups[0].group.key, group_key(M, N, K, Layout::tn) + "~s3r1");
  o.round = 0;
  EXPECT_THROW(make_sidebyside_plan(eval_groups(reg), &reg, {{"deployed", &static_selector(), 16}}, o), Error);
}

TEST(PlanSideBySide, RoundOfARepetitionKey) {
  EXPECT_EQ(sidebyside_round("64x64x64_tn~r2"), 1u);
  EXPECT_EQ(sidebyside_round("64x64x64_tn~s2r5"), 2u);
  EXPECT_EQ(sidebyside_round("64x64x64_tn~s12r1"), 12u);
  EXPECT_EQ(sidebyside_round("64x64x64_tn"), 0u);
  EXPECT_EQ(sidebyside_round("64x64x64_tn~sr1"), 0u);
  EXPECT_EQ(sidebyside_round("64x64x64_tn~s2"), 0u);
  EXPECT_EQ(sidebyside_round("64x64x64_tn~x1"), 0u);
  EXPECT_EQ(sidebyside_rep_key("k", 1, 3), "k~r3");
  EXPECT_EQ(sidebyside_rep_key("k", 2, 3), "k~s2r3");
}

TEST(PlanFile, VariantKeysMustExtendTheShapesKey) {
  ScratchDir dir;
  auto one = [&](const std::string& key) {
    std::ofstream(dir.file("p.jsonl")) << "{\"plan_version\":1}\n{\"group\":{\"key\":\"" << key
                                       << "\",\"m\":64,\"n\":64,\"k\":64,\"layout\":\"tn\"},\"candidates\":[]}\n";
    return read_plan(dir.file("p.jsonl"));
  };
  EXPECT_EQ(one("64x64x64_tn~r2").groups[0].group.key, "64x64x64_tn~r2");
  for (const char* bad : {"64x64x64_tn~", "64x64x64_tn~R2", "64x64x128_tn~r2", "64x64x64_tn-r2", "64x64x64_tn~r2~r3"})
    EXPECT_THROW(one(bad), Error) << bad;
}

TEST(PlanMerge, UnionJoinsGroupsWhoseBudgetsDifferButNotTheirOperandSeeds) {
  ScratchDir dir;
  auto plan = [&](const std::string& name, long budget, uint64_t seed, int kernel) {
    Plan p;
    p.name = name;
    PlanGroup g;
    g.group = test_group(64, 64, 64, "train");
    g.group.key = group_key(64, 64, 64, Layout::tn);
    g.group.budget = budget;
    g.group.seed = seed;
    g.candidates = {{Catalogue::get(Layout::tn).kernels()[kernel].id(), RuntimeKnobs{}.canonical()}};
    p.groups.push_back(g);
    write_plan(p, dir.file(name));
    return dir.file(name);
  };
  const Plan u = merge_plans({plan("a.jsonl", 2000, 7, 0), plan("b.jsonl", 16, 7, 1)}, dir.path(), "u", true);
  ASSERT_EQ(u.groups.size(), 1u);
  EXPECT_EQ(u.groups[0].candidates.size(), 2u);
  EXPECT_EQ(u.groups[0].group.budget, 2000) << "the first plan's budget is kept";
  EXPECT_THROW(merge_plans({plan("a.jsonl", 2000, 7, 0), plan("c.jsonl", 2000, 8, 1)}, dir.path(), "u", true), Error);
}

TEST(CompileBatches, PriorityTiersAreNeverMixedAndGoFirst) {
  std::vector<monitor::KernelToBuild> kernels;
  std::vector<size_t> rank;
  for (int i = 0; i < 6; ++i) {
    kernels.push_back({fake_kernel(i), std::nullopt});
    rank.push_back(i % 2 == 0 ? size_t(i) : (size_t{1} << 32) | 0);  // odd kernels: tier 1, position 0
  }
  const auto batches = monitor::make_batches(kernels, rank, 4);
  ASSERT_EQ(batches.size(), 2u);
  std::set<std::string> tier0{fake_kernel(0), fake_kernel(2), fake_kernel(4)};
  for (const auto& k : batches[0]) EXPECT_TRUE(tier0.count(k.id)) << "tier 0 first, alone";
  for (const auto& k : batches[1]) EXPECT_FALSE(tier0.count(k.id));
}

// A whole group is set up only once all its kernels are compiled, so its rows are one stretch:
// with one worker and slow compiles, the plain group next to it would otherwise be measured in
// between.
TEST(MonitorWhole, AWholeGroupIsMeasuredInOneStretch) {
  TempDir dir;
  Plan plan;
  plan.name = "whole";
  auto add = [&](long m, int first, int count, bool whole) {
    PlanGroup pg;
    pg.group = test_group(m, 64, 64, "sbs");
    pg.group.key = group_key(m, 64, 64, Layout::tn) + (whole ? "~r1" : "");  // a side-by-side repetition
    for (int j = 0; j < count; ++j) pg.candidates.emplace_back(fake_kernel(first + j), kDefaultKnobs);
    pg.whole = whole;
    plan.groups.push_back(pg);
  };
  add(64, 0, 3, true);
  add(128, 3, 8, false);
  write_plan(plan, dir / "plan.jsonl");
  CollectOptions o = fake_options(dir / "plan.jsonl", dir / "r.db");
  o.fake_compile_s = 0.15;
  o.kernels_per_tu = 1;
  collect(o);
  const auto rows = read_rows(dir / "r.db");
  const std::string w = group_key(64, 64, 64, Layout::tn) + "~r1";
  EXPECT_EQ(query_text(dir / "r.db", "SELECT count(*) FROM groups WHERE key = '" + w + "' AND set_name = 'sbs'"), "1")
      << "the registry keeps the variant key the rows use";
  std::vector<size_t> at;
  for (size_t i = 0; i < rows.size(); ++i)
    if (rows[i].group == w) at.push_back(i);
  ASSERT_EQ(at.size(), 4u) << "3 kernels and cuBLAS";
  EXPECT_EQ(at.back() - at.front(), 3u) << "contiguous";
}

TEST(PlanActive, UnmeasuredFirstPicksAndTheLeastEvidencedExplorationUnderAKernelBudget) {
  ScratchDir dir;
  const std::string path = write_registry(dir);
  const Registry reg(path, RegistryOptions{.create = false});
  std::vector<GroupInfo> train;
  for (auto& g : reg.groups())
    if (g.set == "train") train.push_back(g);
  ASSERT_EQ(train.size(), 1u);
  const Ranking r = static_selector().select(Problem{512, 512, 512, Layout::tn}, 64);
  ActiveOptions o;
  o.top = 2;
  o.explore = 1;
  o.explore_depth = 64;
  o.priority = 1;
  const Plan p = make_active_plan(train, reg, {{"deployed", &static_selector(), 2}}, static_selector(), o);
  ASSERT_EQ(p.groups.size(), 1u);
  const auto& c = p.groups[0].candidates;
  EXPECT_EQ(p.groups[0].priority, 1);
  // The first pick (static top-1 of the eval shape) is measured in this group only if it is this
  // problem's first pick too; whatever was measured is left out, and the exploration pick is the
  // first candidate of the depth-64 ranking whose kernel has no ok row anywhere.
  std::set<CandidateRef> measured;
  for (const auto& f : reg.final_items(train[0].key, 2)) measured.insert(f);
  for (const auto& x : c) EXPECT_FALSE(measured.count(x));
  std::set<std::string> evidenced;
  for (const auto& g : reg.groups())
    for (const auto& f : reg.final_items(g.key, 2)) evidenced.insert(f.first);
  CandidateRef explore;
  for (size_t i = 0; i < r.size(); ++i) {
    const CandidateRef ref{r[i].kernel_id, r[i].knobs_text};
    if ((i < 2 && !measured.count(ref)) || measured.count(ref)) continue;
    if (!evidenced.count(ref.first)) {
      explore = ref;
      break;
    }
  }
  EXPECT_EQ(c.back(), explore);
  o.max_kernels = 1;
  const Plan one = make_active_plan(train, reg, {{"deployed", &static_selector(), 2}}, static_selector(), o);
  std::set<std::string> kernels;
  for (const auto& x : one.groups[0].candidates) kernels.insert(x.first);
  EXPECT_EQ(kernels.size(), 1u) << "the kernel budget";
}

TEST(PlanFill, CompiledKernelsAtDefaultKnobsWhereAGroupLacksThem) {
  ScratchDir dir;
  const std::string path = write_registry(dir);
  const Registry reg(path, RegistryOptions{.create = false});
  const Ranking r = static_ranking(20);
  std::map<Layout, std::set<std::string>> kernels{{Layout::tn, {r[0].kernel_id, r[3].kernel_id}}};
  FillOptions o;
  const Plan p = make_fill_plan(reg.groups(), reg, kernels, o);
  // Eval group: r[0] measured, r[3] not; train group: r[0] measured, r[3] not.
  ASSERT_EQ(p.groups.size(), 2u);
  const Catalogue& cat = Catalogue::get(Layout::tn);
  for (const auto& g : p.groups) {
    ASSERT_EQ(g.candidates.size(), 1u) << g.group.key;
    EXPECT_EQ(g.candidates[0].first, r[3].kernel_id);
    EXPECT_EQ(g.candidates[0].second, knob_settings(cat.kernels()[r[3].kernel]).front().canonical());
    EXPECT_EQ(g.priority, 2);
  }
}

TEST(PlanPicks, CliGroupsFromAPlanFileNewGroupsOfAnySet) {
  // `cks plan make --set family` lists groups no registry holds; `plan picks --groups` and `plan
  // fill --groups` plan them from the registry's measured state (here: nothing of theirs).
  ScratchDir dir;
  const std::string reg = write_registry(dir);
  const std::string groups = dir.file("family_groups.jsonl");
  const CliResult make = run_cks("plan make --set family --layouts tn --pick 3 --seed 0 --policy top --budget 1 "
                                 "--group-set family --out " + groups);
  ASSERT_EQ(make.exit_code, 0) << make.err;
  const std::string picks = dir.file("picks.jsonl");
  const CliResult p = run_cks("plan picks --registry " + reg + " --groups " + groups + " --set family --methods static "
                              "--static-top 2 --top 2 --knob-top 0 --out " + picks);
  ASSERT_EQ(p.exit_code, 0) << p.err;
  const Plan plan = read_plan(picks);
  ASSERT_EQ(plan.groups.size(), 3u);
  for (const auto& g : plan.groups) {
    EXPECT_EQ(g.group.set, "family");
    EXPECT_EQ(g.candidates.size(), 2u) << g.group.key;
  }
  const std::string fill = dir.file("fill.jsonl");
  const CliResult f = run_cks("plan fill --registry " + reg + " --groups " + groups + " --set family --from " + picks +
                              " --out " + fill);
  ASSERT_EQ(f.exit_code, 0) << f.err;
  EXPECT_EQ(read_plan(fill).groups.size(), 3u);
  // Errors: a missing plan, and a set the plan's groups are not of.
  const CliResult missing = run_cks("plan picks --registry " + reg + " --groups " + dir.file("none.jsonl") +
                                    " --set family --methods static --out " + dir.file("x.jsonl"));
  EXPECT_NE(missing.exit_code, 0);
  EXPECT_NE(missing.err.find("none.jsonl"), std::string::npos) << missing.err;
  const CliResult other = run_cks("plan picks --registry " + reg + " --groups " + groups +
                                  " --set eval --methods static --out " + dir.file("x.jsonl"));
  EXPECT_NE(other.exit_code, 0);
  EXPECT_NE(other.err.find("no group of set 'eval'"), std::string::npos) << other.err;
}

TEST(PlanPicks, CliRunNormalizeTakesOnOffOrOffset) {
  const CliResult bad = run_cks("train --run-normalize maybe --out /tmp/never.json");
  EXPECT_NE(bad.exit_code, 0);
  EXPECT_NE(bad.err.find("on, off or offset"), std::string::npos) << bad.err;
}

// The `both` method (Orientations::both): `--only-differing` keeps the base groups where its first
// pick is not the deployed one's (M = 136: a swapped kernel leads; 1024 x 2048: the same first
// pick), and `plan picks` led by it gives its swapped picks their own knob settings.
TEST(PlanSideBySide, OnlyDifferingKeepsTheGroupsWhereSwappedKernelsLead) {
  ScratchDir dir;
  const std::string path = write_registry(dir);
  {
    Registry reg(path);
    reg.upsert_group(test_group(136, 14336, 5120, "eval"));
  }
  const Registry reg(path, RegistryOptions{.create = false});
  SelectorOptions bo = test::own_orientation();
  bo.orientations = Orientations::both;
  const Selector both = Selector::static_score(default_hw(), bo);
  SideBySidePlanOptions o;
  o.reps = 2;
  o.pick_top = 2;
  o.other_top = 2;
  o.measured_top = 0;
  o.only_differing = true;
  const Plan p = make_sidebyside_plan(eval_groups(reg), &reg, {{"deployed", &static_selector(), 16}, {"both", &both, 16}}, o);
  ASSERT_EQ(p.groups.size(), 2u);  // the 136 group's two repetitions only
  EXPECT_EQ(sidebyside_base_key(p.groups[0].group.key), group_key(136, 14336, 5120, Layout::tn));
  EXPECT_NE(p.header_json.find("\"base_groups_same_first_pick_skipped\":1"), std::string::npos) << p.header_json;
  size_t swapped = 0;
  for (const auto& [id, knobs] : p.groups[0].candidates) {
    const auto desc = find_kernel(Layout::tn, id);
    ASSERT_TRUE(desc.has_value()) << id;
    swapped += desc->swapped;
  }
  // deployed's first two (own), both's first two: a swapped kernel, then deployed's first.
  EXPECT_EQ(p.groups[0].candidates.size(), 3u);
  EXPECT_EQ(swapped, 1u);
  o.only_differing = false;
  EXPECT_EQ(make_sidebyside_plan(eval_groups(reg), &reg, {{"deployed", &static_selector(), 16}, {"both", &both, 16}}, o)
                .groups.size(),
            4u);

  PicksOptions po;
  po.knob_top = 1;
  const Plan picks = make_picks_plan({test_group(136, 14336, 5120, "eval")}, nullptr, {{"both", &both, 4}}, po);
  ASSERT_EQ(picks.groups.size(), 1u);
  const std::string first = picks.groups[0].candidates[0].first;
  const auto twin = find_kernel(Layout::tn, first);
  ASSERT_TRUE(twin && twin->swapped);
  std::set<std::string> knobs;
  for (const auto& [id, k] : picks.groups[0].candidates)
    if (id == first) knobs.insert(k);
  std::set<std::string> want;
  for (const auto& k : knob_settings(*twin)) want.insert(k.canonical());
  EXPECT_EQ(knobs, want);
}
