// FeatureComputer over candidate lists, errors, non-finite values and text output.
#include <cstring>
#include <sstream>

#include "features/features_test_util.hpp"

using namespace cks;
using namespace cks::test;

namespace {

std::vector<KernelDesc> some_kernels(Layout l = Layout::tn) {
  return {kernel(128, 128, 64, 2, 1, 4, MainloopSchedule::cooperative, EpilogueSchedule::tma_ws_cooperative,
                 TileSchedulerKind::stream_k, l),
          kernel(64, 256, 64, 1, 2, 0, MainloopSchedule::pingpong, EpilogueSchedule::tma_ws,
                 TileSchedulerKind::persistent, l),
          kernel(128, 64, 128, 1, 1, 3, MainloopSchedule::tma_ws, EpilogueSchedule::no_smem,
                 TileSchedulerKind::persistent, l)};
}

std::vector<Candidate> some_candidates() {
  std::vector<Candidate> out;
  for (uint32_t k = 0; k < 3; ++k)
    for (auto r : {RasterOrder::heuristic, RasterOrder::along_m, RasterOrder::along_n})
      for (int s : {1, 2, 8})
        for (auto d : {Decomposition::heuristic, Decomposition::stream_k, Decomposition::split_k})
          out.push_back({k, RuntimeKnobs{r, s, d, d == Decomposition::split_k ? 3 : 1}});
  return out;
}

}  // namespace

TEST(FeaturesMatrix, EveryColumnWrittenAndRowsMatchSingleRowPath) {
  const auto hw = hw_preset("h200-sxm");
  const FeatureComputer fc(some_kernels(), hw);
  const auto cands = some_candidates();
  const Problem p{2048, 1000 * 8, 4096, Layout::tn};
  // Pre-fill with a sentinel: compute() must overwrite every cell.
  FeatureMatrix x;
  x.resize(cands.size(), FeatureSchema::get().size());
  std::fill(x.data.begin(), x.data.end(), -12345.5f);
  fc.compute(p, cands, x);
  ASSERT_EQ(x.rows, cands.size());
  ASSERT_EQ(x.cols, FeatureSchema::get().size());
  for (size_t r = 0; r < x.rows; ++r) {
    for (size_t c = 0; c < x.cols; ++c) ASSERT_NE(x.at(r, c), -12345.5f) << FeatureSchema::get()[c].name;
    std::vector<float> single(x.cols);
    compute_features(p, fc.kernels()[cands[r].kernel], cands[r].knobs, hw, single.data());
    ASSERT_EQ(std::memcmp(single.data(), x.row(r), x.cols * sizeof(float)), 0) << "row " << r;
  }
}

TEST(FeaturesMatrix, KnobColumnsDoNotLeakBetweenCandidates) {
  // Interleaved kernels (not grouped) give the same rows as grouped order.
  const FeatureComputer fc(some_kernels(), hw_preset("h200-sxm"));
  auto cands = some_candidates();
  std::vector<Candidate> shuffled;
  for (size_t i = 0; i < cands.size(); i += 2) shuffled.push_back(cands[i]);
  for (size_t i = 1; i < cands.size(); i += 2) shuffled.push_back(cands[i]);
  const Problem p{512, 4096, 8192, Layout::tn};
  FeatureMatrix a, b;
  fc.compute(p, cands, a);
  fc.compute(p, shuffled, b);
  for (size_t i = 0; i < shuffled.size(); ++i) {
    const size_t orig = i < (cands.size() + 1) / 2 ? 2 * i : 2 * (i - (cands.size() + 1) / 2) + 1;
    ASSERT_EQ(std::memcmp(a.row(orig), b.row(i), a.cols * sizeof(float)), 0) << i;
  }
}

TEST(FeaturesMatrix, CategoricalCodesAreLevelIndices) {
  const auto hw = hw_preset("h200-sxm");
  const auto ks = some_kernels(Layout::tt);
  const Row r = feature_row({256, 256, 256, Layout::tt}, ks[1],
                            RuntimeKnobs{RasterOrder::along_n, 2, Decomposition::stream_k, 1}, hw);
  EXPECT_EQ(r["layout"], 3.0f);          // tt
  EXPECT_EQ(r["mainloop"], 1.0f);        // pingpong
  EXPECT_EQ(r["epilogue"], 0.0f);        // tma_ws
  EXPECT_EQ(r["tile_scheduler"], 0.0f);  // persistent
  EXPECT_EQ(r["raster"], 2.0f);          // along_n
  EXPECT_EQ(r["decomposition"], 3.0f);   // stream_k
  EXPECT_EQ(r["decomposition_resolved"], 0.0f);  // the persistent scheduler is data-parallel
  EXPECT_EQ(r["compute_engine"], 0.0f);
  EXPECT_EQ(r["stages_auto"], 1.0f);
}

