// The noise study (`cks analyze noise`) on a real registry: per-row std/mean by layout, set and
// kind, the pooled rows, small problems, the noisy share, rows without rounds, and the CLI.
#include <gtest/gtest.h>

#include <algorithm>

#include "cks/analysis.hpp"
#include "cks/registry.hpp"
#include "registry/registry_test_util.hpp"
#include "shapes/cli_run.hpp"

using namespace cks;
using namespace cks::test;

namespace {

std::string kernel(Layout l, int i) { return Catalogue::get(l).kernels()[static_cast<size_t>(17 * i)].id(); }

MeasurementRow row(const std::string& run, const std::string& group, const std::string& k, double us, double cv_pct,
                   int n = 5) {
  MeasurementRow r = test_row(run, group, k, "ok", us);
  r.std_us = us * cv_pct / 100.0;
  r.n = n;
  return r;
}

// TN train: 4 kernels at 10 us (small) with cv 1, 2, 3, 10 %, cuBLAS at 10 us with cv 0.5 %.
// TN eval: 2 kernels at 100 us with cv 0.2 and 0.4 %; one more with n = 1 (no cv: skipped).
// NT train: 1 kernel at 50 us with cv 6 %; a `cut` row (not ok: ignored).
void write_registry(const std::string& path) {
  Registry reg(path);
  const std::string run = reg.begin_run(test_run());
  reg.upsert_group(test_group(128, 256, 512, "train"));
  reg.upsert_group(test_group(1024, 1024, 1024, "eval"));
  reg.upsert_group(test_group(256, 256, 256, "train", Layout::nt));
  const std::string A = group_key(128, 256, 512, Layout::tn), B = group_key(1024, 1024, 1024, Layout::tn),
                    C = group_key(256, 256, 256, Layout::nt);
  std::vector<MeasurementRow> rows;
  const double cvs[] = {1, 2, 3, 10};
  for (int i = 0; i < 4; ++i) rows.push_back(row(run, A, kernel(Layout::tn, i), 10.0, cvs[i]));
  rows.push_back(row(run, A, "cublas", 10.0, 0.5));
  rows.push_back(row(run, B, kernel(Layout::tn, 0), 100.0, 0.2));
  rows.push_back(row(run, B, kernel(Layout::tn, 1), 100.0, 0.4));
  rows.push_back(row(run, B, kernel(Layout::tn, 2), 100.0, 0.3, 1));
  rows.push_back(row(run, C, kernel(Layout::nt, 0), 50.0, 6));
  rows.push_back(test_row(run, C, kernel(Layout::nt, 1), "cut", 500.0));
  reg.insert_measurements(rows);
}

const NoiseRow& find(const NoiseStudy& s, const std::string& layout, const std::string& set, const std::string& kind) {
  const auto it = std::find_if(s.rows.begin(), s.rows.end(), [&](const NoiseRow& r) {
    return r.layout == layout && r.set == set && r.kind == kind;
  });
  if (it == s.rows.end()) throw std::runtime_error("no row " + layout + "/" + set + "/" + kind);
  return *it;
}

struct NoiseFixture : ::testing::Test {
  ScratchDir dir;
  std::string db = dir.file("noise.db");
  RegistryOptions existing() const {
    RegistryOptions ro;
    ro.create = false;
    return ro;
  }
  void SetUp() override { write_registry(db); }
};

}  // namespace

