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

// --run-normalize offset. Rows of cuBLAS in `groups` groups of 4-40 us measured by three runs:
// run B's host times every call `delta_b` us shorter than run A's, run C's `delta_c` shorter.
std::vector<Observation> offset_rows(size_t groups, double delta_b, double delta_c) {
  std::vector<Observation> rows;
  for (size_t g = 0; g < groups; ++g) {
    const double t = 4.0 + 36.0 * static_cast<double>(g) / static_cast<double>(groups);
    for (auto [run, d] : {std::pair{"run-a", 0.0}, std::pair{"run-b", delta_b}, std::pair{"run-c", delta_c}}) {
      if (std::string(run) == "run-c" && g % 2) continue;  // C measured every other group only
      Observation o;
      o.group_key = "g" + std::to_string(g);
      o.kernel_id = "cublas";
      o.run_uuid = run;
      o.mean_us = t - d;
      rows.push_back(o);
    }
  }
  return rows;
}

TEST(DatasetRunOffsets, RecoverEachRunsConstantTimeAnchoredAtTheLargestRun) {
  const auto rows = offset_rows(40, 0.6, -0.3);
  const auto delta = estimate_run_offsets(rows);
  ASSERT_EQ(delta.size(), 3u);
  // A and B measured 40 groups each (tie: the smaller uuid, run-a, is the anchor), C 20.
  EXPECT_NEAR(delta.at("run-a"), 0.0, 1e-9);
  EXPECT_NEAR(delta.at("run-b"), 0.6, 1e-6) << "B's rows read as taking 0.6 us more";
  EXPECT_NEAR(delta.at("run-c"), -0.3, 1e-6);
  // Groups slower than max_us do not count; runs under min_groups get no offset.
  EXPECT_TRUE(estimate_run_offsets(rows, 1.0).empty());
  EXPECT_EQ(estimate_run_offsets(rows, 100, 30).count("run-c"), 0u);
  // Non-cuBLAS rows and rows without a time are ignored; a run alone in its groups has nothing to fit.
  std::vector<Observation> noise = rows;
  for (Observation& o : noise) o.kernel_id = "k0";
  EXPECT_TRUE(estimate_run_offsets(noise).empty());
}

TEST(DatasetRunOffsets, AnOutlyingCublasRowMovesItsRunsOffsetNotItsGroup) {
  // The per-group ratio trusts one cuBLAS row; the offset fits every group of the run, so one
  // row measured at a throttled clock (30 % slow) leaves run B's offset where the rest put it.
  auto rows = offset_rows(40, 0.6, 0.0);
  for (Observation& o : rows)
    if (o.group_key == "g7" && o.run_uuid == "run-b") o.mean_us *= 1.3;
  EXPECT_NEAR(estimate_run_offsets(rows).at("run-b"), 0.6, 1e-3);  // the fit stops at 1e-4 us of movement
}

TEST(DatasetRunOffsets, LoadDatasetCorrectsEachRunsRowsByItsOffset) {
  ScratchDir dir;
  const std::string path = dir.file("o.db");
  const auto c = three_candidates();
  {
    // Six groups of ~10 us with cuBLAS in runs A and B; B's host is 0.5 us faster per call.
    // Group 0 also holds candidate rows: c[0] and c[1] from A, c[2] from B at the same true time.
    Registry reg(path);
    const std::string a = reg.begin_run(test_run());
    const std::string b = reg.begin_run(test_run());
    for (long i = 0; i < 6; ++i) {
      const long m = kM + 64 * i;
      reg.upsert_group(test_group(m, kN, kK, "train"));
      const double flops = 2.0 * m * kN * kK;
      auto cub = [&](const std::string& run, double us) {
        MeasurementRow r = test_row(run, group_key(m, kN, kK, Layout::tn), "cublas", "ok");
        r.mean_us = us;
        r.tflops = flops / (us * 1e6);
        return r;
      };
      std::vector<MeasurementRow> rows{cub(a, 10.0 + i), cub(b, 9.5 + i)};
      if (i == 0) {
        // row_of writes a kM x kN x kK row: group 0 is that shape.
        rows.push_back(row_of(a, c[0], 2.0 * kM * kN * kK / (12.0 * 1e6)));
        rows.push_back(row_of(a, c[1], 2.0 * kM * kN * kK / (11.0 * 1e6)));
        rows.push_back(row_of(b, c[2], 2.0 * kM * kN * kK / (10.5 * 1e6)));  // 11 us on A's host
      }
      reg.insert_measurements(std::move(rows));
    }
    reg.end_run(a);
    reg.end_run(b);
  }
  const Registry reg(path);
  DatasetOptions opt;
  opt.run_offset = true;
  const Dataset d = load_dataset(reg, default_hw(), opt);
  ASSERT_EQ(d.run_offsets.size(), 2u);
  const double flops = 2.0 * kM * kN * kK;
  // Anchored at one of the two runs (a tie: the smaller uuid), so the pair differs by 0.5 us.
  const double shift = d.run_offsets.begin()->second - std::next(d.run_offsets.begin())->second;
  EXPECT_NEAR(std::abs(shift), 0.5, 1e-6);
  auto us = [&](const Candidate& x) { return flops / (tflops_of(d, x) * 1e6); };
  EXPECT_NEAR(us(c[2]), us(c[1]), 1e-6) << "c[2] and c[1] take the same time once corrected";
  EXPECT_NEAR(us(c[0]) - us(c[1]), 1.0, 1e-6) << "rows of one run keep their time difference";
  EXPECT_EQ(d.run_normalized_groups, 1u) << "groups 1-5 hold only cuBLAS rows: no candidate to train on";
  // The default (per-group cuBLAS ratio) and off give other numbers: the mode is not a no-op.
  const Dataset raw = load_dataset(reg, default_hw(), DatasetOptions{false});
  EXPECT_GT(tflops_of(raw, c[2]) / tflops_of(raw, c[1]), 1.04);
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
