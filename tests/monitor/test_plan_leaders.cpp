// `cks plan leaders` on a real registry: the fastest kernels of each group get every runtime-knob
// variant of the catalogue, less what the group already measured; set, layout and top filters;
// the CLI's plan file and one-line errors.
#include <gtest/gtest.h>

#include <set>

#include "cks/plan.hpp"
#include "cks/registry.hpp"
#include "registry/registry_test_util.hpp"
#include "shapes/cli_run.hpp"

using namespace cks;
using namespace cks::test;

namespace {

// A TN kernel of the catalogue with at least `variants` runtime-knob candidates, the i-th such.
const KernelDesc& kernel_with_variants(size_t i, size_t variants) {
  const Catalogue& cat = Catalogue::get(Layout::tn);
  std::vector<size_t> count(cat.kernels().size());
  for (const Candidate& c : cat.candidates()) ++count[c.kernel];
  for (size_t k = 0; k < count.size(); ++k)
    if (count[k] >= variants && i-- == 0) return cat.kernels()[k];
  throw Error("test: no such kernel");
}

std::vector<std::string> knobs_of(const KernelDesc& k) {
  const Catalogue& cat = Catalogue::get(Layout::tn);
  const uint32_t index = *cat.find(k.id());
  std::vector<std::string> out;
  for (const Candidate& c : cat.candidates())
    if (c.kernel == index) out.push_back(c.knobs.canonical());
  return out;
}

// Eval group E (TN): kernels A, B, C at 100, 90, 80 TFLOP/s (A also measured at a second knob
// variant, slower), D cut. Train group T (TN): kernel C only. Eval group N (NT): one NT kernel.
void write_registry(const std::string& path, const KernelDesc& a, const KernelDesc& b, const KernelDesc& c,
                    const KernelDesc& d) {
  Registry reg(path);
  const std::string run = reg.begin_run(test_run());
  GroupInfo e = test_group(1000, 2000, 3000, "eval");
  e.policy = "exhaustive";
  reg.upsert_group(e);
  reg.upsert_group(test_group(500, 600, 700, "train"));
  reg.upsert_group(test_group(1000, 2000, 3000, "eval", Layout::nt));
  const std::string E = group_key(1000, 2000, 3000, Layout::tn), T = group_key(500, 600, 700, Layout::tn),
                    N = group_key(1000, 2000, 3000, Layout::nt);
  auto ok = [&](const std::string& g, const KernelDesc& k, double tflops, const std::string& knobs = "") {
    MeasurementRow r = test_row(run, g, k.id(), "ok", 10.0);
    r.tflops = tflops;
    if (!knobs.empty()) r.knobs = knobs;
    return r;
  };
  std::vector<MeasurementRow> rows{ok(E, a, 100), ok(E, a, 50, knobs_of(a)[1]), ok(E, b, 90), ok(E, c, 80),
                                   test_row(run, E, d.id(), "cut", 500.0), test_row(run, E, "cublas", "ok", 9.0),
                                   ok(T, c, 70)};
  rows.push_back(ok(N, Catalogue::get(Layout::nt).kernels()[0], 60));
  reg.insert_measurements(rows);
}

}  // namespace

TEST(PlanLeaders, EveryKnobVariantOfTheFastestKernelsLessWhatWasMeasured) {
  ScratchDir dir;
  const KernelDesc &a = kernel_with_variants(0, 3), &b = kernel_with_variants(1, 3), &c = kernel_with_variants(2, 3),
                   &d = kernel_with_variants(3, 3);
  write_registry(dir.file("r.db"), a, b, c, d);
  RegistryOptions ro;
  ro.create = false;
  const Registry reg(dir.file("r.db"), ro);

  LeadersOptions o;
  o.top = 2;
  o.layouts = {Layout::tn};
  const Plan p = make_leaders_plan(reg, o);
  ASSERT_EQ(p.groups.size(), 1u) << "the TN eval group only (train and NT left out)";
  const PlanGroup& g = p.groups[0];
  EXPECT_EQ(g.group.key, group_key(1000, 2000, 3000, Layout::tn));
  EXPECT_EQ(g.group.set, "eval");
  EXPECT_EQ(g.group.policy, "exhaustive") << "the registry's group identity";
  // A and B lead (C is third; D was cut); every variant of each except the measured ones.
  std::set<CandidateRef> expected;
  for (const KernelDesc* k : {&a, &b})
    for (const std::string& knobs : knobs_of(*k)) expected.insert({k->id(), knobs});
  expected.erase({a.id(), RuntimeKnobs{}.canonical()});
  expected.erase({a.id(), knobs_of(a)[1]});
  expected.erase({b.id(), RuntimeKnobs{}.canonical()});
  EXPECT_EQ(std::set<CandidateRef>(g.candidates.begin(), g.candidates.end()), expected);
  EXPECT_EQ(g.candidates.size(), expected.size()) << "no candidate twice";
  EXPECT_NE(p.header_json.find(R"("policy":"leaders")"), std::string::npos);

  // Every set and layout: the train group and the NT group too.
  o.set = "";
  o.layouts = {};
  o.top = 8;
  const Plan all = make_leaders_plan(reg, o);
  std::set<std::string> keys;
  for (const auto& pg : all.groups) keys.insert(pg.group.key + "/" + pg.group.set);
  EXPECT_EQ(keys.size(), 3u);

  o.top = 0;
  EXPECT_THROW(make_leaders_plan(reg, o), Error);
  o.top = 4;
  o.set = "proof";
  EXPECT_THROW(make_leaders_plan(reg, o), Error);
}

TEST(PlanLeaders, CliWritesAPlanCollectCanRead) {
  ScratchDir dir;
  write_registry(dir.file("r.db"), kernel_with_variants(0, 3), kernel_with_variants(1, 3), kernel_with_variants(2, 3),
                 kernel_with_variants(3, 3));
  const CliResult r = run_cks("plan leaders --registry " + dir.file("r.db") + " --top 1 --layouts tn --out " + dir.file("l.jsonl"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("cks plan leaders: "), std::string::npos) << r.err;
  const Plan p = read_plan(dir.file("l.jsonl"));
  ASSERT_EQ(p.groups.size(), 1u);
  // Kernel A's variants less the two measured (the default knobs, when the catalogue has them).
  std::set<std::string> left;
  for (const std::string& k : knobs_of(kernel_with_variants(0, 3))) left.insert(k);
  left.erase(knobs_of(kernel_with_variants(0, 3))[1]);
  left.erase(RuntimeKnobs{}.canonical());
  EXPECT_EQ(p.groups[0].candidates.size(), left.size());
  const CliResult bad = run_cks("plan leaders --registry " + dir.file("r.db") + " --top 0 --out " + dir.file("x.jsonl"));
  EXPECT_NE(bad.exit_code, 0);
  EXPECT_EQ(bad.err, "cks: error: --top must be at least 1\n");
}
