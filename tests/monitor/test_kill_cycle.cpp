// The kill-cycle test (issue 18): `cks collect` with the fake backend and a fake nvcc (so the
// monitor has compile children as well as a worker) is killed with kill -9 at 50 random moments
// (fixed seed), and its worker 20 more times, the same command resuming after each kill. Every
// fifth kill lands at a random moment of the start-up (plan, registry, catalogue, worker start);
// the others a random time after the worker appeared, so each of those cycles measures something
// however slow the machine. After every kill: PRAGMA integrity_check is ok, no committed row is lost, no worker or compiler
// process is left behind. At the end: exactly one final row per candidate, all ok (external
// kills are never charged to a candidate), and again no process left.
//
// ctest runs it as its own test with the label `killcycle` (CMakeLists.txt):
//   ctest --test-dir build -L killcycle --output-on-failure
// CKS_KILL_CYCLES=N runs N monitor kills instead of 50 (a longer run on demand).
#include <gtest/gtest.h>
#include <sqlite3.h>
#include <sys/stat.h>

#include <chrono>
#include <cstdlib>
#include <random>
#include <set>
#include <thread>

#include "cks/catalogue.hpp"
#include "monitor/collect_fixture.hpp"
#include "monitor/process_util.hpp"

namespace cks::test {
namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

// Raw read-only SQLite access: the checks never go through the code under test.
struct ReadOnlyDb {
  sqlite3* db = nullptr;
  explicit ReadOnlyDb(const std::string& path) {
    if (sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READONLY, nullptr) != SQLITE_OK)
      throw std::runtime_error("cannot open " + path);
    sqlite3_busy_timeout(db, 10000);
  }
  ~ReadOnlyDb() { sqlite3_close(db); }
  std::vector<std::vector<std::string>> rows(const std::string& sql) const {
    sqlite3_stmt* s = nullptr;
    if (sqlite3_prepare_v2(db, sql.c_str(), -1, &s, nullptr) != SQLITE_OK)
      throw std::runtime_error(std::string("prepare: ") + sqlite3_errmsg(db));
    std::vector<std::vector<std::string>> out;
    while (sqlite3_step(s) == SQLITE_ROW) {
      std::vector<std::string> r;
      for (int i = 0; i < sqlite3_column_count(s); ++i) {
        const auto* t = sqlite3_column_text(s, i);
        r.emplace_back(t ? reinterpret_cast<const char*>(t) : "");
      }
      out.push_back(std::move(r));
    }
    sqlite3_finalize(s);
    return out;
  }
};

// A fake nvcc whose every process (the script and its `sleep`) has `dir` in its command line:
// takes `seconds` per translation unit, in a child process like nvcc's cicc/ptxas.
void write_fake_nvcc(const std::string& dir, double seconds) {
  std::filesystem::create_directories(dir + "/cutlass/include/cutlass");
  std::ofstream(dir + "/cutlass/include/cutlass/cutlass.h") << "// fake\n";
  std::filesystem::create_symlink("/bin/sleep", dir + "/nvcc-sleep");
  const std::string script = R"(#!/bin/sh
out=""
while [ $# -gt 0 ]; do
  case "$1" in
    --version) echo "Cuda compilation tools, release 13.0, V13.0.88"; exit 0 ;;
    -o) out="$2"; shift 2 ;;
    *) shift ;;
  esac
done
")" + dir + R"(/nvcc-sleep" )" + std::to_string(seconds) + R"(
echo "fake library" > "$out"
)";
  std::ofstream(dir + "/nvcc") << script;
  ::chmod((dir + "/nvcc").c_str(), 0755);
}

struct Groups {
  std::vector<TestGroup> groups;
  size_t candidates = 0;
};

// `n_groups` groups over the first `n_kernels` TN catalogue kernels (each group a different
// rotation of them), default knobs.
Groups catalogue_groups(int n_groups, int n_kernels) {
  const auto& kernels = Catalogue::get(Layout::tn).kernels();
  Groups g;
  for (int gi = 0; gi < n_groups; ++gi) {
    TestGroup t{512L * (gi + 1), 256, 2048, {}};
    for (int j = 0; j < n_kernels; ++j) {
      const KernelDesc& k = kernels[static_cast<size_t>((j + gi * 7) % n_kernels)];
      t.candidates.emplace_back(k.id(), knob_settings(k).front().canonical());
    }
    g.candidates += t.candidates.size();
    g.groups.push_back(std::move(t));
  }
  return g;
}

