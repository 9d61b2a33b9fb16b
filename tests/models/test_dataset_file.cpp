// The data set kept beside a corpus cache entry (docs/registry.md, "Corpus cache"): written and
// read back whole and equal, refused (recomputed) when truncated, damaged or of another feature
// schema; `cks train` / `cks eval` read it on the second call and train the same model.
#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <fstream>

#include "common/test_util.hpp"
#include "models/synthetic.hpp"
#include "shapes/cli_run.hpp"

using namespace cks;

namespace {

namespace fs = std::filesystem;

void expect_equal(const Dataset& a, const Dataset& b) {
  EXPECT_EQ(a.hw_preset, b.hw_preset);
  ASSERT_EQ(a.groups.size(), b.groups.size());
  for (size_t g = 0; g < a.groups.size(); ++g) {
    const DataGroup &x = a.groups[g], &y = b.groups[g];
    EXPECT_EQ(x.key, y.key);
    EXPECT_EQ(x.set, y.set);
    EXPECT_EQ(x.problem.m, y.problem.m);
    EXPECT_EQ(x.problem.n, y.problem.n);
    EXPECT_EQ(x.problem.k, y.problem.k);
    EXPECT_EQ(x.problem.layout, y.problem.layout);
    EXPECT_EQ(x.begin, y.begin);
    EXPECT_EQ(x.end, y.end);
    EXPECT_EQ(std::isnan(x.cublas_tflops), std::isnan(y.cublas_tflops));
    if (!std::isnan(x.cublas_tflops)) EXPECT_EQ(x.cublas_tflops, y.cublas_tflops);
  }
  EXPECT_EQ(a.x.rows, b.x.rows);
  EXPECT_EQ(a.x.cols, b.x.cols);
  EXPECT_EQ(0, std::memcmp(a.x.data.data(), b.x.data.data(), a.x.data.size() * sizeof(float)));
  ASSERT_EQ(a.candidates.size(), b.candidates.size());
  for (size_t i = 0; i < a.candidates.size(); ++i) {
    EXPECT_EQ(a.candidates[i].kernel, b.candidates[i].kernel);
    EXPECT_TRUE(a.candidates[i].knobs == b.candidates[i].knobs);
  }
  EXPECT_EQ(a.tflops, b.tflops);
  EXPECT_EQ(a.sigma, b.sigma);
  EXPECT_EQ(a.y, b.y);
  EXPECT_EQ(a.relevance, b.relevance);
  EXPECT_EQ(a.grade, b.grade);
  EXPECT_EQ(a.run_rows, b.run_rows);
  EXPECT_EQ(a.skipped_unknown, b.skipped_unknown);
  EXPECT_EQ(a.skipped_groups, b.skipped_groups);
  EXPECT_EQ(a.run_normalized_groups, b.run_normalized_groups);
  EXPECT_EQ(a.run_normalized_rows, b.run_normalized_rows);
}

}  // namespace

TEST(DatasetFile, RoundTripAndDamagedFilesRefused) {
  test::ScratchDir dir;
  const Dataset d = test::synthetic_dataset(dir.file("syn.db"), 6, 2, 40, 3);
  ASSERT_GT(d.rows(), 100u);
  const std::string path = dir.file("d.bin");
  write_dataset_file(d, path);
  const auto back = read_dataset_file(path);
  ASSERT_TRUE(back.has_value());
  expect_equal(d, *back);

  EXPECT_FALSE(read_dataset_file(dir.file("missing.bin")).has_value());
  const auto size = fs::file_size(path);
  fs::copy_file(path, dir.file("short.bin"));
  fs::resize_file(dir.file("short.bin"), size - 9);
  EXPECT_FALSE(read_dataset_file(dir.file("short.bin")).has_value());
  fs::copy_file(path, dir.file("long.bin"));
  std::ofstream(dir.file("long.bin"), std::ios::app) << "x";
  EXPECT_FALSE(read_dataset_file(dir.file("long.bin")).has_value());
  fs::copy_file(path, dir.file("schema.bin"));
  {
    std::fstream f(dir.file("schema.bin"), std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(8);
    f.put('\x01');  // the feature-schema hash
  }
  EXPECT_FALSE(read_dataset_file(dir.file("schema.bin")).has_value());
  // The fingerprint follows the options and the hardware.
  DatasetOptions off;
  off.run_normalize = false;
  EXPECT_NE(dataset_fingerprint(default_hw(), {}), dataset_fingerprint(default_hw(), off));
  EXPECT_NE(dataset_fingerprint(default_hw(), {}), dataset_fingerprint(hw_preset("h100-sxm"), {}));
}

TEST(DatasetFile, TrainReadsTheKeptDataSetOnTheSecondCall) {
  test::ScratchDir dir;
  test::ScopedEnv cache("CKS_CORPUS_CACHE", dir.file("cache"));
  test::ScopedEnv progress("CKS_PROGRESS", "1");  // the "cks: note: read ..." line
  auto groups = test::synthetic_shapes(10, 5, "train");
  groups.back().set = "eval";
  test::write_synthetic_registry(dir.file("syn.db"), groups, 30, 5);
  fs::create_directories(dir.file("shards"));
  pack_shard(dir.file("syn.db"), dir.file("shards"));
  const std::string args = "train --data " + dir.file("shards") + " --model ridge --out ";
  const test::CliResult first = test::run_cks(args + dir.file("m1.json"));
  ASSERT_EQ(first.exit_code, 0) << first.err;
  EXPECT_NE(first.err.find("(corpus cache built"), std::string::npos) << first.err;
  bool kept = false;
  for (const auto& e : fs::directory_iterator(dir.file("cache")))
    kept |= e.path().filename().string().find(".dataset-") != std::string::npos;
  EXPECT_TRUE(kept) << "no data set kept beside the entry";
  const test::CliResult second = test::run_cks(args + dir.file("m2.json"));
  ASSERT_EQ(second.exit_code, 0) << second.err;
  EXPECT_NE(second.err.find("(corpus cache hit, data set kept"), std::string::npos) << second.err;
  // The same model from the kept data set (provenance aside: its times and paths differ).
  auto model = [&](const std::string& f) {
    auto j = nlohmann::json::parse(test::slurp(dir.file(f)));
    j.erase("provenance");
    return j.dump();
  };
  EXPECT_EQ(model("m1.json"), model("m2.json"));
}
