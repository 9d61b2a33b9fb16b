// The repeatability study (`cks analyze repeatability`) on a real registry: three runs, one
// candidate set re-measured in a later run and part of it again in a third; pairs, statistics,
// rank stability, clocks, the pooled row, layout filters and the CLI's errors.
#include <gtest/gtest.h>

#include <cmath>

#include "cks/analysis.hpp"
#include "cks/registry.hpp"
#include "registry/registry_test_util.hpp"
#include "shapes/cli_run.hpp"

using namespace cks;
using namespace cks::test;

namespace {

std::string kernel(int i) { return Catalogue::get(Layout::tn).kernels()[static_cast<size_t>(30 * i)].id(); }

std::string add_run(Registry& reg, const std::string& uuid, const std::string& started_at) {
  RunInfo info = test_run();
  info.uuid = uuid;
  info.started_at = started_at;
  return reg.begin_run(info);
}

MeasurementRow row(const std::string& run, const std::string& group, const std::string& k, double us, double clock,
                   const std::string& worker) {
  MeasurementRow r = test_row(run, group, k, "ok", us);
  r.sm_clock_mhz = clock;
  r.worker = worker;
  return r;
}

// Group G (TN, eval): kernels 0..9 at t = 10 + i us in run A (gpu0); run B re-measures
// kernels 0..5 2 % slower (kernel 5: 20 % slower, at a lower clock) on gpu1, and cuBLAS
// 1 % faster; run C re-measures kernels 0..1 once more (the pair stays A -> B). Group H (NT):
// 3 kernels at 100 us in A and B, 4 % faster in B (t >= 20 us: "large").
void write_registry(const std::string& path) {
  Registry reg(path);
  const std::string a = add_run(reg, "aaaaaaaa000000000000000000000000", "2026-11-29T10:00:00.000Z");
  const std::string b = add_run(reg, "bbbbbbbb000000000000000000000000", "2026-11-30T10:00:00.000Z");
  const std::string c = add_run(reg, "cccccccc000000000000000000000000", "2026-11-30T12:00:00.000Z");
  GroupInfo g = test_group(128, 256, 512, "eval");
  reg.upsert_group(g);
  GroupInfo h = test_group(4096, 4096, 4096, "train", Layout::nt);
  reg.upsert_group(h);
  const std::string G = group_key(128, 256, 512, Layout::tn), H = group_key(4096, 4096, 4096, Layout::nt);
  std::vector<MeasurementRow> rows;
  for (int i = 0; i < 10; ++i) rows.push_back(row(a, G, kernel(i), 10.0 + i, 1980, "gpu0"));
  rows.push_back(row(a, G, "cublas", 10.0, 1980, "gpu0"));
  for (int i = 0; i < 6; ++i)
    rows.push_back(row(b, G, kernel(i), (10.0 + i) * (i == 5 ? 1.2 : 1.02), i == 5 ? 1700 : 1980, "gpu1"));
  rows.push_back(row(b, G, "cublas", 9.9, 1980, "gpu1"));
  for (int i = 0; i < 2; ++i) rows.push_back(row(c, G, kernel(i), 50.0, 1980, "gpu0"));
  const Catalogue& nt = Catalogue::get(Layout::nt);
  for (int i = 0; i < 3; ++i) {
    const std::string k = nt.kernels()[static_cast<size_t>(7 * i)].id();
    rows.push_back(row(a, H, k, 100.0, 1980, "gpu0"));
    rows.push_back(row(b, H, k, 96.0, 1980, "gpu0"));
  }
  reg.insert_measurements(rows);
}

}  // namespace

