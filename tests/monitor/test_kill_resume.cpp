// `cks collect` as a child process on a real SQLite file: kill -9 mid-run loses no committed
// row and the same command resumes; --time-budget and SIGTERM stop cleanly.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <sstream>
#include <thread>

#include "monitor/collect_fixture.hpp"
#include "monitor/process_util.hpp"
#include "worker/fake.hpp"

namespace cks::test {
namespace {

using namespace std::chrono_literals;

constexpr long kM = 512, kN = 256, kK = 2048;

// cks-worker processes started with `--seed <seed>` that are still alive.
int live_workers_with_seed(uint64_t seed) {
  int n = 0;
  for (const auto& p : processes_with("--seed " + std::to_string(seed) + " "))
    n += p.cmdline.find("cks-worker") != std::string::npos;
  return n;
}

std::vector<std::string> collect_argv(const std::string& plan, const std::string& db, const std::string& fault,
                                      uint64_t seed, std::vector<std::string> extra = {}) {
  std::vector<std::string> argv{std::string(CKS_BIN_DIR) + "/cks", "collect", "--plan", plan, "--registry", db,
                                "--backend", "fake", "--fault", fault, "--seed", std::to_string(seed), "--gpus", "0",
                                "--deadline", "5", "--heartbeat-timeout", "2", "--progress-every", "0"};
  argv.insert(argv.end(), extra.begin(), extra.end());
  return argv;
}

// Every plan item has exactly one final row and it is ok (the fake model's time); no
// candidate was measured ok twice.
void expect_complete(const std::string& db, const std::vector<TestGroup>& groups) {
  const auto by_candidate = rows_by_candidate(read_rows(db));
  size_t items = 0;
  for (const auto& g : groups)
    for (const auto& [kernel, knobs] : g.candidates) {
      ++items;
      const auto it = by_candidate.find({group_key(g.m, g.n, g.k, Layout::tn), kernel, knobs});
      ASSERT_NE(it, by_candidate.end()) << kernel;
      ASSERT_EQ(it->second.size(), 1u) << kernel << " measured more than once";
      EXPECT_EQ(it->second[0].status, "ok");
      EXPECT_DOUBLE_EQ(it->second[0].mean_us, worker::fake::kernel_timing(kernel, knobs, g.m, g.n, g.k).mean_us);
    }
  EXPECT_EQ(by_candidate.size(), items);
}

TEST(MonitorKillResume, KillNineLosesNoCommittedRowAndTheSameCommandResumes) {
  TempDir dir;
  const std::vector<TestGroup> groups = {kernel_range_group(kM, kN, kK, 0, 30), kernel_range_group(kN, kM, kK, 30, 30)};
  const std::string plan = write_test_plan(dir / "plan.jsonl", groups), db = dir / "reg.db";
  const uint64_t seed = 1000 + static_cast<uint64_t>(getpid());
  const auto argv = collect_argv(plan, db, "slow=100000", seed);  // 0.1 s per measurement

  const pid_t pid = spawn(argv, dir / "first.log");
  ASSERT_TRUE(wait_rows(db, 12, 30s)) << slurp(dir / "first.log");
  ASSERT_EQ(kill(pid, SIGKILL), 0);
  ASSERT_EQ(wait_for(pid), -SIGKILL);

  // The file is intact and so is every committed row; the run never ended.
  EXPECT_EQ(query_text(db, "PRAGMA integrity_check"), "ok");
  const auto before = read_rows(db);
  ASSERT_GE(before.size(), 12u);
  ASSERT_LT(before.size(), 62u) << "killed before the end";
  for (const auto& r : before) {
    EXPECT_EQ(r.status, "ok");
    EXPECT_FALSE(r.run.empty());
    EXPECT_GT(r.mean_us, 0);
  }
  EXPECT_EQ(query_text(db, "SELECT ended_at FROM runs"), "");
  // The worker died with the monitor (PR_SET_PDEATHSIG).
  std::this_thread::sleep_for(200ms);
  EXPECT_EQ(live_workers_with_seed(seed), 0);

  ASSERT_EQ(run(argv, dir / "second.log"), 0) << slurp(dir / "second.log");
  const auto after = read_rows(db);
  ASSERT_GE(after.size(), before.size());
  for (size_t i = 0; i < before.size(); ++i) {
    EXPECT_EQ(after[i].kernel, before[i].kernel);
    EXPECT_EQ(after[i].status, before[i].status);
    EXPECT_EQ(after[i].run, before[i].run);
  }
  expect_complete(db, groups);
  EXPECT_EQ(query_text(db, "SELECT count(*) FROM runs"), "2");
  EXPECT_EQ(query_text(db, "SELECT count(*) FROM runs WHERE ended_at = ''"), "1") << "only the killed run is open";
}

TEST(MonitorKillResume, TimeBudgetStopsCleanlyWithACheckpointAndAReRunFinishes) {
  TempDir dir;
  const std::vector<TestGroup> groups = {kernel_range_group(kM, kN, kK, 0, 40)};
  const std::string plan = write_test_plan(dir / "plan.jsonl", groups), db = dir / "reg.db", ckpt = dir / "ckpt.db";
  const uint64_t seed = 2000 + static_cast<uint64_t>(getpid());

  const auto t0 = std::chrono::steady_clock::now();
  ASSERT_EQ(run(collect_argv(plan, db, "slow=100000", seed, {"--time-budget", "3", "--checkpoint", ckpt}), dir / "first.log"),
            0)
      << slurp(dir / "first.log");
  const double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_LT(took, 3.5) << "the budget includes start-up, the last measurement and the checkpoint";
  EXPECT_NE(slurp(dir / "first.log").find("stopped early (time budget)"), std::string::npos) << slurp(dir / "first.log");

  const size_t rows = count_rows(db);
  EXPECT_GT(rows, 5u);
  EXPECT_LT(rows, 41u);
  EXPECT_NE(query_text(db, "SELECT ended_at FROM runs"), "");
  // The checkpoint is a valid registry holding the same rows.
  EXPECT_EQ(query_text(ckpt, "PRAGMA integrity_check"), "ok");
  EXPECT_EQ(count_rows(ckpt), rows);
  EXPECT_NE(query_text(ckpt, "SELECT ended_at FROM runs"), "");

  ASSERT_EQ(run(collect_argv(plan, db, "slow=20000", seed), dir / "second.log"), 0) << slurp(dir / "second.log");
  expect_complete(db, groups);
  EXPECT_NE(slurp(dir / "second.log").find("remaining"), std::string::npos);
}

TEST(MonitorKillResume, SigtermStopsCleanly) {
  TempDir dir;
  const std::vector<TestGroup> groups = {kernel_range_group(kM, kN, kK, 0, 40)};
  const std::string plan = write_test_plan(dir / "plan.jsonl", groups), db = dir / "reg.db";
  const pid_t pid = spawn(collect_argv(plan, db, "slow=100000", 3000 + static_cast<uint64_t>(getpid())), dir / "log");
  ASSERT_TRUE(wait_rows(db, 5, 30s)) << slurp(dir / "log");
  ASSERT_EQ(kill(pid, SIGTERM), 0);
  EXPECT_EQ(wait_for(pid), 0) << slurp(dir / "log");
  EXPECT_NE(slurp(dir / "log").find("stopped early (signal)"), std::string::npos) << slurp(dir / "log");
  EXPECT_NE(query_text(db, "SELECT ended_at FROM runs"), "");
  EXPECT_EQ(query_text(db, "PRAGMA integrity_check"), "ok");
  EXPECT_LT(count_rows(db), 41u);
}

}  // namespace
}  // namespace cks::test
