// `cks analyze sidebyside` on a real registry: repetitions of one base group, a row flagged for
// its clock, the median over clean repetitions, the regret of the real pick (the static
// selector's first pick, recomputed), the noise floor and cuBLAS; a pick outside the compared
// set is not covered.
#include <gtest/gtest.h>

#include "cks/analysis.hpp"
#include "cks/selector.hpp"
#include "registry/registry_test_util.hpp"
#include "shapes/cli_run.hpp"

using namespace cks;
using namespace cks::test;

namespace {

constexpr long M = 1024, N = 2048, K = 4096;

const Selector& static_selector() {
  static const Selector s = Selector::static_score(default_hw());
  return s;
}

// Repetition `rep` (1-based) of the base group, key "<base><prefix><rep>" of set sbs.
GroupInfo repetition_group(Registry& reg, const std::string& prefix, int rep) {
  const std::string base = group_key(M, N, K, Layout::tn);
  GroupInfo g = test_group(M, N, K, "sbs");
  g.key = base + prefix + std::to_string(rep);
  g.tags_json = R"({"base_key":")" + base + R"(","base_set":"eval","rep":)" + std::to_string(rep) + "}";
  reg.upsert_group(g);
  return g;
}

void add_row(std::vector<MeasurementRow>& rows, const std::string& run, const std::string& key, const std::string& kernel,
             const std::string& knobs, double tflops, double clock) {
  MeasurementRow m = test_row(run, key, kernel, "ok", 10.0);
  m.knobs = knobs;
  m.tflops = tflops;
  m.sm_clock_mhz = clock;
  rows.push_back(m);
}

// Candidates A (the static first pick), B (its 20th) and C (its 6th), three repetitions; B's
// third repetition ran 100 MHz below the others.
std::string write_registry(const ScratchDir& dir, bool with_pick = true, const std::string& round_prefix = "~r") {
  const std::string path = dir.file("sbs.db");
  Registry reg(path);
  const std::string run = reg.begin_run(test_run());
  const Ranking r = static_selector().select(Problem{M, N, K, Layout::tn}, 20);
  struct Cell {
    const Selection* s;
    double tflops, clock;
  };
  const double a[3] = {100, 102, 98}, b[3] = {110, 108, 150}, c[3] = {90, 91, 89}, cub[3] = {95, 96, 94};
  for (int rep = 0; rep < 3; ++rep) {
    const GroupInfo g = repetition_group(reg, round_prefix, rep + 1);
    std::vector<MeasurementRow> rows;
    auto add = [&](const std::string& kernel, const std::string& knobs, double tflops, double clock) {
      add_row(rows, run, g.key, kernel, knobs, tflops, clock);
    };
    if (with_pick) add(r[0].kernel_id, r[0].knobs_text, a[rep], rep == 1 ? 1975 : 1980);
    add(r[19].kernel_id, r[19].knobs_text, b[rep], rep == 1 ? 1985 : rep == 2 ? 1880 : 1980);
    add(r[5].kernel_id, r[5].knobs_text, c[rep], 1980);
    add("cublas", "", cub[rep], 1980);
    reg.insert_measurements(rows);
  }
  return path;
}

// Repetition `rep` of round `round` (key "<base>~s<round>r<rep>") of the base group, listed.
GroupInfo round_group(Registry& reg, int round, int rep) {
  const std::string base = group_key(M, N, K, Layout::tn);
  GroupInfo g = test_group(M, N, K, "sbs");
  g.key = base + "~s" + std::to_string(round) + "r" + std::to_string(rep);
  g.tags_json = R"({"base_key":")" + base + R"(","base_set":"eval","round":)" + std::to_string(round) + "}";
  reg.upsert_group(g);
  return g;
}

}  // namespace