TEST(Repeatability, PairsFirstRowsOfConsecutiveRuns) {
  ScratchDir dir;
  const std::string db = dir.file("rep.db");
  write_registry(db);
  RegistryOptions ro;
  ro.create = false;
  Registry reg(db, ro);

  RepeatabilityOptions o;
  o.layouts = {Layout::tn};
  o.top_share = 0.1;  // ceil(0.6): the largest of the 6 kernel pairs
  const auto rows = repeatability_study(reg, o);
  ASSERT_EQ(rows.size(), 1u) << "one run pair (A -> B); run C's rows are third measurements";
  const RepeatabilityRow& r = rows[0];
  EXPECT_EQ(r.run_a, "aaaaaaaa");
  EXPECT_EQ(r.run_b, "bbbbbbbb");
  EXPECT_EQ(r.layouts, "tn");
  EXPECT_EQ(r.kernel_pairs, 6u);
  EXPECT_EQ(r.cublas_pairs, 1u);
  EXPECT_EQ(r.groups, 1u);
  EXPECT_NEAR(r.median_pct, 2.0, 1e-9);
  EXPECT_NEAR(r.max_pct, 20.0, 1e-9);
  EXPECT_NEAR(r.signed_median_pct, 2.0, 1e-9);
  EXPECT_NEAR(r.cublas_median_pct, 1.0, 1e-9);
  EXPECT_EQ(r.small_pairs, 6u) << "every first time is below 20 us";
  EXPECT_TRUE(std::isnan(r.median_large_pct));
  EXPECT_EQ(r.same_worker_pairs, 0u) << "gpu0 then gpu1";
  EXPECT_EQ(r.rho_groups, 1u);
  EXPECT_NEAR(r.rho_median, 1.0, 1e-12) << "the order is unchanged";
  EXPECT_NEAR(r.clock_differs_all, 1.0 / 6.0, 1e-12);
  EXPECT_NEAR(r.clock_differs_top, 1.0, 1e-12) << "the 20 % outlier is the one at a lower clock";

  // Both layouts: the NT group joins the same run pair (no pooled row for a single pair).
  o.layouts.clear();
  const auto both = repeatability_study(reg, o);
  ASSERT_EQ(both.size(), 1u);
  EXPECT_EQ(both[0].layouts, "tn,nt");  // catalogue layout order
  EXPECT_EQ(both[0].kernel_pairs, 9u);
  EXPECT_EQ(both[0].same_worker_pairs, 3u);
  EXPECT_NEAR(both[0].median_large_pct, 4.0, 1e-9);
  EXPECT_EQ(both[0].rho_groups, 1u) << "the NT group has 3 < 5 pairs";
}

TEST(Repeatability, ErrorsAreClear) {
  ScratchDir dir;
  const std::string db = dir.file("one.db");
  {
    Registry reg(db);
    const std::string run = reg.begin_run(test_run());
    reg.upsert_group(test_group(128, 256, 512));
    reg.insert_measurement(test_row(run, group_key(128, 256, 512, Layout::tn), kernel(0), "ok", 10.0));
  }
  RegistryOptions ro;
  ro.create = false;
  Registry reg(db, ro);
  RepeatabilityOptions o;
  EXPECT_THROW(repeatability_study(reg, o), Error) << "nothing measured twice";
  o.top_share = 0;
  EXPECT_THROW(validate(o), Error);
  o = {};
  o.min_group_pairs = 1;
  EXPECT_THROW(validate(o), Error);
}

TEST(Repeatability, CliTableAndErrors) {
  ScratchDir dir;
  const std::string db = dir.file("rep.db");
  write_registry(db);
  const auto csv = run_cks("analyze repeatability --registry " + db + " --layouts nt --format csv");
  ASSERT_EQ(csv.exit_code, 0) << csv.err;
  EXPECT_EQ(csv.out.rfind("run_a,run_b,layouts,kernel_pairs", 0), 0u) << csv.out;
  EXPECT_NE(csv.out.find("aaaaaaaa,bbbbbbbb,nt,3,1,4,"), std::string::npos) << csv.out;
  EXPECT_NE(csv.err.find("3 kernel pairs"), std::string::npos) << csv.err;

  const auto bad = run_cks("analyze repeatability --registry " + db + " --top-share 2");
  EXPECT_NE(bad.exit_code, 0);
  EXPECT_NE(bad.err.find("--top-share must be in (0, 1]"), std::string::npos) << bad.err;
  const auto none = run_cks("analyze repeatability --registry " + dir.file("missing.db"));
  EXPECT_NE(none.exit_code, 0);
  EXPECT_EQ(std::count(none.err.begin(), none.err.end(), '\n'), 1) << none.err;
}
