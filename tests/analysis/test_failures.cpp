// The failure study (`cks analyze failures`) on a real registry: four kernels (three TN with a
// kernels row, one NT known only to the catalogue) with attempts of every kind of status; counts
// and rates per axis, measured spills, layout and set filters, the never-ok kernels and the
// CLI's tables and errors.
#include <gtest/gtest.h>

#include <algorithm>

#include "cks/analysis.hpp"
#include "cks/registry.hpp"
#include "registry/registry_test_util.hpp"
#include "shapes/cli_run.hpp"

using namespace cks;
using namespace cks::test;

namespace {

// A: 128x256, 2x1, auto stages, cooperative, no spills. B: 256x128, 1x1, 3 stages, ping-pong,
// spills. C: 256x192, 8x1, auto, ping-pong, spills unknown (-1). D: the first NT catalogue
// kernel, without a kernels row.
const KernelDesc A{.tm = 128, .tn = 256, .cm = 2, .mainloop = MainloopSchedule::cooperative};
const KernelDesc B{.tm = 256, .tn = 128, .stages = 3, .mainloop = MainloopSchedule::pingpong,
                   .epilogue = EpilogueSchedule::tma_ws};
const KernelDesc C{.tm = 256, .tn = 192, .cm = 8, .mainloop = MainloopSchedule::pingpong,
                   .epilogue = EpilogueSchedule::tma_ws};
const KernelDesc& D() { return Catalogue::get(Layout::nt).kernels()[0]; }

const std::string G1 = group_key(128, 256, 512, Layout::tn), G2 = group_key(4096, 4096, 4096, Layout::tn),
                  H = group_key(1024, 1024, 1024, Layout::nt);

// G1 (TN, listed under train and proof): A 3 ok + 1 cut; B 1 ok, 2 cut, 1 incorrect, 1 timeout;
// cuBLAS 1 ok + 1 crash (left out). G2 (TN, eval): A 2 ok; C 2 launch_error + 3 quarantined
// (never ok; its earliest error is "early"). H (NT, train): D 2 ok, 1 crash, 1 compile_error.
void write_registry(const std::string& path) {
  Registry reg(path);
  const std::string run = reg.begin_run(test_run());
  reg.upsert_group(test_group(128, 256, 512, "train"));
  reg.upsert_group(test_group(128, 256, 512, "proof"));
  reg.upsert_group(test_group(4096, 4096, 4096, "eval"));
  reg.upsert_group(test_group(1024, 1024, 1024, "train", Layout::nt));
  KernelCompileRow a = test_compile(A), b = test_compile(B), c = test_compile(C);
  a.spill_store_bytes = a.spill_load_bytes = 0;
  b.spill_store_bytes = 64;
  b.spill_load_bytes = 0;
  for (const auto& k : {a, b, c}) reg.upsert_kernel(k);
  std::vector<MeasurementRow> rows;
  auto add = [&](const std::string& group, const std::string& kernel, const std::string& status, int n,
                 const std::string& error = "", const std::string& started_at = "2026-11-30T10:00:00.000Z") {
    for (int i = 0; i < n; ++i) {
      MeasurementRow r = test_row(run, group, kernel, status);
      r.error = error;
      r.started_at = started_at;
      rows.push_back(std::move(r));
    }
  };
  add(G1, A.id(), "ok", 3);
  add(G1, A.id(), "cut", 1, "cut: 6.1x slower than the best so far");
  add(G1, B.id(), "ok", 1);
  add(G1, B.id(), "cut", 2);
  add(G1, B.id(), "incorrect", 1, "max_rel_err 0.5");
  add(G1, B.id(), "timeout", 1);
  add(G1, "cublas", "ok", 1);
  add(G1, "cublas", "crash", 1, "cublas crashed");
  add(G2, A.id(), "ok", 2);
  add(G2, C.id(), "launch_error", 1, "late", "2026-11-30T10:00:05.000Z");
  add(G2, C.id(), "launch_error", 1, "early", "2026-11-30T10:00:01.000Z");
  add(G2, C.id(), "quarantined", 3, "kernel quarantined", "2026-11-30T10:00:09.000Z");
  add(H, D().id(), "ok", 2);
  add(H, D().id(), "crash", 1, "worker died");
  add(H, D().id(), "compile_error", 1, "ptxas error");
  reg.insert_measurements(rows);
}

const FailureRow* find(const FailureStudy& s, const std::string& layout, const std::string& axis,
                       const std::string& value) {
  const auto it = std::find_if(s.rows.begin(), s.rows.end(), [&](const FailureRow& r) {
    return r.layout == layout && r.axis == axis && r.value == value;
  });
  return it == s.rows.end() ? nullptr : &*it;
}

std::vector<std::string> values(const FailureStudy& s, const std::string& layout, const std::string& axis) {
  std::vector<std::string> out;
  for (const auto& r : s.rows)
    if (r.layout == layout && r.axis == axis) out.push_back(r.value);
  return out;
}

// kernels, attempts, ok, cut, launch_error, quarantined, other_fail, never_ok_kernels.
void expect_counts(const FailureRow* r, std::array<size_t, 8> want) {
  ASSERT_NE(r, nullptr);
  const std::array<size_t, 8> got{r->kernels,      r->attempts,    r->ok,         r->cut,
                                  r->launch_error, r->quarantined, r->other_fail, r->never_ok_kernels};
  EXPECT_EQ(got, want) << r->layout << " " << r->axis << "=" << r->value;
}

class Failures : public ::testing::Test {
 protected:
  void SetUp() override { write_registry(db_); }
  ScratchDir dir_;
  std::string db_ = dir_.file("failures.db");
};

}  // namespace

