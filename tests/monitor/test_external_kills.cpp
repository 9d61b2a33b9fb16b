// Workers killed from outside (issue 18, defect 14): a kill -9 of a worker is not its kernel's
// fault. Kills during start-up must not retire the GPU, kills during a measurement must not count
// as crash attempts of the candidate; a kernel that really crashes still ends `crash`
// (tests/monitor/test_monitor_faults.cpp).
#include <gtest/gtest.h>

#include <chrono>
#include <cstring>
#include <fstream>
#include <set>
#include <thread>

#include "monitor/collect_fixture.hpp"
#include "monitor/process_util.hpp"
#include "worker/fake.hpp"

namespace cks::test {
namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

std::vector<std::string> collect_argv(const std::string& plan, const std::string& db, const std::string& fault) {
  return {std::string(CKS_BIN_DIR) + "/cks", "collect", "--plan", plan, "--registry", db, "--backend", "fake",
          "--fault", fault, "--gpus", "0", "--deadline", "10", "--heartbeat-timeout", "5", "--progress-every", "0"};
}

// Waits for a cks-worker child of `monitor` that is not in `seen`; 0 when none comes.
pid_t next_worker(pid_t monitor, std::set<pid_t>& seen, std::chrono::milliseconds timeout) {
  const auto until = Clock::now() + timeout;
  while (Clock::now() < until) {
    for (pid_t p : children_with(monitor, "cks-worker"))
      if (seen.insert(p).second) return p;
    std::this_thread::sleep_for(2ms);
  }
  return 0;
}

// Kills and reaps the monitor when a test ends before waiting for it (a failed assertion).
struct MonitorGuard {
  pid_t pid;
  bool waited = false;
  ~MonitorGuard() {
    if (!waited) kill(pid, SIGKILL), wait_for(pid);
  }
};

// Every candidate has exactly one row, status ok; nothing was charged a crash.
void expect_one_ok_row_each(const std::string& db, size_t candidates) {
  const auto rows = read_rows(db);
  const auto by_candidate = rows_by_candidate(rows);
  EXPECT_EQ(by_candidate.size(), candidates);
  for (const auto& [key, rs] : by_candidate) {
    ASSERT_EQ(rs.size(), 1u) << std::get<1>(key) << " has " << rs.size() << " rows, first " << rs.front().status
                             << ": " << rs.front().error;
    EXPECT_EQ(rs.front().status, "ok");
    EXPECT_EQ(rs.front().attempt, 1);
  }
  for (const auto& r : rows) EXPECT_NE(r.status, "crash") << r.kernel << ": " << r.error;
}

TEST(MonitorExternalKills, KillsDuringStartUpDoNotRetireTheGpu) {
  TempDir dir;
  const std::vector<TestGroup> groups = {kernel_range_group(512, 256, 2048, 0, 10)};
  const std::string plan = write_test_plan(dir / "plan.jsonl", groups), db = dir / "reg.db";
  // Each worker's start-up (its hello) waits for the gate file: it is killed while starting, five
  // times in a row, however late this test gets to it. (A timed slow start, 0.5 s, let a test
  // starved under load find a worker only after its hello, when the plan was done and the worker
  // gone: kill() failed with ESRCH.) Then the gate opens and the sixth worker does the plan.
  const std::string gate = dir / "gate";
  const pid_t monitor = spawn(collect_argv(plan, db, "start_gate=" + gate + ";slow=10000"), dir / "log");
  MonitorGuard guard{monitor};
  std::set<pid_t> seen;
  for (int i = 0; i < 5; ++i) {
    const pid_t w = next_worker(monitor, seen, 20s);
    ASSERT_NE(w, 0) << "no worker #" << i + 1 << "\n" << slurp(dir / "log");
    ASSERT_EQ(kill(w, SIGKILL), 0) << "worker #" << i + 1 << ": " << std::strerror(errno);
  }
  std::ofstream(gate).close();
  guard.waited = true;
  ASSERT_EQ(wait_for(monitor), 0) << slurp(dir / "log");
  const std::string log = slurp(dir / "log");
  EXPECT_EQ(log.find("giving up"), std::string::npos) << log;
  size_t excused = 0;
  for (size_t at = 0; (at = log.find("killed from outside", at)) != std::string::npos; ++at) ++excused;
  EXPECT_EQ(excused, 5u) << log;
  expect_one_ok_row_each(db, 10);
}

TEST(MonitorExternalKills, KillsDuringMeasurementsAreNotCrashAttempts) {
  TempDir dir;
  const std::vector<TestGroup> groups = {kernel_range_group(512, 256, 2048, 0, 8)};
  const std::string plan = write_test_plan(dir / "plan.jsonl", groups), db = dir / "reg.db";
  // 0.3 s per measurement; each worker is killed 0.45 s after it appears (start-up and the group
  // set-up take milliseconds), so the kills land in measurements. With --max-attempts 2 (the
  // default), two kills of one candidate used to finalise it as a crash.
  const pid_t monitor = spawn(collect_argv(plan, db, "slow=300000"), dir / "log");
  std::set<pid_t> seen;
  for (int i = 0; i < 6; ++i) {
    const pid_t w = next_worker(monitor, seen, 20s);
    ASSERT_NE(w, 0) << "no worker #" << i + 1 << "\n" << slurp(dir / "log");
    std::this_thread::sleep_for(450ms);
    kill(w, SIGKILL);
  }
  ASSERT_EQ(wait_for(monitor), 0) << slurp(dir / "log");
  expect_one_ok_row_each(db, 8);
  EXPECT_NE(slurp(dir / "log").find("killed from outside"), std::string::npos);
}

TEST(MonitorExternalKills, ACandidateKilledEveryTimeIsChargedInTheEnd) {
  // Every measurement of one kernel dies of SIGKILL (fault `oom`: what the OOM killer does to a
  // kernel that allocates without bound). The first 10 kills are excused; from then on each is a
  // charged attempt, so the candidate still ends `crash` after --max-attempts 2.
  TempDir dir;
  const std::vector<TestGroup> groups = {kernel_range_group(512, 256, 2048, 0, 3)};
  const std::string plan = write_test_plan(dir / "plan.jsonl", groups), db = dir / "reg.db";
  const std::string victim = fake_kernel(1);
  ASSERT_EQ(run(collect_argv(plan, db, "oom@" + victim), dir / "log"), 0) << slurp(dir / "log");
  const std::string log = slurp(dir / "log");
  size_t excused = 0;
  for (size_t at = 0; (at = log.find("killed from outside", at)) != std::string::npos; ++at) ++excused;
  EXPECT_EQ(excused, 10u) << log;
  const auto by_candidate = rows_by_candidate(read_rows(db));
  ASSERT_EQ(by_candidate.size(), 3u);
  for (const auto& [key, rs] : by_candidate) {
    if (std::get<1>(key) == victim) {
      ASSERT_EQ(rs.size(), 2u) << "two charged attempts (--max-attempts 2)";
      for (const auto& r : rs) EXPECT_EQ(r.status, "crash");
      EXPECT_NE(rs.back().error.find("signal 9"), std::string::npos) << rs.back().error;
    } else {
      ASSERT_EQ(rs.size(), 1u);
      EXPECT_EQ(rs.front().status, "ok");
    }
  }
}

}  // namespace
}  // namespace cks::test