TEST_F(NoiseFixture, RowsByLayoutSetAndKindThenPooled) {
  Registry reg(db, existing());
  const NoiseStudy s = noise_study(reg, NoiseOptions{});
  EXPECT_EQ(s.skipped, 1u) << "the n = 1 row has no std";
  std::vector<std::string> order;
  for (const auto& r : s.rows) order.push_back(r.layout + "/" + r.set + "/" + r.kind);
  EXPECT_EQ(order, (std::vector<std::string>{"tn/eval/kernel", "tn/train/kernel", "tn/train/cublas", "nt/train/kernel",
                                             "tn/all/kernel", "all/all/kernel", "all/all/cublas"}));

  const NoiseRow& train = find(s, "tn", "train", "kernel");
  EXPECT_EQ(train.rows, 4u);
  EXPECT_NEAR(train.median_pct, 2.5, 1e-9);
  EXPECT_NEAR(train.max_pct, 10.0, 1e-9);
  EXPECT_NEAR(train.p90_pct, 3 + 0.7 * 7, 1e-9) << "linear interpolation between 3 and 10";
  EXPECT_EQ(train.small_rows, 4u);
  EXPECT_NEAR(train.noisy_share, 0.25, 1e-12) << "one of four above 5 %";
  EXPECT_TRUE(std::isnan(train.median_large_pct));

  const NoiseRow& tn = find(s, "tn", "all", "kernel");
  EXPECT_EQ(tn.rows, 6u);
  EXPECT_EQ(tn.small_rows, 4u);
  EXPECT_NEAR(tn.median_large_pct, 0.3, 1e-9);
  EXPECT_NEAR(find(s, "tn", "train", "cublas").median_pct, 0.5, 1e-9);

  const NoiseRow& all = find(s, "all", "all", "kernel");
  EXPECT_EQ(all.rows, 7u) << "the cut row and cuBLAS are not in the kernel rows";
  EXPECT_NEAR(all.median_pct, 2.0, 1e-9);
  EXPECT_NEAR(all.noisy_share, 2.0 / 7.0, 1e-12);
}

TEST_F(NoiseFixture, FiltersAndErrors) {
  Registry reg(db, existing());
  NoiseOptions o;
  o.layouts = {Layout::nt};
  const NoiseStudy nt = noise_study(reg, o);
  ASSERT_EQ(nt.rows.size(), 1u) << "one layout, one set: no pooled rows";
  EXPECT_NEAR(nt.rows[0].median_pct, 6.0, 1e-9);
  EXPECT_EQ(nt.rows[0].small_rows, 0u);

  o = {};
  o.set = "eval";
  const NoiseStudy eval = noise_study(reg, o);
  ASSERT_EQ(eval.rows.size(), 1u);
  EXPECT_EQ(eval.rows[0].rows, 2u);
  EXPECT_EQ(eval.skipped, 1u);

  o = {};
  o.set = "proof";
  EXPECT_THROW(noise_study(reg, o), Error) << "no ok row in that set";
  o = {};
  o.small_us = 0;
  EXPECT_THROW(validate(o), Error);
  o = {};
  o.high_pct = -1;
  EXPECT_THROW(validate(o), Error);
}

TEST_F(NoiseFixture, CliTableAndErrors) {
  const auto csv = run_cks("analyze noise --registry " + db + " --layouts tn --set train --format csv");
  ASSERT_EQ(csv.exit_code, 0) << csv.err;
  EXPECT_EQ(csv.out.rfind("layout,set,kind,rows,median_pct,p90_pct", 0), 0u) << csv.out;
  EXPECT_NE(csv.out.find("tn,train,kernel,4,2.5,"), std::string::npos) << csv.out;
  EXPECT_NE(csv.out.find("tn,train,cublas,1,0.5,"), std::string::npos) << csv.out;
  EXPECT_NE(csv.err.find("5 ok rows with a std/mean; 0 ok rows without"), std::string::npos) << csv.err;

  const auto bad = run_cks("analyze noise --registry " + db + " --high-pct 0");
  EXPECT_NE(bad.exit_code, 0);
  EXPECT_NE(bad.err.find("--high-pct must be positive"), std::string::npos) << bad.err;
  const auto none = run_cks("analyze noise --registry " + db + " --set proof");
  EXPECT_NE(none.exit_code, 0);
  EXPECT_EQ(std::count(none.err.begin(), none.err.end(), '\n'), 1) << none.err;
}
