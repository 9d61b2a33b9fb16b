// `cks features` and `cks bench features` as a user runs them: the built binary, exit codes and
// the one-line error contract.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <sys/wait.h>
#include <unistd.h>

#include "cks/features.hpp"

namespace {

struct CliResult {
  int exit_code;
  std::string out, err;
};

std::string slurp(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

CliResult run_cks(const std::string& args) {
  // Unique names: ctest may run these tests in parallel processes.
  static int calls = 0;
  const std::string stem =
      testing::TempDir() + "/cks_features_" + std::to_string(getpid()) + "_" + std::to_string(++calls);
  const std::string out = stem + ".out", err = stem + ".err";
  const int status = std::system((CKS_BIN_DIR "/cks " + args + " >" + out + " 2>" + err).c_str());
  CliResult r{WIFEXITED(status) ? WEXITSTATUS(status) : -1, slurp(out), slurp(err)};
  std::remove(out.c_str());
  std::remove(err.c_str());
  return r;
}

void expect_one_line_error(const std::string& args, const std::string& mentions) {
  const CliResult r = run_cks(args);
  EXPECT_NE(r.exit_code, 0) << args;
  EXPECT_EQ(r.err.rfind("cks: error: ", 0), 0u) << args << " -> " << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << args << " -> " << r.err;
  EXPECT_NE(r.err.find(mentions), std::string::npos) << args << " -> " << r.err;
  EXPECT_TRUE(r.out.empty()) << args;
}

}  // namespace

TEST(FeaturesCli, BadInputIsOneClearErrorLine) {
  const std::string ok = " --n 4096 --k 4096 --layout tn";
  expect_one_line_error("features --m 0" + ok, "M must be positive");
  expect_one_line_error("features --m -64" + ok, "M must be positive");
  expect_one_line_error("features --m 100" + ok, "multiple of 8");
  expect_one_line_error("features --m 64 --n 64 --k 64 --layout xy", "unknown layout 'xy'");
  expect_one_line_error("features --m 64 --n 64 --k 64 --layout tn --preset a100", "unknown hardware preset 'a100'");
  expect_one_line_error("features --m 64 --n 64 --k 64 --layout tn --format xml", "unknown format 'xml'");
  expect_one_line_error("features --n 64 --k 64 --layout tn", "--m is required");
  expect_one_line_error("features --m 64 --n 64 --k 64 --layout tn --kernel k0000", "unknown kernel 'k0000'");
  expect_one_line_error("features --m abc" + ok, "--m");
  expect_one_line_error("bench features --m 12", "multiple of 8");
  expect_one_line_error("bench features --repeat 0", "--repeat must be at least 1");
}

TEST(FeaturesCli, SchemaJsonMatchesTheLibrary) {
  const CliResult r = run_cks("features --schema --format json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  const auto& schema = cks::FeatureSchema::get();
  EXPECT_EQ(j.at("hash").get<std::string>(), schema.hash_hex());
  ASSERT_EQ(j.at("features").size(), schema.size());
  EXPECT_EQ(j.at("features")[3].at("name"), "layout");
  EXPECT_EQ(j.at("features")[3].at("kind"), "categorical");
  EXPECT_EQ(j.at("features")[3].at("levels").size(), 4u);
}

TEST(FeaturesCli, CsvRowsForTheCatalogue) {
  const CliResult r = run_cks("features --m 4096 --n 4096 --k 4096 --layout tn --format csv --limit 5");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::istringstream lines(r.out);
  std::string header, line;
  std::getline(lines, header);
  const auto columns = std::count(header.begin(), header.end(), ',') + 1;
  EXPECT_EQ(static_cast<size_t>(columns), 2 + cks::FeatureSchema::get().size());
  EXPECT_GE(columns, 62);
  int rows = 0;
  while (std::getline(lines, line)) {
    ++rows;
    EXPECT_EQ(line.rfind("k", 0), 0u) << line;  // kernel ID first
  }
  EXPECT_EQ(rows, 5);

  // One kernel's candidates only, as json.
  const std::string id = r.out.substr(header.size() + 1, 17);
  const CliResult k = run_cks("features --m 512 --n 512 --k 512 --layout tn --format json --kernel " + id);
  ASSERT_EQ(k.exit_code, 0) << k.err;
  const auto j = nlohmann::json::parse(k.out);
  ASSERT_FALSE(j.empty());
  for (const auto& row : j) EXPECT_EQ(row.at("kernel_id"), id);
}

TEST(FeaturesCli, BenchReportsRowsPerSecond) {
  const CliResult r = run_cks("bench features --m 256 --repeat 1 --format json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  ASSERT_EQ(j.size(), 1u);
  EXPECT_GT(j[0].at("rows_per_s").get<double>(), 0);
  EXPECT_EQ(j[0].at("problem"), "256x4096x4096");
}
