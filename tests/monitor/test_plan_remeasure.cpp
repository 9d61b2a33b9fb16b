// `cks plan remeasure` on a real registry: a seeded random sample of ok kernel rows (cuBLAS and
// failed rows never drawn), its size rule, the set / layout filters, and the two-stage sample
// (--kernels) that bounds what a lease must compile; the CLI's plan file and one-line errors.
#include <gtest/gtest.h>

#include <set>

#include "cks/plan.hpp"
#include "cks/registry.hpp"
#include "registry/registry_test_util.hpp"
#include "shapes/cli_run.hpp"

using namespace cks;
using namespace cks::test;

namespace {

constexpr size_t kKernels = 10;

// Four TN training groups and one TN evaluation group, each with an ok row of kernels 0..9 of the
// TN catalogue, one `cut` row and a cuBLAS row; one NT training group with 5 ok rows. 55 ok
// kernel rows in all.
void write_registry(const std::string& path) {
  Registry reg(path);
  const std::string run = reg.begin_run(test_run());
  const auto& tn = Catalogue::get(Layout::tn).kernels();
  const auto& nt = Catalogue::get(Layout::nt).kernels();
  std::vector<MeasurementRow> rows;
  for (int g = 0; g < 5; ++g) {
    const long m = 256 * (g + 1);
    reg.upsert_group(test_group(m, 512, 512, g == 4 ? "eval" : "train"));
    const std::string key = group_key(m, 512, 512, Layout::tn);
    for (size_t k = 0; k < kKernels; ++k) rows.push_back(test_row(run, key, tn[k].id(), "ok", 10.0 + k));
    rows.push_back(test_row(run, key, tn[kKernels].id(), "cut", 500.0));
    rows.push_back(test_row(run, key, "cublas", "ok", 9.0));
  }
  reg.upsert_group(test_group(512, 512, 512, "train", Layout::nt));
  for (size_t k = 0; k < 5; ++k)
    rows.push_back(test_row(run, group_key(512, 512, 512, Layout::nt), nt[k].id(), "ok", 10.0 + k));
  reg.insert_measurements(rows);
}

std::set<std::string> kernels_of(const Plan& p) {
  std::set<std::string> ids;
  for (const auto& g : p.groups)
    for (const auto& c : g.candidates) ids.insert(c.first);
  return ids;
}

size_t rows_of(const Plan& p) {
  size_t n = 0;
  for (const auto& g : p.groups) n += g.candidates.size();
  return n;
}

// The registry above, written once per test and opened read-only.
class PlanRemeasure : public ::testing::Test {
 protected:
  static RegistryOptions existing() {
    RegistryOptions o;
    o.create = false;
    return o;
  }
  ScratchDir dir;
  const std::string path = [this] {
    write_registry(dir.file("r.db"));
    return dir.file("r.db");
  }();
  const Registry reg{path, existing()};
};

}  // namespace

TEST_F(PlanRemeasure, SeededSampleOfOkKernelRows) {
  RemeasureOptions o;
  o.fraction = 0.1;  // of the 55 ok kernel rows: ceil(5.5) = 6
  o.seed = 3;
  const Plan p = make_remeasure_plan(reg, o);
  EXPECT_EQ(rows_of(p), 6u);
  const auto ids = kernels_of(p);
  EXPECT_FALSE(ids.count("cublas"));
  EXPECT_FALSE(ids.count(Catalogue::get(Layout::tn).kernels()[kKernels].id())) << "a cut row was drawn";
  const auto header = nlohmann::json::parse(p.header_json);
  EXPECT_EQ(header["ok_rows_in_source"], 55);
  EXPECT_EQ(header["rows"], 6);
  // The same seed draws the same rows; another seed other rows.
  const Plan again = make_remeasure_plan(reg, o);
  ASSERT_EQ(again.groups.size(), p.groups.size());
  for (size_t g = 0; g < p.groups.size(); ++g) EXPECT_EQ(again.groups[g].candidates, p.groups[g].candidates);
  o.seed = 4;
  const Plan other = make_remeasure_plan(reg, o);
  bool differs = other.groups.size() != p.groups.size();
  for (size_t g = 0; !differs && g < p.groups.size(); ++g)
    differs = other.groups[g].candidates != p.groups[g].candidates;
  EXPECT_TRUE(differs);

  // Filters: layouts and set; --min-rows raises the count up to what is eligible.
  o.layouts = {Layout::nt};
  o.min_rows = 100;
  const Plan nt = make_remeasure_plan(reg, o);
  ASSERT_EQ(nt.groups.size(), 1u);
  EXPECT_EQ(nt.groups[0].group.layout, Layout::nt);
  EXPECT_EQ(rows_of(nt), 5u) << "every eligible NT row, fewer than wanted";
  o.layouts = {Layout::tn};
  o.set = "eval";
  o.min_rows = 0;
  o.fraction = 1;
  const Plan ev = make_remeasure_plan(reg, o);
  ASSERT_EQ(ev.groups.size(), 1u);
  EXPECT_EQ(ev.groups[0].group.set, "eval");
  EXPECT_EQ(rows_of(ev), kKernels);

  o.fraction = 0;
  EXPECT_THROW(make_remeasure_plan(reg, o), Error);
  o.fraction = 0.5;
  o.set = "proof";
  EXPECT_THROW(make_remeasure_plan(reg, o), Error);
}

TEST_F(PlanRemeasure, TwoStageSampleDrawsKernelsFirst) {
  RemeasureOptions o;
  o.layouts = {Layout::tn};
  o.min_rows = 12;
  o.kernels = 3;
  o.seed = 9;
  const Plan p = make_remeasure_plan(reg, o);
  const auto ids = kernels_of(p);
  EXPECT_EQ(ids.size(), 3u) << "3 kernels x 5 groups hold 15 rows; 12 drawn leave out 3, fewer than a kernel's 5";
  EXPECT_EQ(rows_of(p), 12u);
  EXPECT_EQ(nlohmann::json::parse(p.header_json)["kernels"], 3);
  // The kernels depend on the seed only, not on how many rows are drawn from them.
  o.min_rows = 15;
  EXPECT_EQ(kernels_of(make_remeasure_plan(reg, o)), ids);
  EXPECT_EQ(rows_of(make_remeasure_plan(reg, o)), 15u) << "all rows of the 3 kernels";
  // More kernels asked than there are: all of them.
  o.kernels = 50;
  o.min_rows = 1000;
  EXPECT_EQ(kernels_of(make_remeasure_plan(reg, o)).size(), kKernels);
}

TEST_F(PlanRemeasure, CliWritesThePlanOrOneErrorLine) {
  const CliResult r = run_cks("plan remeasure --registry " + path +
                              " --layouts tn --kernels 2 --min-rows 4 --seed 1 --out " + dir.file("rep.jsonl"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const Plan p = read_plan(dir.file("rep.jsonl"));
  EXPECT_EQ(rows_of(p), 4u);
  EXPECT_LE(kernels_of(p).size(), 2u);
  const CliResult bad = run_cks("plan remeasure --registry " + path + " --fraction 2 --out " +
                                dir.file("x.jsonl"));
  EXPECT_NE(bad.exit_code, 0);
  EXPECT_EQ(bad.err.rfind("cks: error: ", 0), 0u) << bad.err;
  EXPECT_NE(bad.err.find("--fraction"), std::string::npos) << bad.err;
}