TEST(SideBySide, RegretOfTheRealPickFromCleanRepetitionsWithTheNoiseFloor) {
  ScratchDir dir;
  const Registry reg(write_registry(dir), RegistryOptions{.create = false});
  const SideBySideStudy s = sidebyside_study(reg, {{"static", &static_selector(), 16}}, SideBySideOptions{});
  ASSERT_EQ(s.groups.size(), 1u);
  const SideBySideGroup& g = s.groups[0];
  EXPECT_EQ(g.base_key, group_key(M, N, K, Layout::tn));
  EXPECT_EQ(g.base_set, "eval");
  EXPECT_EQ(g.reps, 3u);
  EXPECT_EQ(g.rows, 12u);
  EXPECT_EQ(g.flagged, 1u) << "B's third repetition, 100 MHz off";
  EXPECT_EQ(s.flagged_rows, 1u);
  EXPECT_DOUBLE_EQ(g.clock_ref_mhz, 1980);
  EXPECT_EQ(g.compared, 3u);
  EXPECT_DOUBLE_EQ(g.best_tflops, 109) << "B: median of 110 and 108 (its flagged 150 left out)";
  EXPECT_DOUBLE_EQ(g.cublas_tflops, 95);
  EXPECT_NEAR(g.floor, 0.5 * (1 - 108.0 / 110), 1e-12) << "B against itself: (0 + (1 - 108/110)) / 2";
  // At the round's precision (medians of 2 repetitions, by bootstrap): exactly 0.00342 (the 9 pairs of
  // medians 108, 109, 110 weighted 1/4, 1/2, 1/4), here from 400 resampled pairs; below the per-rep floor.
  EXPECT_GT(g.floor_median, 0.0015);
  EXPECT_LT(g.floor_median, 0.0055);
  EXPECT_LT(g.floor_median, g.floor);
  EXPECT_DOUBLE_EQ(sidebyside_study(reg, {{"static", &static_selector(), 16}}, SideBySideOptions{}).groups[0].floor_median,
                   g.floor_median)
      << "seeded by the group: the same study reads the same";
  const GroupOutcome& o = s.outcomes[0][0];
  ASSERT_TRUE(o.covered);
  EXPECT_NEAR(o.regret, 1 - 100.0 / 109, 1e-12) << "the static pick A at its median 100";
  EXPECT_NEAR(o.vs_cublas, 100.0 / 95, 1e-12);

  const Table t = sidebyside_group_table(s);
  EXPECT_EQ(t.size(), 1u);

  SideBySideOptions loose;
  loose.clock_tolerance_mhz = 200;
  EXPECT_DOUBLE_EQ(sidebyside_study(reg, {{"static", &static_selector(), 16}}, loose).groups[0].best_tflops, 110);
}

// Under the power limit a kernel runs at its own clock in every repetition: that is the kernel,
// not a drift of the GPU's state. By default (clock reference "candidate") its rows count; with
// the group's median as the reference they are all flagged, and the kernel is compared on every
// repetition as unsteady (or dropped, as before session 14, with drop_unsteady).
TEST(SideBySide, AKernelsOwnSteadyClockIsNotADrift) {
  ScratchDir dir;
  const std::string path = dir.file("power.db");
  {
    Registry reg(path);
    const std::string run = reg.begin_run(test_run());
    const Ranking r = static_selector().select(Problem{M, N, K, Layout::tn}, 4);
    for (int rep = 0; rep < 3; ++rep) {
      const GroupInfo g = repetition_group(reg, "~r", rep + 1);
      std::vector<MeasurementRow> rows;
      auto add = [&](const std::string& kernel, const std::string& knobs, double tflops, double clock) {
        add_row(rows, run, g.key, kernel, knobs, tflops, clock);
      };
      add(r[0].kernel_id, r[0].knobs_text, 100, 1980);
      add(r[1].kernel_id, r[1].knobs_text, 120, 1700 + rep * 5);  // power-hungry: always ~1,700 MHz
      add(r[2].kernel_id, r[2].knobs_text, 90, 1980);
      add("cublas", "", 95, 1980);
      reg.insert_measurements(rows);
    }
  }
  const Registry reg(path, RegistryOptions{.create = false});
  const SideBySideStudy s = sidebyside_study(reg, {{"static", &static_selector(), 16}}, SideBySideOptions{});
  ASSERT_EQ(s.groups.size(), 1u);
  EXPECT_EQ(s.groups[0].flagged, 0u);
  EXPECT_EQ(s.groups[0].compared, 3u);
  EXPECT_DOUBLE_EQ(s.groups[0].best_tflops, 120);
  EXPECT_NEAR(s.outcomes[0][0].regret, 1 - 100.0 / 120, 1e-12);

  SideBySideOptions group_ref;
  group_ref.clock_reference = "group";
  const SideBySideStudy g = sidebyside_study(reg, {{"static", &static_selector(), 16}}, group_ref);
  EXPECT_EQ(g.groups[0].flagged, 0u) << "every repetition flagged: unsteady, compared on all of them";
  EXPECT_EQ(g.groups[0].unsteady, 1u);
  EXPECT_DOUBLE_EQ(g.groups[0].best_tflops, 120);
  group_ref.drop_unsteady = true;
  const SideBySideStudy d = sidebyside_study(reg, {{"static", &static_selector(), 16}}, group_ref);
  EXPECT_EQ(d.groups[0].flagged, 3u);
  EXPECT_EQ(d.groups[0].dropped, 1u);
  EXPECT_DOUBLE_EQ(d.groups[0].best_tflops, 100);

  SideBySideOptions bad;
  bad.clock_reference = "kernel";
  EXPECT_THROW(sidebyside_study(reg, {{"static", &static_selector(), 16}}, bad), Error);
}

