// The real monitor driving real cks-worker processes with the fake backend: every injected
// fault is attributed to exactly the faulty candidate, workers are respawned, the queue ends.
#include <gtest/gtest.h>

#include <set>

#include "monitor/collect_fixture.hpp"
#include "worker/fake.hpp"

namespace cks::test {
namespace {

constexpr long kM = 256, kN = 512, kK = 1024;

TEST(MonitorFaults, EveryFaultAttributedToItsCandidateAndTheQueueFinishes) {
  TempDir dir;
  // Three groups of 20 candidates, distinct kernels, faults spread over the groups.
  const std::vector<TestGroup> groups = {kernel_range_group(kM, kN, kK, 0, 20), kernel_range_group(kN, kM, kK, 20, 20),
                                         kernel_range_group(kK, kN, kM, 40, 20)};
  const std::string plan = write_test_plan(dir / "plan.jsonl", groups);
  const std::map<std::string, std::string> expected_fault = {
      {fake_kernel(3), "crash"},         {fake_kernel(7), "timeout"},          // hang: deadline
      {fake_kernel(25), "timeout"},      {fake_kernel(30), "launch_error"},    // freeze: heartbeat
      {fake_kernel(45), "incorrect"},    {fake_kernel(50), "cannot_implement"},
      {fake_kernel(55), "compile_error"}};
  const std::string spec = "crash@" + fake_kernel(3) + ";hang@" + fake_kernel(7) + ";freeze@" + fake_kernel(25) +
                           ";launch_error@" + fake_kernel(30) + ";incorrect@" + fake_kernel(45) +
                           ";cannot_implement@" + fake_kernel(50) + ";compile_error@" + fake_kernel(55);

  CollectOptions o = fake_options(plan, dir / "reg.db");
  o.fault_spec = spec;
  o.gpus = {0, 1};          // two workers measure concurrently
  o.max_attempts = 1;       // one attempt: each fault leaves exactly one row (retries: next test)
  o.kernels_per_tu = 4;
  o.fake_compile_s = 0.05;  // libraries appear while the workers measure
  const CollectSummary s = collect(o);

  EXPECT_TRUE(s.complete());
  EXPECT_TRUE(s.stop_reason.empty());
  EXPECT_EQ(s.groups_done, 3u);
  EXPECT_EQ(s.items, 60u);
  EXPECT_EQ(s.respawns, 4u) << "crash, hang, freeze and the fatal launch error each replace a worker";
  EXPECT_EQ(s.compile_errors, 1u);

  const auto rows = read_rows(dir / "reg.db");
  const auto by_candidate = rows_by_candidate(rows);
  std::map<std::string, const TestGroup*> group_of;  // each kernel is in one group here
  for (const auto& g : groups)
    for (const auto& c : g.candidates) group_of[c.first] = &g;
  const auto key_of = [](const TestGroup& g) { return group_key(g.m, g.n, g.k, Layout::tn); };
  const auto row_of = [&](int i) {
    const std::string kernel = fake_kernel(i);
    return by_candidate.at({key_of(*group_of.at(kernel)), kernel, kDefaultKnobs}).front();
  };
  ASSERT_EQ(by_candidate.size(), 60u) << "every plan item has rows";
  for (const auto& [key, list] : by_candidate) {
    const auto& [group, kernel, knobs] = key;
    ASSERT_EQ(list.size(), 1u) << kernel << " in " << group;
    const CollectedRow& r = list.front();
    const auto fault = expected_fault.find(kernel);
    if (fault == expected_fault.end()) {
      EXPECT_EQ(r.status, "ok") << kernel << ": " << r.error;
      const TestGroup& tg = *group_of.at(kernel);
      EXPECT_DOUBLE_EQ(r.mean_us, worker::fake::kernel_timing(kernel, knobs, tg.m, tg.n, tg.k).mean_us);
      EXPECT_DOUBLE_EQ(r.max_rel_err, 1e-3) << "the first measurement of each kernel in a group is checked";
      continue;
    }
    EXPECT_EQ(r.status, fault->second) << kernel << ": " << r.error;
    EXPECT_EQ(r.attempt, 1);
  }
  // How each failure was detected.
  EXPECT_NE(row_of(3).error.find("signal 11"), std::string::npos) << row_of(3).error;
  EXPECT_NE(row_of(7).error.find("deadline"), std::string::npos) << row_of(7).error;
  EXPECT_NE(row_of(25).error.find("heartbeat"), std::string::npos) << row_of(25).error;
  EXPECT_FALSE(row_of(3).worker.empty());

  // One cuBLAS reference row per group, timed by the fake model.
  std::map<std::string, int> cublas;
  for (const auto& r : rows)
    if (r.kernel == "cublas") {
      ++cublas[r.group];
      EXPECT_EQ(r.status, "ok");
    }
  ASSERT_EQ(cublas.size(), 3u);
  for (const auto& [g, n] : cublas) EXPECT_EQ(n, 1) << g;
  for (const auto& tg : groups) {
    const std::string sql = "SELECT mean_us FROM measurements WHERE kernel_id='cublas' AND group_key='" + key_of(tg) + "'";
    EXPECT_DOUBLE_EQ(std::stod(query_text(dir / "reg.db", sql)), worker::fake::cublas_timing(tg.m, tg.n, tg.k).mean_us);
  }

  // The run is closed and both GPUs took part.
  EXPECT_FALSE(query_text(dir / "reg.db", "SELECT ended_at FROM runs").empty());
  std::set<std::string> workers;
  for (const auto& r : rows) workers.insert(r.worker);
  EXPECT_TRUE(workers.count("gpu0") && workers.count("gpu1"));
}

TEST(MonitorFaults, CrashOnceIsRetriedAndRepeatedCrashesQuarantineTheKernel) {
  TempDir dir;
  const std::string knob_b = RuntimeKnobs{RasterOrder::along_m, 2, Decomposition::heuristic, 1}.canonical();
  TestGroup g0 = kernel_range_group(kM, kN, kK, 0, 6);
  g0.candidates.emplace_back(fake_kernel(2), knob_b);  // a second candidate of the crashing kernel
  TestGroup g1 = kernel_range_group(kN, kN, kK, 10, 3);
  g1.candidates.emplace_back(fake_kernel(2), kDefaultKnobs);  // ... and one in another group
  const std::string plan = write_test_plan(dir / "plan.jsonl", {g0, g1});

  CollectOptions o = fake_options(plan, dir / "reg.db");
  o.fault_spec = "crash_once@" + fake_kernel(1) + ":" + (dir / "crashed-once") + ";crash@" + fake_kernel(2);
  o.max_attempts = 2;
  const CollectSummary s = collect(o);
  EXPECT_TRUE(s.complete());
  EXPECT_EQ(s.kernels_quarantined, 1u);

  const auto by_candidate = rows_by_candidate(read_rows(dir / "reg.db"));
  const std::string key0 = group_key(kM, kN, kK, Layout::tn), key1 = group_key(kN, kN, kK, Layout::tn);

  // crash_once: a crash row (attempt 1), then ok on attempt 2.
  const auto& once = by_candidate.at({key0, fake_kernel(1), kDefaultKnobs});
  ASSERT_EQ(once.size(), 2u);
  EXPECT_EQ(once[0].status, "crash");
  EXPECT_EQ(once[0].attempt, 1);
  EXPECT_EQ(once[1].status, "ok");
  EXPECT_EQ(once[1].attempt, 2);

  // crash: some candidate of the kernel reached max_attempts crashes; every other candidate of
  // the kernel ends quarantined (none is ok); nothing of it is left pending.
  int final_crashes = 0, quarantined = 0;
  for (const CandidateKey& c : {CandidateKey{key0, fake_kernel(2), kDefaultKnobs}, CandidateKey{key0, fake_kernel(2), knob_b},
                                CandidateKey{key1, fake_kernel(2), kDefaultKnobs}}) {
    const auto& list = by_candidate.at(c);
    for (size_t i = 0; i + 1 < list.size(); ++i) EXPECT_EQ(list[i].status, "crash");
    const CollectedRow& last = list.back();
    if (last.status == "crash") {
      EXPECT_EQ(last.attempt, 2);
      ++final_crashes;
    } else {
      EXPECT_EQ(last.status, "quarantined");
      EXPECT_NE(last.error.find("quarantined"), std::string::npos);
      ++quarantined;
    }
  }
  EXPECT_EQ(final_crashes, 1);
  EXPECT_EQ(quarantined, 2);

  // Everything else measured once, ok.
  for (const auto& [key, list] : by_candidate)
    if (std::get<1>(key) != fake_kernel(1) && std::get<1>(key) != fake_kernel(2)) {
      ASSERT_EQ(list.size(), 1u);
      EXPECT_EQ(list[0].status, "ok");
    }
  {
    Registry reg(dir / "reg.db");
    EXPECT_TRUE(reg.pending_items(key0, 2).empty());
    EXPECT_TRUE(reg.pending_items(key1, 2).empty());
  }
  // Re-running a finished plan does nothing (no run, no rows).
  const size_t rows = read_rows(dir / "reg.db").size();
  const CollectSummary again = collect(o);
  EXPECT_EQ(again.pending_at_start, 0u);
  EXPECT_TRUE(again.run_uuid.empty());
  EXPECT_EQ(read_rows(dir / "reg.db").size(), rows);
}

TEST(MonitorFaults, BadOptionsAndUnstartableWorkersAreClearErrors) {
  TempDir dir;
  const std::string plan = write_test_plan(dir / "plan.jsonl", {kernel_range_group(kM, kN, kK, 0, 2)});
  const auto error_of = [&](CollectOptions o) -> std::string {
    try {
      collect(o);
    } catch (const Error& e) {
      return e.what();
    }
    return "(no error)";
  };
  CollectOptions o = fake_options(plan, dir / "reg.db");
  o.backend = "cuda";
  o.fault_spec = "crash@k1";
  EXPECT_NE(error_of(o).find("a fault the GPU cannot inject"), std::string::npos) << error_of(o);
  o.fault_spec = "hang@k1;slow=100";
  EXPECT_NE(error_of(o).find("need --backend fake"), std::string::npos) << error_of(o);
  o = fake_options(plan, dir / "reg.db");
  o.fault_spec = "boom@k1";
  EXPECT_NE(error_of(o).find("unknown fault kind"), std::string::npos);
  o = fake_options(dir / "missing.jsonl", dir / "reg.db");
  EXPECT_NE(error_of(o).find("plan"), std::string::npos) << error_of(o);
  EXPECT_NE(error_of(o).find("missing.jsonl"), std::string::npos) << error_of(o);
  o = fake_options(plan, dir / "reg.db");
  o.worker_exe = "/bin/false";  // exits at once, three times
  EXPECT_NE(error_of(o).find("no worker could be started"), std::string::npos) << error_of(o);
  EXPECT_EQ(query_text(dir / "reg.db", "SELECT count(*) FROM runs"), "0");
}

TEST(MonitorFaults, TwoWorkersCrashingOnOneKernelEndEachCandidateOnce) {
  // Both workers measure candidates of the same crashing kernel at once: whichever quarantines
  // it, the other's crash in flight must end its candidate too, never requeue it.
  TempDir dir;
  TestGroup g = kernel_range_group(kM, kN, kK, 10, 4);
  for (RasterOrder r : {RasterOrder::along_m, RasterOrder::along_n})
    for (int swizzle : {1, 2, 4, 8})
      g.candidates.emplace_back(fake_kernel(1), RuntimeKnobs{r, swizzle, Decomposition::heuristic, 1}.canonical());
  const std::string plan = write_test_plan(dir / "plan.jsonl", {g});
  CollectOptions o = fake_options(plan, dir / "reg.db");
  o.gpus = {0, 1};
  o.fault_spec = "crash@" + fake_kernel(1);
  o.max_attempts = 2;
  const CollectSummary s = collect(o);
  EXPECT_TRUE(s.complete());
  EXPECT_EQ(s.kernels_quarantined, 1u);
  for (const auto& [key, list] : rows_by_candidate(read_rows(dir / "reg.db"))) {
    const auto& [group, kernel, knobs] = key;
    if (kernel != fake_kernel(1)) {
      ASSERT_EQ(list.size(), 1u);
      EXPECT_EQ(list[0].status, "ok");
      continue;
    }
    // Crash rows below max_attempts, then exactly one final row: crash at attempt 2 or quarantined.
    for (size_t i = 0; i + 1 < list.size(); ++i) {
      EXPECT_EQ(list[i].status, "crash") << knobs;
      EXPECT_EQ(list[i].attempt, static_cast<int>(i + 1)) << knobs;
    }
    const CollectedRow& last = list.back();
    EXPECT_TRUE((last.status == "crash" && last.attempt == 2) || last.status == "quarantined")
        << knobs << ": " << last.status << " attempt " << last.attempt;
  }
}

TEST(MonitorFaults, AFailureInFlightWhenItsKernelIsQuarantinedEndsQuarantined) {
  // One worker hangs on the kernel's first candidate while the other crashes twice on its
  // second and quarantines the kernel; the hang then times out at attempt 1 of 2: the candidate
  // is not retried but ends quarantined with the kernel.
  TempDir dir;
  const std::string hung = kDefaultKnobs, crashing = "r=n,s=2,d=h,k=1";
  TestGroup g{kM, kN, kK, {{fake_kernel(1), hung}, {fake_kernel(1), crashing}}};
  for (const auto& c : kernel_range_group(kM, kN, kK, 10, 3).candidates) g.candidates.push_back(c);
  CollectOptions o = fake_options(write_test_plan(dir / "plan.jsonl", {g}), dir / "reg.db");
  o.gpus = {0, 1};
  o.fault_spec = "hang@" + fake_kernel(1) + "/" + hung + ";crash@" + fake_kernel(1) + "/" + crashing;
  o.max_attempts = 2;
  const CollectSummary s = collect(o);
  EXPECT_TRUE(s.complete());
  const auto by_candidate = rows_by_candidate(read_rows(dir / "reg.db"));
  const std::string key = group_key(kM, kN, kK, Layout::tn);
  const auto& crashed = by_candidate.at({key, fake_kernel(1), crashing});
  ASSERT_EQ(crashed.size(), 2u);
  EXPECT_EQ(crashed[1].status, "crash");
  EXPECT_EQ(crashed[1].attempt, 2);
  const auto& hanging = by_candidate.at({key, fake_kernel(1), hung});
  ASSERT_EQ(hanging.size(), 2u);
  EXPECT_EQ(hanging[0].status, "timeout");
  EXPECT_EQ(hanging[0].attempt, 1);
  EXPECT_EQ(hanging[1].status, "quarantined");
  EXPECT_NE(hanging[1].error.find("2 failed attempts on " + fake_kernel(1) + " " + crashing), std::string::npos)
      << hanging[1].error;
}

TEST(MonitorFaults, ProbabilisticCrashesStillFinishEveryItem) {
  TempDir dir;
  const std::string plan = write_test_plan(dir / "plan.jsonl", {kernel_range_group(kM, kN, kK, 0, 30)});
  CollectOptions o = fake_options(plan, dir / "reg.db");
  o.fault_spec = "crash:p=0.1";
  o.seed = 7;
  o.max_attempts = 5;  // a candidate crashes 5 times in a row with probability 1e-5
  const CollectSummary s = collect(o);
  EXPECT_TRUE(s.complete());
  const auto by_candidate = rows_by_candidate(read_rows(dir / "reg.db"));
  ASSERT_EQ(by_candidate.size(), 30u);
  size_t crashes = 0;
  for (const auto& [key, list] : by_candidate) {
    EXPECT_EQ(list.back().status, "ok");
    for (size_t i = 0; i + 1 < list.size(); ++i) {
      EXPECT_EQ(list[i].status, "crash");
      EXPECT_EQ(list[i].attempt, static_cast<int>(i + 1));
      ++crashes;
    }
  }
  EXPECT_GT(crashes, 0u) << "seed 7 draws several crashes among the first ids";
  EXPECT_EQ(s.respawns, crashes);
}

TEST(MonitorFaults, CutFactorStopsSlowCandidates) {
  TempDir dir;
  const std::string plan = write_test_plan(dir / "plan.jsonl", {kernel_range_group(4096, 4096, 4096, 0, 20)});
  CollectOptions o = fake_options(plan, dir / "reg.db");
  o.cut_factor = 1.2;  // fake cuBLAS runs at 75% of peak; candidates span 20-90%
  collect(o);
  // The cut-off is 1.2 x min(cuBLAS, best so far): it lies in [1.2 x min(cuBLAS, fastest), 1.2 x cuBLAS].
  const auto us_of = [](const std::string& kernel, const std::string& knobs) {
    return worker::fake::kernel_timing(kernel, knobs, 4096, 4096, 4096).mean_us;
  };
  double floor_us = worker::fake::cublas_timing(4096, 4096, 4096).mean_us;
  const double ceiling_us = 1.2 * floor_us;
  const auto by_candidate = rows_by_candidate(read_rows(dir / "reg.db"));
  for (const auto& [key, list] : by_candidate) floor_us = std::min(floor_us, us_of(std::get<1>(key), std::get<2>(key)));
  size_t cut = 0;
  for (const auto& [key, list] : by_candidate) {
    ASSERT_EQ(list.size(), 1u);
    const double us = us_of(std::get<1>(key), std::get<2>(key));
    if (us > ceiling_us) {
      EXPECT_EQ(list[0].status, "cut");
    }
    if (us <= 1.2 * floor_us) {
      EXPECT_EQ(list[0].status, "ok");
    }
    cut += list[0].status == "cut";
  }
  EXPECT_GT(cut, 0u);
}

TEST(MonitorFaults, KernelThatOnlyPoisonsTheContextIsQuarantinedAfterThreeFatalErrors) {
  // Lease 3 (NT): ten kernels faulted with a misaligned address on every shape; each fatal
  // result restarted a worker (737 restarts). Now the third such result quarantines the kernel.
  TempDir dir;
  std::vector<TestGroup> groups;
  for (int i = 0; i < 6; ++i) {
    TestGroup g = kernel_range_group(kM + 64 * i, kN, kK, 10 * i, 3);
    g.candidates.emplace_back(fake_kernel(99), kDefaultKnobs);
    groups.push_back(g);
  }
  const std::string plan = write_test_plan(dir / "plan.jsonl", groups);
  CollectOptions o = fake_options(plan, dir / "reg.db");
  o.fault_spec = "launch_error@" + fake_kernel(99);
  o.max_attempts = 2;
  const CollectSummary s = collect(o);
  EXPECT_TRUE(s.complete());
  EXPECT_EQ(s.kernels_quarantined, 1u);
  EXPECT_EQ(s.respawns, 3u) << "three fatal results, then no more worker restarts";
  std::map<std::string, int> statuses;
  for (const auto& r : read_rows(dir / "reg.db"))
    if (r.kernel == fake_kernel(99)) ++statuses[r.status];
  EXPECT_EQ(statuses["launch_error"], 3);
  EXPECT_EQ(statuses["quarantined"], 3);
}

}  // namespace
}  // namespace cks::test

