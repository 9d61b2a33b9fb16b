// load_dataset's merge of a group's rows measured in different runs (DatasetOptions): each run's
// rows scaled by the group's cuBLAS ratio to its reference run, and which sets are trained on.
#include <gtest/gtest.h>

#include "models/synthetic.hpp"

namespace cks::test {
namespace {

constexpr long kM = 1024, kN = 2048, kK = 512;

// Three catalogue candidates of the tn catalogue, in catalogue order.
std::vector<Candidate> three_candidates() {
  const auto& c = Catalogue::get(Layout::tn).candidates();
  return {c.at(0), c.at(100), c.at(200)};
}

MeasurementRow row_of(const std::string& run, const Candidate& c, double tflops) {
  const auto& cat = Catalogue::get(Layout::tn);
  MeasurementRow r = test_row(run, group_key(kM, kN, kK, Layout::tn), cat.kernels()[c.kernel].id(), "ok");
  r.knobs = c.knobs.canonical();
  r.tflops = tflops;
  r.mean_us = 2.0 * kM * kN * kK / (tflops * 1e12) * 1e6;
  r.std_us = r.mean_us * 0.001;
  return r;
}

MeasurementRow cublas_of(const std::string& run, double tflops) {
  MeasurementRow r = test_row(run, group_key(kM, kN, kK, Layout::tn), "cublas", "ok");
  r.tflops = tflops;
  r.mean_us = 2.0 * kM * kN * kK / (tflops * 1e12) * 1e6;
  return r;
}

// Run A measures candidates 0 and 1 and cuBLAS at 100; run B, on a host where everything runs
// `host_gain` faster, measures candidate 2 (truly as fast as candidate 1) and, if `cublas_b`,
// cuBLAS.
std::string write_two_runs(const ScratchDir& dir, double host_gain, bool cublas_b) {
  const std::string path = dir.file("r.db");
  Registry reg(path);
  reg.upsert_group(test_group(kM, kN, kK, "train"));
  const auto c = three_candidates();
  const std::string a = reg.begin_run(test_run());
  reg.insert_measurements({row_of(a, c[0], 300), row_of(a, c[1], 400), cublas_of(a, 100)});
  reg.end_run(a);
  const std::string b = reg.begin_run(test_run());
  std::vector<MeasurementRow> rows{row_of(b, c[2], 400 * host_gain)};
  if (cublas_b) rows.push_back(cublas_of(b, 100 * host_gain));
  reg.insert_measurements(std::move(rows));
  reg.end_run(b);
  return path;
}

double tflops_of(const Dataset& d, const Candidate& c) {
  for (size_t i = 0; i < d.rows(); ++i)
    if (d.candidates[i].kernel == c.kernel && d.candidates[i].knobs.canonical() == c.knobs.canonical()) return d.tflops[i];
  ADD_FAILURE() << "candidate not in the data set";
  return 0;
}

TEST(DatasetRunNormalize, ScalesARunByItsCublasRatioToTheReferenceRun) {
  ScratchDir dir;
  const Registry reg(write_two_runs(dir, 1.08, true));
  const auto c = three_candidates();
  const Dataset on = load_dataset(reg, default_hw());
  ASSERT_EQ(on.groups.size(), 1u);
  EXPECT_NEAR(tflops_of(on, c[2]), 400, 1e-6);  // 432 on run B's host, 400 on run A's
  EXPECT_NEAR(tflops_of(on, c[1]), 400, 1e-6);  // the reference run's rows are untouched
  EXPECT_NEAR(on.groups[0].cublas_tflops, 100, 1e-6);
  EXPECT_EQ(on.run_normalized_groups, 1u);
  EXPECT_EQ(on.run_normalized_rows, 1u);

  DatasetOptions off;
  off.run_normalize = false;
  const Dataset raw = load_dataset(reg, default_hw(), off);
  EXPECT_NEAR(tflops_of(raw, c[2]), 432, 1e-6);
  EXPECT_EQ(raw.run_normalized_groups, 0u);
  EXPECT_NEAR(raw.groups[0].cublas_tflops, 104, 1e-6) << "off: the mean of every cuBLAS row, as before";
}

TEST(DatasetRunNormalize, DeadBandClampAndRunsWithoutCublasKeepFactorOne) {
  const auto c = three_candidates();
  {
    ScratchDir dir;  // within the dead band (0.5 % < 1 %)
    const Registry reg(write_two_runs(dir, 1.005, true));
    EXPECT_NEAR(tflops_of(load_dataset(reg, default_hw()), c[2]), 402, 1e-6);
  }
  {
    ScratchDir dir;  // run B has no cuBLAS row in the group: nothing to scale by
    const Registry reg(write_two_runs(dir, 1.08, false));
    EXPECT_NEAR(tflops_of(load_dataset(reg, default_hw()), c[2]), 432, 1e-6);
  }
  {
    ScratchDir dir;  // a 2x ratio is clamped to max_factor
    const Registry reg(write_two_runs(dir, 2.0, true));
    EXPECT_NEAR(tflops_of(load_dataset(reg, default_hw()), c[2]), 800 / 1.25, 1e-6);
  }
}

TEST(DatasetSets, FamilyLlmAndSideBySideGroupsAreNeverTrainedOn) {
  ScratchDir dir;
  const std::string path = dir.file("s.db");
  write_synthetic_registry(path,
                           {{256, 512, 1024, Layout::tn, "train"},
                            {512, 512, 1024, Layout::tn, "eval"},
                            {768, 512, 1024, Layout::tn, "family"},
                            {1024, 512, 1024, Layout::tn, "proof"},
                            {1280, 512, 1024, Layout::tn, "llm"},
                            {1536, 512, 1024, Layout::tn, "sbs"}},
                           8, 1);
  const Registry reg(path);
  const Dataset d = load_dataset(reg, default_hw());
  ASSERT_EQ(d.groups.size(), 6u);
  const auto train = d.train_groups();
  ASSERT_EQ(train.size(), 1u);
  EXPECT_EQ(d.groups[train[0]].set, "train");
}

}  // namespace
}  // namespace cks::test