TEST(SideBySide, EachGroupsLatestRoundIsReadUnlessOneIsChosen) {
  ScratchDir dir;
  const std::string path = write_registry(dir);  // round 1: "~r<i>"
  {
    // Round 2 ("~s2r<i>") of the same group, without the pick: it is what the study reads.
    Registry reg(path);
    const std::string run = reg.begin_run(test_run());
    const Ranking r = static_selector().select(Problem{M, N, K, Layout::tn}, 20);
    for (int rep = 1; rep <= 2; ++rep) {
      const GroupInfo g = round_group(reg, 2, rep);
      MeasurementRow m = test_row(run, g.key, r[5].kernel_id, "ok", 10.0);
      m.knobs = r[5].knobs_text;
      m.tflops = 200;
      m.sm_clock_mhz = 1980;
      reg.insert_measurements({m});
    }
    reg.end_run(run);
  }
  const Registry reg(path, RegistryOptions{.create = false});
  const std::vector<PickMethod> methods{{"static", &static_selector(), 16}};
  const SideBySideStudy latest = sidebyside_study(reg, methods, SideBySideOptions{});
  ASSERT_EQ(latest.groups.size(), 1u);
  EXPECT_EQ(latest.groups[0].reps, 2u);
  EXPECT_DOUBLE_EQ(latest.groups[0].best_tflops, 200);
  EXPECT_FALSE(latest.outcomes[0][0].covered) << "round 2 did not measure the pick";
  SideBySideOptions first;
  first.round = 1;
  const SideBySideStudy one = sidebyside_study(reg, methods, first);
  EXPECT_EQ(one.groups[0].reps, 3u);
  EXPECT_TRUE(one.outcomes[0][0].covered);
  SideBySideOptions pooled;
  pooled.round = 0;
  EXPECT_EQ(sidebyside_study(reg, methods, pooled).groups[0].reps, 5u);
  SideBySideOptions absent;
  absent.round = 7;
  EXPECT_THROW(sidebyside_study(reg, methods, absent), Error);
  SideBySideOptions eval_only;
  eval_only.base_set = "eval";
  EXPECT_EQ(sidebyside_study(reg, methods, eval_only).groups.size(), 1u);
  SideBySideOptions family;
  family.base_set = "family";
  EXPECT_THROW(sidebyside_study(reg, methods, family), Error) << "no group of base set family";
}

// A lease cut by its time budget leaves its round's groups planned but unmeasured: the latest
// round with a measurement is read (lease 34 read 121 of 176 groups before this).
TEST(SideBySide, AnUnmeasuredLaterRoundIsNotTheLatest) {
  ScratchDir dir;
  const std::string path = write_registry(dir);  // round 1: "~r<i>", measured
  {
    Registry reg(path);
    for (int rep = 1; rep <= 2; ++rep) round_group(reg, 3, rep);
  }
  const Registry reg(path, RegistryOptions{.create = false});
  const std::vector<PickMethod> methods{{"static", &static_selector(), 16}};
  const SideBySideStudy latest = sidebyside_study(reg, methods, SideBySideOptions{});
  ASSERT_EQ(latest.groups.size(), 1u);
  EXPECT_EQ(latest.groups[0].reps, 3u) << "round 1 is the latest measured";
  EXPECT_TRUE(latest.outcomes[0][0].covered);
}

TEST(SideBySide, APickThatWasNotComparedIsNotCovered) {
  ScratchDir dir;
  const Registry reg(write_registry(dir, /*with_pick=*/false), RegistryOptions{.create = false});
  const SideBySideStudy s = sidebyside_study(reg, {{"static", &static_selector(), 16}}, SideBySideOptions{});
  EXPECT_FALSE(s.outcomes[0][0].covered);
}

TEST(SideBySide, CliSummaryWithTheNoiseFloorRowAndErrors) {
  ScratchDir dir;
  const std::string path = write_registry(dir);
  const CliResult r = run_cks("analyze sidebyside --registry " + path + " --methods static --format csv");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("static,all,1,1,"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("noise floor,all,1,1,"), std::string::npos) << r.out;
  EXPECT_NE(r.err.find("1 flagged"), std::string::npos) << r.err;
  const CliResult bad = run_cks("analyze sidebyside --registry " + path + " --methods psychic");
  EXPECT_NE(bad.exit_code, 0);
  EXPECT_NE(bad.err.find("unknown method 'psychic'"), std::string::npos) << bad.err;
}