namespace cks::test {
namespace {

// Lease 15: while the first groups of the plan (tier 1 here) had one ready item each, the worker
// set each of them up for that one item instead of measuring a later group that was ready. A
// group of the first (window of) unfinished groups is now taken only with a set-up's worth of
// ready items (64, or all it has left) when a later group has that many.
TEST(MonitorOrder, AWindowGroupWithAFewReadyItemsWaitsForAReadyLaterGroup) {
  TempDir dir;
  // 8 window groups: the shared kernel 0 (compiled with the later group's tier-0 kernels) and a
  // kernel of their own (tier 1, compiled after); then the later group: kernels 0 and 100-139.
  std::vector<TestGroup> groups;
  for (int i = 0; i < 8; ++i) {
    TestGroup g{128 + 8L * i, 256, 512, {{fake_kernel(0), kDefaultKnobs}, {fake_kernel(10 + i), kDefaultKnobs}}};
    g.priority = 1;
    groups.push_back(g);
  }
  TestGroup later = kernel_range_group(4096, 4096, 512, 100, 40);
  later.candidates.emplace_back(fake_kernel(0), kDefaultKnobs);
  groups.push_back(later);
  CollectOptions o = fake_options(write_test_plan(dir / "plan.jsonl", groups), dir / "reg.db");
  o.kernels_per_tu = 64;
  o.jobs = 1;              // one TU per tier
  o.fake_compile_s = 1.0;  // tier 0 ready at 1 s, tier 1 at 2 s
  const CollectSummary s = collect(o);
  ASSERT_TRUE(s.complete());
  const auto rows = read_rows(dir / "reg.db");
  const std::string later_key = group_key(4096, 4096, 512, Layout::tn);
  size_t first_later = rows.size(), first_window = rows.size();
  for (size_t i = 0; i < rows.size(); ++i) {
    if (rows[i].kernel == "cublas") continue;
    if (rows[i].group == later_key) first_later = std::min(first_later, i);
    else first_window = std::min(first_window, i);
  }
  ASSERT_LT(first_later, rows.size());
  EXPECT_LT(first_later, first_window) << "the ready later group is measured before the window groups' single items";
}

}  // namespace
}  // namespace cks::test