TEST_F(Failures, CountsAndRatesPerAxis) {
  Registry reg(db_, RegistryOptions{.create = false});
  const FailureStudy s = failure_study(reg, FailureOptions{});

  // The key listed under two sets counts once; cuBLAS rows are left out.
  expect_counts(&s.total, {4, 20, 8, 3, 2, 3, 4, 1});
  EXPECT_DOUBLE_EQ(s.total.cut_pct, 15.0);
  EXPECT_DOUBLE_EQ(s.total.fail_pct, 45.0);
  expect_counts(find(s, "all", "all", "all"), {4, 20, 8, 3, 2, 3, 4, 1});
  expect_counts(find(s, "tn", "all", "all"), {3, 16, 6, 3, 2, 3, 2, 1});
  EXPECT_DOUBLE_EQ(find(s, "tn", "all", "all")->cut_pct, 18.75);
  EXPECT_DOUBLE_EQ(find(s, "tn", "all", "all")->fail_pct, 43.75);
  expect_counts(find(s, "nt", "all", "all"), {1, 4, 2, 0, 0, 0, 2, 0});
  EXPECT_DOUBLE_EQ(find(s, "nt", "all", "all")->fail_pct, 50.0);

  expect_counts(find(s, "tn", "tile_m", "128"), {1, 6, 5, 1, 0, 0, 0, 0});
  expect_counts(find(s, "tn", "tile_m", "256"), {2, 10, 1, 2, 2, 3, 2, 1});
  EXPECT_DOUBLE_EQ(find(s, "tn", "tile_m", "256")->fail_pct, 70.0);
  expect_counts(find(s, "tn", "stages", "auto"), {2, 11, 5, 1, 2, 3, 0, 1});
  expect_counts(find(s, "tn", "stages", "3"), {1, 5, 1, 2, 0, 0, 2, 0});
  expect_counts(find(s, "tn", "mainloop_tile_m", "pingpong/256"), {2, 10, 1, 2, 2, 3, 2, 1});
  expect_counts(find(s, "tn", "mainloop_tile_m", "cooperative/128"), {1, 6, 5, 1, 0, 0, 0, 0});
  expect_counts(find(s, "tn", "cluster", "8x1"), {1, 5, 0, 0, 2, 3, 0, 1});

  // Spills as ptxas reported them: B stores, A neither, C unknown (-1), D has no kernels row.
  expect_counts(find(s, "tn", "spills", "no"), {1, 6, 5, 1, 0, 0, 0, 0});
  expect_counts(find(s, "tn", "spills", "yes"), {1, 5, 1, 2, 0, 0, 2, 0});
  EXPECT_DOUBLE_EQ(find(s, "tn", "spills", "yes")->cut_pct, 40.0);
  expect_counts(find(s, "tn", "spills", "unknown"), {1, 5, 0, 0, 2, 3, 0, 1});
  expect_counts(find(s, "all", "spills", "unknown"), {2, 9, 2, 0, 2, 3, 2, 1});
  // D's axes come from the catalogue.
  expect_counts(find(s, "nt", "cluster", kernel_axis_value(D(), "cluster")), {1, 4, 2, 0, 0, 0, 2, 0});

  // Layouts in catalogue order then "all", axes in kFailureAxes order, values in natural order.
  EXPECT_EQ(s.rows.front().layout, "tn");
  EXPECT_EQ(s.rows.back().layout, "all");
  std::vector<std::string> axes;
  for (const auto& r : s.rows)
    if (r.layout == "tn" && (axes.empty() || axes.back() != r.axis)) axes.push_back(r.axis);
  EXPECT_EQ(axes, std::vector<std::string>(std::begin(kFailureAxes), std::end(kFailureAxes)));
  EXPECT_EQ(values(s, "tn", "cluster"), (std::vector<std::string>{"1x1", "2x1", "8x1"}));
  EXPECT_EQ(values(s, "tn", "stages"), (std::vector<std::string>{"3", "auto"}));
  EXPECT_EQ(values(s, "tn", "tile_mn"), (std::vector<std::string>{"128x256", "256x128", "256x192"}));
  EXPECT_EQ(values(s, "tn", "tile_n"), (std::vector<std::string>{"128", "192", "256"}));
}