TEST(MonitorKillCycle, MonitorAndWorkerKillsLoseNothingAndLeaveNothing) {
  const int monitor_kills = std::getenv("CKS_KILL_CYCLES") ? std::atoi(std::getenv("CKS_KILL_CYCLES")) : 50;
  constexpr int kWorkerKills = 20;
  TempDir dir;
  const std::string tools = dir / "tools";
  write_fake_nvcc(tools, 0.1);
  const Groups g = catalogue_groups(8, 100);
  const std::string plan = write_test_plan(dir / "plan.jsonl", g.groups), db = dir / "reg.db";
  const std::string seed = std::to_string(5000 + getpid());
  const std::vector<std::string> argv{std::string(CKS_BIN_DIR) + "/cks", "collect", "--plan", plan, "--registry", db,
                                      "--backend", "fake", "--fault", "slow=25000", "--seed", seed, "--gpus", "0",
                                      "--real-compile", "--nvcc", tools + "/nvcc", "--cutlass-dir", tools + "/cutlass",
                                      "--cache-dir", dir / "cache", "--jobs", "2", "--kernels-per-tu", "2",
                                      "--deadline", "10", "--heartbeat-timeout", "5", "--progress-every", "0"};
  const std::string worker_needle = "--seed " + seed + " ";

  std::mt19937_64 rng(18);
  std::uniform_int_distribution<int> startup_delay_ms(0, 300), monitor_delay_ms(20, 600), worker_delay_ms(0, 250);
  const auto in_startup = [](int cycle) { return cycle % 5 == 4; };
  // The cycles that also kill the worker: 20 of those past the start-up, spread by the seed.
  std::vector<int> candidates;
  for (int i = 0; i < monitor_kills; ++i)
    if (!in_startup(i)) candidates.push_back(i);
  std::shuffle(candidates.begin(), candidates.end(), rng);
  std::vector<bool> kill_worker(static_cast<size_t>(monitor_kills), false);
  for (size_t i = 0; i < std::min<size_t>(kWorkerKills, candidates.size()); ++i)
    kill_worker[static_cast<size_t>(candidates[i])] = true;

  std::set<std::string> committed;  // uuids of every row seen so far
  int monitors_killed = 0, workers_killed = 0, finished_early = 0;
  const auto t0 = Clock::now();
  const auto check_after_kill = [&](int cycle) {
    const auto compilers = wait_gone(tools + "/nvcc", 3s);
    EXPECT_TRUE(compilers.empty()) << "cycle " << cycle << ": compiler left: " << compilers.front().cmdline;
    const auto workers = wait_gone(worker_needle, 3s);
    EXPECT_TRUE(workers.empty()) << "cycle " << cycle << ": worker left: " << workers.front().cmdline;
    if (!std::filesystem::exists(db)) return;  // killed before it created the registry
    ReadOnlyDb r(db);
    EXPECT_EQ(r.rows("PRAGMA integrity_check").at(0).at(0), "ok") << "cycle " << cycle;
    std::set<std::string> now;
    for (auto& row : r.rows("SELECT uuid FROM measurements")) now.insert(row[0]);
    for (const auto& u : committed) ASSERT_TRUE(now.count(u)) << "cycle " << cycle << ": row " << u << " lost";
    committed = std::move(now);
  };

  for (int cycle = 0; cycle < monitor_kills; ++cycle) {
    const std::string log = dir / ("cycle" + std::to_string(cycle) + ".log");
    const pid_t monitor = spawn(argv, log);
    if (in_startup(cycle)) {
      std::this_thread::sleep_for(std::chrono::milliseconds(startup_delay_ms(rng)));
    } else {
      // Wait for its worker; in a worker cycle, let it work a little and kill it (the monitor
      // respawns it); then let the monitor work a random while.
      pid_t w = 0;
      for (auto until = Clock::now() + 20s; w == 0 && Clock::now() < until;) {
        const auto c = children_with(monitor, "cks-worker");
        if (!c.empty()) w = c.front();
        else std::this_thread::sleep_for(2ms);
      }
      if (w != 0 && kill_worker[static_cast<size_t>(cycle)]) {
        std::this_thread::sleep_for(std::chrono::milliseconds(worker_delay_ms(rng)));
        if (::kill(w, SIGKILL) == 0) ++workers_killed;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(monitor_delay_ms(rng)));
    }
    const bool alive = ::kill(monitor, SIGKILL) == 0;
    const int status = wait_for(monitor);
    if (status == -SIGKILL) {
      ++monitors_killed;
    } else {
      ++finished_early;  // it finished before the kill: the plan must be complete
      EXPECT_EQ(status, 0) << slurp(log);
      EXPECT_FALSE(alive);
    }
    check_after_kill(cycle);
    if (HasFatalFailure()) return;
  }

  const size_t rows_during_kills = committed.size();
  // Resume to the end.
  const std::string last = dir / "final.log";
  ASSERT_EQ(run(argv, last), 0) << slurp(last);
  check_after_kill(monitor_kills);
  ReadOnlyDb r(db);
  std::map<std::tuple<std::string, std::string, std::string>, std::vector<std::string>> by_candidate;
  for (auto& row : r.rows("SELECT group_key, kernel_id, knobs, status FROM measurements WHERE kernel_id != 'cublas'"))
    by_candidate[{row[0], row[1], row[2]}].push_back(row[3]);
  EXPECT_EQ(by_candidate.size(), g.candidates);
  for (const auto& tg : g.groups)
    for (const auto& [kernel, knobs] : tg.candidates) {
      const auto it = by_candidate.find({group_key(tg.m, tg.n, tg.k, Layout::tn), kernel, knobs});
      ASSERT_NE(it, by_candidate.end()) << kernel << " has no row";
      EXPECT_EQ(it->second, std::vector<std::string>{"ok"}) << kernel << ": exactly one final row, ok";
    }
  const double seconds = std::chrono::duration<double>(Clock::now() - t0).count();
  std::printf("kill cycle: %d monitor kills (%d runs finished first), %d worker kills; %zu rows committed between "
              "kills, %zu after the final run (%zu candidates); %.1f s\n",
              monitors_killed, finished_early, workers_killed, rows_during_kills, committed.size(), g.candidates, seconds);
  EXPECT_GE(monitors_killed, std::min(monitor_kills, 50));
  EXPECT_GE(workers_killed, std::min(kWorkerKills, monitor_kills));
}

}  // namespace
}  // namespace cks::test
