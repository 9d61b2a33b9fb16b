// `cks plan split` (issue 19): parts of about equal estimated cost, each a valid plan, together
// exactly the input's candidates; costly groups dealt round-robin into pieces on distinct parts,
// "whole" groups never cut, exhaustive groups kept whole with their pool re-expressed.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>

#include "shapes/cli_run.hpp"
#include "monitor/collect_fixture.hpp"

namespace cks::test {
namespace {

namespace fs = std::filesystem;

// Every (group key, candidate) of a plan, counted.
std::map<std::tuple<std::string, std::string, std::string>, int> candidates_of(const std::vector<const Plan*>& plans) {
  std::map<std::tuple<std::string, std::string, std::string>, int> out;
  for (const Plan* p : plans)
    for (const auto& g : p->groups)
      for (const auto& [id, knobs] : g.candidates) ++out[{g.group.key, id, knobs}];
  return out;
}

// The groups of a plan of mixed sizes: shapes from 256^3 to 8192^3, 8 to 90 candidates.
Plan mixed_plan(const TempDir& dir, int groups) {
  std::vector<TestGroup> gs;
  for (int i = 0; i < groups; ++i) {
    const long s = 256L << (i % 6);
    gs.push_back(kernel_range_group(s, s + 8 * i, s, 100 * i, 8 + (i * 37) % 83));
  }
  return read_plan(write_test_plan(dir / "mixed.jsonl", gs));
}

}  // namespace

TEST(PlanSplit, PartsAreBalancedValidPlansHoldingEveryCandidateOnce) {
  TempDir dir;
  const Plan plan = mixed_plan(dir, 40);
  for (size_t parts : {1u, 3u, 7u}) {
    const auto split = split_plan(plan, parts, dir / ".", dir / ".");
    ASSERT_EQ(split.size(), parts);
    std::vector<Plan> back;
    double total = 0, most = 0;
    for (size_t i = 0; i < parts; ++i) {
      const std::string path = dir / ("part" + std::to_string(i) + ".jsonl");
      write_plan(split[i].plan, path);
      back.push_back(read_plan(path));  // valid: no group twice, known knobs
      EXPECT_FALSE(back.back().groups.empty());
      EXPECT_EQ(back.back().name, "test_p" + std::to_string(i + 1) + "of" + std::to_string(parts));
      const auto header = nlohmann::json::parse(back.back().header_json);
      EXPECT_EQ(header["split"]["part"], i + 1);
      total += split[i].estimated_s;
      most = std::max(most, split[i].estimated_s);
      // Groups keep the input's order within a part.
      size_t last = 0;
      for (const auto& g : back.back().groups) {
        const auto pos = static_cast<size_t>(
            std::find_if(plan.groups.begin(), plan.groups.end(), [&](const PlanGroup& x) { return x.group.key == g.group.key; }) -
            plan.groups.begin());
        EXPECT_GE(pos, last);
        last = pos;
      }
    }
    std::vector<const Plan*> ptrs;
    for (const auto& p : back) ptrs.push_back(&p);
    const auto got = candidates_of(ptrs);
    EXPECT_EQ(got, candidates_of({&plan})) << parts << " parts";
    for (const auto& [c, n] : got) EXPECT_EQ(n, 1);
    // Balanced: the largest part within 15 % of the mean.
    EXPECT_LE(most, 1.15 * total / static_cast<double>(parts)) << parts << " parts";
  }
}

TEST(PlanSplit, CostlyGroupsAreDealtIntoPiecesWholeGroupsNever) {
  TempDir dir;
  std::vector<TestGroup> gs = {kernel_range_group(8192, 8192, 8192, 0, 400)};  // most of the cost
  for (int i = 0; i < 6; ++i) gs.push_back(kernel_range_group(512, 512 + 8 * i, 512, 1000 + 10 * i, 10));
  Plan plan = read_plan(write_test_plan(dir / "big.jsonl", gs));
  auto split = split_plan(plan, 4, dir / ".", dir / ".");
  const std::string big = plan.groups[0].group.key;
  int pieces = 0;
  for (const auto& part : split) {
    const auto it = std::find_if(part.plan.groups.begin(), part.plan.groups.end(),
                                 [&](const PlanGroup& g) { return g.group.key == big; });
    if (it == part.plan.groups.end()) continue;
    ++pieces;
    // Round-robin: a piece holds every k-th candidate, so good and poor candidates alike.
    ASSERT_GE(it->candidates.size(), 2u);
    const auto first = std::find(plan.groups[0].candidates.begin(), plan.groups[0].candidates.end(), it->candidates[0]);
    const auto second = std::find(plan.groups[0].candidates.begin(), plan.groups[0].candidates.end(), it->candidates[1]);
    EXPECT_GT(second - first, 1);
  }
  EXPECT_EQ(pieces, 4) << "the big group in every part";
  double most = 0, least = 1e30;
  for (const auto& part : split) most = std::max(most, part.estimated_s), least = std::min(least, part.estimated_s);
  EXPECT_LE(most, 1.2 * least);

  plan.groups[0].whole = true;  // measured in one stretch: never cut
  split = split_plan(plan, 4, dir / ".", dir / ".");
  pieces = 0;
  for (const auto& part : split)
    for (const auto& g : part.plan.groups)
      if (g.group.key == big) {
        ++pieces;
        EXPECT_EQ(g.candidates.size(), 400u);
        EXPECT_TRUE(g.whole);
      }
  EXPECT_EQ(pieces, 1);
  // Fewer pieces than parts: an error, not an empty part.
  EXPECT_THROW(split_plan(plan, 8, dir / ".", dir / "."), Error);
}

TEST(PlanSplit, ExhaustiveGroupsKeepTheirPoolFromAnotherDirectory) {
  TempDir dir;
  const Catalogue& cat = Catalogue::get(Layout::tn);
  {
    std::ofstream pool(dir / "pool.txt");
    for (size_t i = 0; i < 6; ++i) pool << cat.kernels()[i].id() << "\n";
    std::ofstream plan(dir / "ex.jsonl");
    plan << R"({"plan_version":1,"name":"ex","created_by":"test"})" << "\n";
    for (int i = 0; i < 4; ++i)
      plan << R"({"group":{"m":)" << 128 * (i + 1)
           << R"(,"n":256,"k":512,"layout":"tn"},"candidates":"exhaustive","pool":"pool.txt","knobs":"default"})"
           << "\n";
  }
  const Plan plan = read_plan(dir / "ex.jsonl");
  fs::create_directories(dir / "parts");
  const auto split = split_plan(plan, 2, dir / ".", dir / "parts");
  std::vector<Plan> back;
  for (size_t i = 0; i < split.size(); ++i) {
    const std::string path = dir / ("parts/p" + std::to_string(i) + ".jsonl");
    write_plan(split[i].plan, path);
    back.push_back(read_plan(path));
    for (const auto& g : back.back().groups) EXPECT_EQ(g.pool, "../pool.txt");
  }
  std::vector<const Plan*> ptrs;
  for (const auto& p : back) ptrs.push_back(&p);
  EXPECT_EQ(candidates_of(ptrs), candidates_of({&plan}));
}

TEST(PlanSplit, CommandWritesNamedParts) {
  TempDir dir;
  mixed_plan(dir, 12);
  const CliResult r = run_cks("plan split " + (dir / "mixed.jsonl") + " --parts 3 --out-dir " + (dir / "out") +
                              " --format csv");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  for (int i = 1; i <= 3; ++i) EXPECT_TRUE(fs::exists(dir / ("out/mixed_p" + std::to_string(i) + "of3.jsonl")));
  EXPECT_EQ(std::count(r.out.begin(), r.out.end(), '\n'), 4) << r.out;  // header + 3 parts
  const CliResult bad = run_cks("plan split " + (dir / "mixed.jsonl") + " --parts 0 --out-dir " + (dir / "out"));
  EXPECT_NE(bad.exit_code, 0);
  EXPECT_EQ(bad.err.rfind("cks: error: ", 0), 0u) << bad.err;
  const CliResult many = run_cks("plan split " + (dir / "mixed.jsonl") + " --parts 5000 --out-dir " + (dir / "out"));
  EXPECT_NE(many.exit_code, 0);
  EXPECT_NE(many.err.find("cannot split"), std::string::npos) << many.err;
}

}  // namespace cks::test
