// Plan files: round trips, line-numbered validation errors, exhaustive groups, `plan make`.
#include <gtest/gtest.h>

#include <fstream>

#include "cks/sampling.hpp"
#include "monitor/collect_fixture.hpp"

namespace cks::test {
namespace {

const std::string kHeader = R"({"plan_version":1,"name":"p","created_by":"test"})";

std::string write_lines(const std::string& path, const std::vector<std::string>& lines) {
  std::ofstream out(path);
  for (const auto& l : lines) out << l << '\n';
  return path;
}

std::string group_line(const std::string& group_fields, const std::string& candidates) {
  return R"({"group":{)" + group_fields + R"(},"candidates":)" + candidates + "}";
}

const std::string kGroup = R"("m":128,"n":256,"k":512,"layout":"tn")";
const std::string kCands = R"([["k0123456789abcdef","r=h,s=1,d=h,k=1"]])";

// The error message of reading a plan made of these lines.
std::string read_error(const TempDir& dir, const std::vector<std::string>& lines) {
  try {
    read_plan(write_lines(dir / "bad.jsonl", lines));
  } catch (const Error& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(MonitorPlan, WriteReadRoundTrip) {
  TempDir dir;
  Plan plan;
  plan.name = "round";
  plan.created_by = "test";
  plan.header_json = R"({"policy":"top","seed":3})";
  PlanGroup pg;
  pg.group = {"", 4096, 1024, 256, Layout::nt, "eval", R"({"class":"llm"})", "top", 2, 77};
  pg.group.key = group_key(4096, 1024, 256, Layout::nt);
  pg.candidates = {{fake_kernel(1), kDefaultKnobs}, {fake_kernel(2), "r=n,s=1,d=sk,k=4"}};
  plan.groups.push_back(pg);
  write_plan(plan, dir / "p.jsonl");
  EXPECT_FALSE(std::filesystem::exists(dir / "p.jsonl.tmp"));

  const Plan back = read_plan(dir / "p.jsonl");
  EXPECT_EQ(back.name, "round");
  EXPECT_EQ(back.created_by, "test");
  EXPECT_EQ(nlohmann::json::parse(back.header_json), nlohmann::json::parse(plan.header_json));
  ASSERT_EQ(back.groups.size(), 1u);
  const GroupInfo& g = back.groups[0].group;
  EXPECT_EQ(g.key, "4096x1024x256_nt");
  EXPECT_EQ(g.layout, Layout::nt);
  EXPECT_EQ(g.set, "eval");
  EXPECT_EQ(nlohmann::json::parse(g.tags_json), nlohmann::json::parse(R"({"class":"llm"})"));
  EXPECT_EQ(g.policy, "top");
  EXPECT_EQ(g.budget, 2);
  EXPECT_EQ(g.seed, 77u);
  EXPECT_EQ(back.groups[0].candidates, pg.candidates);
  EXPECT_EQ(back.candidates(), 2u);
}

// `plan merge`: a group met twice is an error, unless --union joins a re-measure sample with the
// remainder of the same group (first place kept, candidates appended once).
TEST(MonitorPlan, MergeRefusesOrJoinsRepeatedGroups) {
  TempDir dir;
  const std::string g = kGroup + R"(,"set":"train","policy":"biased-diverse","budget":3,"seed":9)";
  const std::string other = R"("m":64,"n":64,"k":64,"layout":"tn","set":"train")";
  const std::string a = write_lines(dir / "a.jsonl", {kHeader, group_line(g, kCands)});
  const std::string b = write_lines(
      dir / "b.jsonl", {kHeader, group_line(other, kCands),
                        group_line(g, R"([["k0123456789abcdef","r=h,s=1,d=h,k=1"],["k1111111111111111","r=n,s=1,d=h,k=1"]])")});
  try {
    merge_plans({a, b}, dir / ".", "m");
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("128x256x512_tn appears twice"), std::string::npos) << e.what();
  }
  const Plan u = merge_plans({a, b}, dir / ".", "m", /*union_groups=*/true);
  ASSERT_EQ(u.groups.size(), 2u);
  EXPECT_EQ(u.groups[0].group.key, "128x256x512_tn");  // first place kept
  ASSERT_EQ(u.groups[0].candidates.size(), 2u);        // the shared candidate once
  EXPECT_EQ(u.groups[0].candidates[1].first, "k1111111111111111");
  EXPECT_EQ(u.groups[1].group.key, "64x64x64_tn");
  EXPECT_EQ(nlohmann::json::parse(u.header_json)["unioned_groups"], 1);

  // The same key with other operand data (seed) is not the same group: refused with both values
  // named (another budget or policy is joined: issue 16, tests/monitor/test_plan_picks.cpp).
  std::string g2 = g;
  g2.replace(g2.find(R"("seed":9)"), 8, R"("seed":8)");
  const std::string c = write_lines(dir / "c.jsonl", {kHeader, group_line(g2, kCands)});
  try {
    merge_plans({a, c}, dir / ".", "m", true);
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("seed 9/8"), std::string::npos) << e.what();
  }
}

TEST(MonitorPlan, ValidationErrorsNameTheLine) {
  TempDir dir;
  const auto expect_error = [&](const std::vector<std::string>& lines, const std::string& where, const std::string& what) {
    const std::string e = read_error(dir, lines);
    EXPECT_NE(e.find(where), std::string::npos) << e;
    EXPECT_NE(e.find(what), std::string::npos) << e;
  };
  expect_error({group_line(kGroup, kCands)}, "bad.jsonl:1:", "plan header");
  expect_error({R"({"plan_version":2})"}, ":1:", "unsupported plan_version 2");
  expect_error({kHeader, group_line(kGroup, kCands), "{oops"}, ":3:", "not valid JSON");
  expect_error({kHeader, "", group_line(R"("m":100,"n":256,"k":512,"layout":"tn")", kCands)}, ":3:", "multiple of 8");
  expect_error({kHeader, group_line(R"("m":128,"n":256,"k":512,"layout":"xy")", kCands)}, ":2:", "unknown layout");
  expect_error({kHeader, group_line(R"("key":"1x1x1_tn","m":128,"n":256,"k":512,"layout":"tn")", kCands)}, ":2:",
               "does not match its shape");
  expect_error({kHeader, group_line(kGroup, R"([["kXYZ","r=h,s=1,d=h,k=1"]])")}, ":2:", "bad kernel id");
  expect_error({kHeader, group_line(kGroup, R"([["k0123456789abcdef","r=q"]])")}, ":2:", "candidate 1");
  expect_error({kHeader, group_line(kGroup, R"([["k0123456789abcdef","r=h,s=1,d=h,k=1"],["k0123456789abcdef","r=h,s=1,d=h,k=1"]])")},
               ":2:", "duplicate candidate");
  expect_error({kHeader, group_line(kGroup, kCands), group_line(kGroup, kCands)}, ":3:", "appears twice");
  expect_error({kHeader, group_line(kGroup, R"("all")")}, ":2:", "must be a list or \"exhaustive\"");
  expect_error({kHeader, group_line(kGroup, R"("exhaustive")")}, ":2:", "needs \"pool\"");
  expect_error({kHeader, R"({"group":{}})"}, ":2:", "expected a group line");
  EXPECT_NE(read_error(dir, {}).find("empty plan"), std::string::npos);
  EXPECT_THROW(read_plan(dir / "missing.jsonl"), Error);
}

// Issue 18 defects 3 and 10: a dimension of 2^31 (which the monitor would narrow to a negative
// int for the worker) and knobs outside the catalogue's settings are refused when a plan is read.
TEST(MonitorPlan, DimensionsAndKnobsAreCheckedWhenRead) {
  TempDir dir;
  const auto expect_error = [&](const std::vector<std::string>& lines, const std::string& what) {
    const std::string e = read_error(dir, lines);
    EXPECT_NE(e.find(":2:"), std::string::npos) << e;
    EXPECT_NE(e.find(what), std::string::npos) << e;
  };
  expect_error({kHeader, group_line(R"("m":2147483648,"n":256,"k":512,"layout":"tn")", kCands)}, "M is too large");
  expect_error({kHeader, group_line(R"("m":128,"n":256,"k":9223372036854775808,"layout":"tn")", kCands)}, "too large");
  expect_error({kHeader, group_line(R"("m":128,"n":256,"k":12,"layout":"tn")", kCands)},
               "K must be a multiple of 8 for layout tn");
  // N is free for TN (no operand has N contiguous): a decode-sized N is a valid group.
  EXPECT_EQ(read_error(dir, {kHeader, group_line(R"("m":128,"n":1,"k":512,"layout":"tn")", kCands)}), "(no error)");
  // Knobs no kernel admits, for a kernel outside the catalogue (the fake backend's IDs).
  expect_error({kHeader, group_line(kGroup, R"([["k0123456789abcdef","r=m,s=-1,d=h,k=-4"]])")}, "not a setting");
  expect_error({kHeader, group_line(kGroup, R"([["k0123456789abcdef","r=m,s=999,d=h,k=1"]])")}, "not a setting");
  expect_error({kHeader, group_line(kGroup, R"([["k0123456789abcdef","r=m,s=1,d=sk,k=3"]])")}, "not a setting");
  // Knobs another kernel admits but this catalogue kernel does not.
  const Catalogue& cat = Catalogue::get(Layout::tn);
  std::string persistent, streamk;
  for (const auto& k : cat.kernels()) {
    if (persistent.empty() && k.mainloop != MainloopSchedule::tma_ws && k.scheduler == TileSchedulerKind::persistent)
      persistent = k.id();
    if (streamk.empty() && k.scheduler == TileSchedulerKind::stream_k) streamk = k.id();
  }
  expect_error({kHeader, group_line(kGroup, "[[\"" + persistent + "\",\"r=m,s=1,d=sk,k=4\"]]")},
               "are not a setting of kernel " + persistent);
  expect_error({kHeader, group_line(kGroup, "[[\"" + streamk + "\",\"r=n,s=8,d=h,k=1\"]]")}, "not a setting of kernel");
  // Split-K 16 and 32: measurable (a plan may name them on a stream-K kernel), not in the catalogue
  // (the selector does not rank them until data exists), and still refused on a persistent kernel.
  const KernelDesc& sk = cat.kernels()[*cat.find(streamk)];
  // Per raster order: split-K 16 and 32, then the nondeterministic reduction of all 7 settings.
  EXPECT_EQ(knob_settings(sk, KnobScope::measurable).size(), knob_settings(sk).size() + 2 * (2 + 7));
  for (const auto& c : cat.candidates()) {
    EXPECT_LE(c.knobs.splits, 8) << cat.kernels()[c.kernel].id() << " " << c.knobs.canonical();
    EXPECT_EQ(c.knobs.reduction, Reduction::deterministic) << c.knobs.canonical();
  }
  EXPECT_EQ(read_error(dir, {kHeader, group_line(kGroup, "[[\"" + streamk + "\",\"r=m,s=1,d=h,k=1,x=n\"],[\"" + streamk +
                                                            "\",\"r=n,s=1,d=sk,k=32,x=n\"]]")}),
            "(no error)");
  expect_error({kHeader, group_line(kGroup, "[[\"" + persistent + "\",\"r=m,s=1,d=h,k=1,x=n\"]]")},
               "are not a setting of kernel " + persistent);
  EXPECT_EQ(read_error(dir, {kHeader, group_line(kGroup, "[[\"" + streamk + "\",\"r=m,s=1,d=sk,k=16\"],[\"" + streamk +
                                                            "\",\"r=n,s=1,d=sk,k=32\"]]")}),
            "(no error)");
  expect_error({kHeader, group_line(kGroup, "[[\"" + streamk + "\",\"r=m,s=1,d=sk,k=64\"]]")}, "not a setting of kernel");
  expect_error({kHeader, group_line(kGroup, "[[\"" + persistent + "\",\"r=m,s=1,d=sk,k=16\"]]")},
               "are not a setting of kernel " + persistent);
  // Every knob setting of a catalogue kernel reads back.
  std::string cands;
  for (const auto& kn : knob_settings(cat.kernels()[*cat.find(streamk)]))
    cands += std::string(cands.empty() ? "" : ",") + "[\"" + streamk + "\",\"" + kn.canonical() + "\"]";
  EXPECT_EQ(read_error(dir, {kHeader, group_line(kGroup, "[" + cands + "]")}), "(no error)");
}

TEST(MonitorPlan, ExhaustiveGroupsExpandTheirPool) {
  TempDir dir;
  const Catalogue& cat = Catalogue::get(Layout::tn);
  ASSERT_GE(cat.kernels().size(), 3u);
  write_lines(dir / "pool.txt", {"# three kernels", cat.kernels()[0].id(), cat.kernels()[1].id(), cat.kernels()[2].id()});
  const std::string all = R"({"group":{)" + kGroup + R"(},"candidates":"exhaustive","pool":"pool.txt"})";
  const std::string defaults =
      R"({"group":{"m":128,"n":128,"k":128,"layout":"tn"},"candidates":"exhaustive","pool":"pool.txt","knobs":"default"})";
  const Plan plan = read_plan(write_lines(dir / "ex.jsonl", {kHeader, all, defaults}));
  ASSERT_EQ(plan.groups.size(), 2u);
  size_t expected = 0;
  for (int i = 0; i < 3; ++i) expected += knob_settings(cat.kernels()[static_cast<size_t>(i)]).size();
  EXPECT_EQ(plan.groups[0].candidates.size(), expected);
  EXPECT_EQ(plan.groups[0].pool, "pool.txt");
  ASSERT_EQ(plan.groups[1].candidates.size(), 3u);
  for (size_t i = 0; i < 3; ++i) {
    EXPECT_EQ(plan.groups[1].candidates[i].first, cat.kernels()[i].id());
    EXPECT_EQ(plan.groups[1].candidates[i].second, knob_settings(cat.kernels()[i]).front().canonical());
  }

  // Written back in exhaustive form, next to the same pool.
  write_plan(plan, dir / "ex2.jsonl");
  EXPECT_EQ(read_plan(dir / "ex2.jsonl").groups[0].candidates, plan.groups[0].candidates);
  // A pool kernel of another layout is an error naming the pool line.
  write_lines(dir / "pool.txt", {Catalogue::get(Layout::nt).kernels()[0].id()});
  EXPECT_NE(read_error(dir, {kHeader, all}).find("pool.txt:1"), std::string::npos) << read_error(dir, {kHeader, all});
}

TEST(MonitorPlan, MakeSamplesEachGroupInStaticRankOrder) {
  TempDir dir;
  PlanMakeOptions o;
  o.shape_set = "paper";
  o.layouts = {Layout::tn};
  o.limit_groups = 2;
  o.policy = "top";
  o.budget = 5;
  o.seed = 11;
  o.group_set = "proof";
  const Plan plan = make_plan(o, dir / ".");
  ASSERT_EQ(plan.groups.size(), 2u);
  for (const auto& pg : plan.groups) {
    EXPECT_EQ(pg.group.layout, Layout::tn);
    EXPECT_EQ(pg.group.set, "proof");
    EXPECT_EQ(pg.group.policy, "top");
    EXPECT_EQ(pg.group.budget, 5);
    ASSERT_EQ(pg.candidates.size(), 5u);
    // "top" takes the head of the static ranking, in ranking order.
    const Catalogue& cat = Catalogue::get(Layout::tn);
    const GemmShape shape{pg.group.m, pg.group.n, pg.group.k};
    const auto ranked = rank_candidates(shape, cat.kernels(), cat.candidates(), default_hw());
    for (size_t i = 0; i < 5; ++i) {
      const Candidate& c = cat.candidates()[ranked[i].pool_index];
      EXPECT_EQ(pg.candidates[i].first, cat.kernels()[c.kernel].id());
      EXPECT_EQ(pg.candidates[i].second, c.knobs.canonical());
    }
  }
  write_plan(plan, dir / "made.jsonl");
  const Plan back = read_plan(dir / "made.jsonl");
  EXPECT_EQ(back.groups[1].candidates, plan.groups[1].candidates);
  EXPECT_EQ(nlohmann::json::parse(back.header_json)["policy"], "top");

  o.policy = "exhaustive";
  EXPECT_THROW(make_plan(o, dir / "."), Error) << "exhaustive needs a pool";
  o.policy = "greedy";
  EXPECT_THROW(make_plan(o, dir / "."), Error);
}

}  // namespace
}  // namespace cks::test