TEST(FeaturesMatrix, ClearErrors) {
  const auto hw = hw_preset("h200-sxm");
  const FeatureComputer fc(some_kernels(), hw);
  FeatureMatrix x;
  const std::vector<Candidate> one{{0, {}}};
  EXPECT_THROW(fc.compute({0, 128, 128, Layout::tn}, one, x), Error);
  EXPECT_THROW(fc.compute({128, -8, 128, Layout::tn}, one, x), Error);
  EXPECT_THROW(fc.compute({128, 128, 128, Layout::nt}, one, x), Error);  // kernels are tn
  const std::vector<Candidate> bad_index{{7, {}}};
  EXPECT_THROW(fc.compute({128, 128, 128, Layout::tn}, bad_index, x), Error);
  const std::vector<Candidate> bad_knobs{{0, RuntimeKnobs{RasterOrder::heuristic, 0, Decomposition::heuristic, 1}}};
  EXPECT_THROW(fc.compute({128, 128, 128, Layout::tn}, bad_knobs, x), Error);

  KernelDesc zero_tile = some_kernels()[0];
  zero_tile.tn = 0;
  EXPECT_THROW(FeatureComputer({zero_tile}, hw), Error);
  HardwareDesc no_sms = hw;
  no_sms.sm_count = 0;
  EXPECT_THROW(FeatureComputer(some_kernels(), no_sms), Error);
}

TEST(FeaturesMatrix, NonFiniteValuesAreAllowedAndPrinted) {
  // A descriptor without TMA bandwidth or LLC size: producer time and cache ratios become
  // infinite instead of failing; the ratio that divides by them becomes 0.
  HardwareDesc hw = hw_preset("h200-sxm");
  hw.tma_bw_bytes_per_s = 0;
  hw.l2_bytes = 0;
  const auto ks = some_kernels();
  const Row r = feature_row({4096, 4096, 4096, Layout::tn}, ks[0], {}, hw);
  EXPECT_TRUE(std::isinf(r["t_tma_ns"]));
  EXPECT_EQ(r["consumer_producer_ratio"], 0.0f);
  EXPECT_TRUE(std::isinf(r["working_set_llc"]));
  EXPECT_TRUE(std::isinf(r["est_time_us"]));
  EXPECT_TRUE(std::isfinite(r["tiles"]));

  FeatureMatrix x;
  x.resize(1, r.v.size());
  std::copy(r.v.begin(), r.v.end(), x.data.begin());
  const std::vector<FeatureRowKey> keys{{ks[0].id(), RuntimeKnobs{}.canonical()}};
  std::ostringstream csv, json;
  write_features(csv, Format::csv, keys, x);
  write_features(json, Format::json, keys, x);
  EXPECT_NE(csv.str().find(",inf,"), std::string::npos);
  EXPECT_NE(json.str().find("\"t_tma_ns\":null"), std::string::npos);
}

TEST(FeaturesOutput, CsvJsonMarkdownLayout) {
  const auto ks = some_kernels();
  const Row r = feature_row({4096, 4096, 4096, Layout::tn}, ks[0]);
  FeatureMatrix x;
  x.resize(1, r.v.size());
  std::copy(r.v.begin(), r.v.end(), x.data.begin());
  const std::vector<FeatureRowKey> keys{{ks[0].id(), RuntimeKnobs{}.canonical()}};

  std::ostringstream csv;
  write_features(csv, Format::csv, keys, x);
  std::istringstream lines(csv.str());
  std::string header, row, extra;
  std::getline(lines, header);
  std::getline(lines, row);
  EXPECT_FALSE(std::getline(lines, extra));
  EXPECT_EQ(header.rfind("kernel_id,knobs,m,n,k,layout,", 0), 0u);
  // knobs contain commas, so they are quoted; categoricals print as level names.
  EXPECT_EQ(row.rfind(ks[0].id() + ",\"r=h,s=1,d=h,k=1\",4096,4096,4096,tn,", 0), 0u) << row;
  EXPECT_NE(row.find(",cooperative,tma_ws_cooperative,"), std::string::npos);

  std::ostringstream json;
  write_features(json, Format::json, keys, x);
  EXPECT_EQ(json.str().rfind("[\n{\"kernel_id\":\"" + ks[0].id() + "\",\"knobs\":\"r=h,s=1,d=h,k=1\",\"m\":4096,", 0),
            0u);
  EXPECT_NE(json.str().find("\"layout\":\"tn\""), std::string::npos);

  std::ostringstream md;
  write_features(md, Format::md, keys, x);
  EXPECT_EQ(md.str().rfind("| kernel_id | knobs | m |", 0), 0u);
}

TEST(FeaturesMatrix, WholeCatalogueWithCachedKernelTerms) {
  const Catalogue& cat = Catalogue::get(Layout::tn);
  const Problem p{1024, 2048, 4096, Layout::tn};
  FeatureMatrix x, again, h100;
  compute_matrix(p, cat, hw_preset("h200-sxm"), x);
  compute_matrix(p, cat, hw_preset("h200-sxm"), again);  // served from the cache
  compute_matrix(p, cat, hw_preset("h100-sxm"), h100);   // another GPU: its own terms
  ASSERT_EQ(x.rows, cat.candidates().size());
  EXPECT_EQ(x.data, again.data);
  const size_t bw = FeatureSchema::get().index("hw_hbm_bw");
  EXPECT_EQ(x.at(0, bw), 4.8e12f);
  EXPECT_EQ(h100.at(0, bw), 3.35e12f);
  // Spot-check rows against the single-row path.
  for (size_t r : {size_t{0}, x.rows / 2, x.rows - 1}) {
    std::vector<float> one(x.cols);
    const Candidate& c = cat.candidates()[r];
    compute_features(p, cat.kernels()[c.kernel], c.knobs, hw_preset("h200-sxm"), one.data());
    EXPECT_EQ(std::memcmp(one.data(), x.row(r), x.cols * sizeof(float)), 0) << r;
  }
  EXPECT_THROW(compute_matrix({1024, 2048, 4096, Layout::nn}, cat, hw_preset("h200-sxm"), x), Error);
}