TEST_F(Failures, NeverOkKernels) {
  Registry reg(db_, RegistryOptions{.create = false});
  const FailureStudy s = failure_study(reg, FailureOptions{});
  ASSERT_EQ(s.never_ok.size(), 1u);
  const KernelAttempts& c = s.never_ok[0];
  EXPECT_EQ(c.kernel_id, C.id());
  EXPECT_EQ(c.canonical, C.canonical());
  EXPECT_EQ(c.layout, Layout::tn);
  EXPECT_EQ(c.attempts(), 5u);
  EXPECT_EQ(c.by_status[status_index("launch_error")], 2u);
  EXPECT_EQ(c.by_status[status_index("quarantined")], 3u);
  EXPECT_EQ(c.first_error, "early") << "the earliest failed row's error";

  const Table t = never_ok_table(s.never_ok);
  EXPECT_EQ(t.columns(), (std::vector<std::string>{"kernel_id", "canonical", "layout", "attempts", "compile_error",
                                                   "cannot_implement", "launch_error", "incorrect", "crash",
                                                   "timeout", "cut", "quarantined", "first_error"}));
  ASSERT_EQ(t.size(), 1u);
  EXPECT_EQ(std::get<int64_t>(t.rows()[0][3]), 5);
  EXPECT_EQ(std::get<std::string>(t.rows()[0][12]), "early");
}

