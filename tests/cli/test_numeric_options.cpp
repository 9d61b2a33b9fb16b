// Numeric options are validated once, at the command line (issue 18 defect 9): negatives for
// unsigned options, nan/inf for reals, overflow, octal/hex look-alikes; one error line that
// names the option, before any work.
#include <gtest/gtest.h>

#include "cli/cli_run.hpp"

namespace cks::test {
namespace {

const std::vector<std::string> kProblem = {"--m", "128", "--n", "128", "--k", "128", "--layout", "tn"};

std::vector<std::string> with(std::vector<std::string> base, const std::vector<std::string>& more) {
  base.insert(base.end(), more.begin(), more.end());
  return base;
}

TEST(CliNumericOptions, RefusesNegativeUnsignedValues) {
  EXPECT_TRUE(one_error_line(run_cli(with(with({"features"}, kProblem), {"--limit", "-1"})), "--limit"));
  EXPECT_TRUE(one_error_line(run_cli(with(with({"sample"}, kProblem), {"--seed", "-1"})), "--seed"));
  EXPECT_TRUE(one_error_line(run_cli(with(with({"select"}, kProblem), {"--prefilter", "-1"})), "--prefilter"));
  EXPECT_TRUE(one_error_line(run_cli({"shapes", "--set", "paper", "--seed", "-1"}), "--seed"));
  EXPECT_TRUE(one_error_line(run_cli({"pool", "--size", "-5"}), "--size"));
  EXPECT_TRUE(one_error_line(run_cli({"data", "pack", "--registry", "x.db", "--parts", "-2"}), "--parts"));
  EXPECT_TRUE(one_error_line(run_cli({"hw", "--device", "-3"}), "--device"));
}

TEST(CliNumericOptions, RefusesNonFiniteReals) {
  const std::vector<std::string> collect = {"collect", "--plan", "p.jsonl", "--registry", "r.db", "--backend", "fake"};
  EXPECT_TRUE(one_error_line(run_cli(with(collect, {"--deadline", "inf"})), "--deadline"));
  EXPECT_TRUE(one_error_line(run_cli(with(collect, {"--time-budget", "nan"})), "--time-budget"));
  EXPECT_TRUE(one_error_line(run_cli(with(collect, {"--heartbeat-timeout", "-inf"})), "--heartbeat-timeout"));
  EXPECT_TRUE(one_error_line(run_cli(with(collect, {"--cut-factor", "1e999"})), "--cut-factor"));
  EXPECT_TRUE(one_error_line(run_cli(with(collect, {"--mem-per-kernel-gb", "0"})), "--mem-per-kernel-gb"));
  EXPECT_TRUE(one_error_line(run_cli(with(with({"sample"}, kProblem), {"--alpha", "nan"})), "--alpha"));
  EXPECT_TRUE(one_error_line(run_cli(with(with({"sample"}, kProblem), {"--alpha", "1.5"})), "--alpha"));
  EXPECT_TRUE(one_error_line(run_cli({"train", "--out", "m.json", "--eta", "nan"}), "--eta"));
  EXPECT_TRUE(one_error_line(run_cli(with(with({"select"}, kProblem), {"--prior-weight", "inf"})), "--prior-weight"));
}

TEST(CliNumericOptions, RefusesOverflowAndNonDecimalIntegers) {
  EXPECT_TRUE(one_error_line(run_cli(with(with({"features"}, kProblem), {"--limit", "99999999999999999999"})), "--limit"));
  EXPECT_TRUE(one_error_line(run_cli({"features", "--m", "99999999999999999999", "--n", "8", "--k", "8", "--layout", "tn"}),
                             "--m"));
  EXPECT_TRUE(one_error_line(run_cli(with(with({"select"}, kProblem), {"--top", "0x10"})), "--top"));
  EXPECT_TRUE(one_error_line(run_cli(with(with({"select"}, kProblem), {"--top", ""})), "--top"));
  EXPECT_TRUE(one_error_line(run_cli(with(with({"select"}, kProblem), {"--top", "1.5"})), "--top"));
}

TEST(CliNumericOptions, AcceptsValidValuesAsBefore) {
  // "010" is ten (decimal), not eight (CLI11's octal): --limit 010 prints ten rows.
  const CliRun r = run_cli(with(with({"features"}, kProblem), {"--limit", "010", "--format", "csv"}));
  ASSERT_EQ(r.code(), 0) << r.err;
  EXPECT_EQ(std::count(r.out.begin(), r.out.end(), '\n'), 11);  // header + 10 rows
  EXPECT_EQ(run_cli({"shapes", "--set", "paper", "--seed", "18446744073709551615", "--layouts", "tn"}).code(), 0);
}

}  // namespace
}  // namespace cks::test