TEST_F(Failures, LayoutSetAndSizeFilters) {
  Registry reg(db_, RegistryOptions{.create = false});
  FailureOptions o;
  o.layouts = {Layout::nt};
  const FailureStudy nt = failure_study(reg, o);
  expect_counts(&nt.total, {1, 4, 2, 0, 0, 0, 2, 0});
  EXPECT_TRUE(std::all_of(nt.rows.begin(), nt.rows.end(), [](const FailureRow& r) { return r.layout == "nt"; }))
      << "one layout: no pooled rows";
  EXPECT_TRUE(nt.never_ok.empty());

  o = {};
  o.set = "proof";  // G1 only
  const FailureStudy proof = failure_study(reg, o);
  expect_counts(&proof.total, {2, 9, 4, 3, 0, 0, 2, 0});
  o.set = "eval";  // G2 only
  const FailureStudy eval = failure_study(reg, o);
  expect_counts(&eval.total, {2, 7, 2, 0, 2, 3, 0, 1});

  o = {};
  o.min_attempts = 6;
  const FailureStudy dense = failure_study(reg, o);
  EXPECT_EQ(values(dense, "tn", "spills"), std::vector<std::string>{"no"});
  EXPECT_EQ(find(dense, "nt", "all", "all"), nullptr);
  EXPECT_TRUE(std::all_of(dense.rows.begin(), dense.rows.end(), [](const FailureRow& r) { return r.attempts >= 6; }));
}

TEST_F(Failures, ErrorsAreClear) {
  Registry reg(db_, RegistryOptions{.create = false});
  FailureOptions o;
  o.min_attempts = 0;
  EXPECT_THROW(validate(o), Error);
  EXPECT_THROW(failure_study(reg, o), Error);
  o = {};
  o.set = "nope";
  EXPECT_THROW(failure_study(reg, o), Error) << "nothing measured in that set";
  o = {};
  o.layouts = {Layout::tt};
  EXPECT_THROW(failure_study(reg, o), Error);
}

TEST_F(Failures, CliTablesAndErrors) {
  const auto csv = run_cks("analyze failures --registry " + db_ + " --format csv");
  ASSERT_EQ(csv.exit_code, 0) << csv.err;
  EXPECT_EQ(csv.out.rfind("layout,axis,value,kernels,attempts,ok,cut,launch_error,quarantined,other_fail,cut_pct,"
                          "fail_pct,never_ok_kernels\n",
                          0),
            0u)
      << csv.out;
  EXPECT_NE(csv.out.find("\ntn,all,all,3,16,6,3,2,3,2,18.75,43.75,1\n"), std::string::npos) << csv.out;
  EXPECT_NE(csv.out.find("\nall,all,all,4,20,8,3,2,3,4,15,45,1\n"), std::string::npos) << csv.out;
  EXPECT_NE(csv.err.find("20 attempts of 4 kernels"), std::string::npos) << csv.err;
  EXPECT_NE(csv.err.find("never ok: " + C.id()), std::string::npos) << csv.err;

  const auto never = run_cks("analyze failures --registry " + db_ + " --never-ok --layouts tn --format csv");
  ASSERT_EQ(never.exit_code, 0) << never.err;
  EXPECT_NE(never.out.find(C.id() + "," + C.canonical() + ",tn,5,0,0,2,0,0,0,0,3,early\n"), std::string::npos)
      << never.out;

  const auto bad = run_cks("analyze failures --registry " + db_ + " --layouts tn,xx");
  EXPECT_NE(bad.exit_code, 0);
  EXPECT_NE(bad.err.find("unknown layout 'xx'"), std::string::npos) << bad.err;
  EXPECT_EQ(std::count(bad.err.begin(), bad.err.end(), '\n'), 1) << bad.err;
  const auto sparse = run_cks("analyze failures --registry " + db_ + " --min-attempts 0");
  EXPECT_NE(sparse.exit_code, 0);
  EXPECT_NE(sparse.err.find("--min-attempts must be at least 1"), std::string::npos) << sparse.err;
  const auto none = run_cks("analyze failures --registry " + db_ + " --set nope");
  EXPECT_NE(none.exit_code, 0);
  EXPECT_EQ(std::count(none.err.begin(), none.err.end(), '\n'), 1) << none.err;
}
