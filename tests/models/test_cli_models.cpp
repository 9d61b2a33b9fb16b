// `cks train`, `cks eval`, `cks select` as a user runs them: the built binary on a synthetic
// registry, and the one-line error contract.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <algorithm>
#include <fstream>
#include <set>
#include <nlohmann/json.hpp>

#include "models/synthetic.hpp"
#include "shapes/cli_run.hpp"

using namespace cks;
using test::run_cks;

namespace {

void expect_error(const std::string& args, const std::string& mentions) {
  const test::CliResult r = run_cks(args);
  EXPECT_NE(r.exit_code, 0) << args;
  EXPECT_EQ(r.err.rfind("cks: error: ", 0), 0u) << args << " -> " << r.err;
  EXPECT_NE(r.err.find(mentions), std::string::npos) << args << " -> " << r.err;
  EXPECT_TRUE(r.out.empty()) << args;
}

// A registry with 12 training and 4 evaluation groups, built once.
const std::string& registry() {
  static test::ScratchDir dir;
  static const std::string path = [] {
    auto groups = test::synthetic_shapes(16, 21, "train");
    for (size_t i = 12; i < groups.size(); ++i) groups[i].set = "eval";
    test::write_synthetic_registry(dir.file("syn.db"), groups, 60, 21);
    return dir.file("syn.db");
  }();
  return path;
}

}  // namespace

TEST(ModelsCli, SelectWithoutAModelSaysSo) {
  setenv("CKS_MODEL", "/nonexistent/default.json", 1);
  expect_error("select --m 4096 --n 4096 --k 4096 --layout tn", "no default model");
  const test::CliResult r = run_cks("select --m 4096 --n 4096 --k 4096 --layout tn --fallback static --top 3 --format json");
  unsetenv("CKS_MODEL");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  ASSERT_EQ(j.size(), 3u);
  EXPECT_EQ(j[0]["rank"], 1);
  EXPECT_EQ(j[0]["kernel_id"].get<std::string>().size(), 17u);
  EXPECT_NE(j[0]["cutlass_type"].get<std::string>().find("GemmUniversal"), std::string::npos);
  EXPECT_NE(r.err.find("static score"), std::string::npos);
}

TEST(ModelsCli, FallbackStaticRanksByTheStaticScoreEvenWithAModel) {
  // The shipped model exists: --fallback static must still rank by the static score, exactly as
  // without a model.
  const std::string args = "select --m 4096 --n 1024 --k 2048 --layout tn --fallback static --top 5 --format csv";
  setenv("CKS_MODEL", (std::string(CKS_SOURCE_DIR) + "/models/default.json").c_str(), 1);
  const test::CliResult with_model = run_cks(args);
  setenv("CKS_MODEL", "/nonexistent/default.json", 1);
  const test::CliResult without = run_cks(args);
  unsetenv("CKS_MODEL");
  ASSERT_EQ(with_model.exit_code, 0) << with_model.err;
  ASSERT_EQ(without.exit_code, 0) << without.err;
  EXPECT_EQ(with_model.out, without.out);
  EXPECT_NE(with_model.err.find("static score"), std::string::npos);
  expect_error("select --m 64 --n 64 --k 64 --layout tn --fallback static --model models/default.json",
               "--fallback static ranks without a model");
}

// --nondeterministic: the same ranking, stream-K picks with ",x=n" (the static score ranks stream-K
// kernels first in this few-tile, large-K problem), the others as they are, and a note on stderr.
TEST(ModelsCli, NondeterministicMarksStreamKPicksOnly) {
  const std::string args = "select --m 64 --n 256 --k 8192 --layout tn --fallback static --top 40 --format json";
  const test::CliResult det = run_cks(args);
  const test::CliResult nd = run_cks(args + " --nondeterministic");
  ASSERT_EQ(det.exit_code, 0) << det.err;
  ASSERT_EQ(nd.exit_code, 0) << nd.err;
  const auto a = nlohmann::json::parse(det.out), b = nlohmann::json::parse(nd.out);
  ASSERT_EQ(a.size(), b.size());
  size_t stream_k = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    EXPECT_EQ(a[i]["kernel_id"], b[i]["kernel_id"]);
    EXPECT_EQ(a[i]["score"], b[i]["score"]);
    const std::string knobs = a[i]["knobs"];
    EXPECT_EQ(knobs.find("x=n"), std::string::npos);
    if (a[i]["canonical"].get<std::string>().find("+stream_k") != std::string::npos) {
      ++stream_k;
      EXPECT_EQ(b[i]["knobs"], knobs + ",x=n");
    } else {
      EXPECT_EQ(b[i]["knobs"], knobs);
    }
  }
  EXPECT_GT(stream_k, 0u);
  EXPECT_NE(nd.err.find("nondeterministic reduction"), std::string::npos);
  EXPECT_EQ(det.err.find("nondeterministic reduction"), std::string::npos);
}

TEST(ModelsCli, BadInputIsOneClearErrorLine) {
  expect_error("select --m 0 --n 64 --k 64 --layout tn --fallback static", "M must be positive");
  expect_error("select --m 64 --n 64 --k 64 --layout xy --fallback static", "unknown layout 'xy'");
  expect_error("select --m 64 --n 64 --k 64 --layout tn --top 0 --fallback static", "--top must be >= 1");
  expect_error("select --m 64 --n 64 --k 64 --layout tn --fallback dynamic", "unknown --fallback");
  expect_error("select --m 64 --n 64 --k 64 --layout tn --model /nonexistent.json", "cannot read model file");
  expect_error("train --registry /nonexistent.db --out /tmp/x.json", "no registry");
  expect_error("train --data /tmp --out /tmp/x.json", "no shards");
  expect_error("train --registry " + registry() + " --out /tmp/x.json --model forest", "unknown model kind 'forest'");
  expect_error("train --registry " + registry() + " --out /tmp/x.json --objective rank:map", "unknown objective");
  expect_error("eval --registry " + registry() + " --model nothing", "neither a model file nor a model spec");
  expect_error("eval --registry " + registry() + " --model ridge --groups holdout", "unknown --groups");
  expect_error("eval --registry " + registry() + " --model ridge --per-group /nonexistent/dir/x.csv",
               "cannot write --per-group file");
  expect_error("train --registry " + registry() + " --out /tmp/x.json --train-layouts tn,qq", "unknown layout 'qq'");
  // The synthetic training groups are all TN.
  expect_error("train --registry " + registry() + " --out /tmp/x.json --train-layouts nt,tt", "of --train-layouts");
  expect_error("eval --registry " + registry() + " --model ridge --groups cv --train-layouts nt", "of --train-layouts");
  expect_error("select --m 64 --n 64 --k 64 --layout tn --fallback static --prior-mode local", "--prior-mode: 'local'");
  expect_error("select --m 64 --n 64 --k 64 --layout tn --fallback static --prior-problems 64x64", "'64x64' is not MxNxK");
  expect_error("select --m 64 --n 64 --k 64 --layout tn --fallback static --prior-problems 64x0x64", "'64x0x64' is not MxNxK");
}

TEST(ModelsCli, TrainEvalSelectRoundTrip) {
  test::ScratchDir dir;
  const std::string model = dir.file("models/ridge.json");
  const test::CliResult t = run_cks("train --registry " + registry() + " --model ridge --out " + model + " --format json");
  ASSERT_EQ(t.exit_code, 0) << t.err;
  const auto tj = nlohmann::json::parse(t.out);
  EXPECT_EQ(tj[0]["groups"], 12);
  EXPECT_EQ(tj[0]["eval_groups_held_out"], 4);
  const size_t all_rows = tj[0]["rows"];
  // --train-layouts keeps the training groups of those layouts (here: all of them).
  const test::CliResult tl = run_cks("train --registry " + registry() + " --model ridge --train-layouts nt,tn --out " +
                                     dir.file("models/tn.json") + " --format json");
  ASSERT_EQ(tl.exit_code, 0) << tl.err;
  EXPECT_EQ(nlohmann::json::parse(tl.out)[0]["groups"], 12);

  // --max-candidates: at most C rows per training group (the best --keep-top plus a seeded
  // random rest), recorded in the model's provenance.
  const std::string capped = dir.file("models/capped.json");
  const test::CliResult c =
      run_cks("train --registry " + registry() + " --model ridge --max-candidates 20 --keep-top 4 --out " + capped +
              " --format json");
  ASSERT_EQ(c.exit_code, 0) << c.err;
  EXPECT_EQ(nlohmann::json::parse(c.out)[0]["rows"], 12 * 20) << "every synthetic group has more than 20 rows";
  EXPECT_LT(12u * 20u, all_rows);
  EXPECT_NE(c.err.find("at most 20 per group"), std::string::npos) << c.err;
  std::ifstream in(capped);
  const auto cj = nlohmann::json::parse(in);
  ASSERT_TRUE(cj.contains("provenance")) << "model file layout";
  const auto& cap = cj["provenance"]["candidate_cap"];
  EXPECT_EQ(cap["max_candidates"], 20);
  EXPECT_EQ(cap["keep_top"], 4);
  EXPECT_EQ(cap["rows_measured"], all_rows);

  const std::string per_group = dir.file("per_group.csv");
  const test::CliResult e =
      run_cks("eval --registry " + registry() + " --model " + model + " --format json --per-group " + per_group);
  ASSERT_EQ(e.exit_code, 0) << e.err;
  const auto ej = nlohmann::json::parse(e.out);
  {
    // --per-group: a header, then one row per method and evaluation group (4).
    std::ifstream pg(per_group);
    std::string header, line;
    std::getline(pg, header);
    EXPECT_EQ(header.rfind("method,group,set,layout,m,n,k,covered,regret,", 0), 0u) << header;
    size_t rows = 0, model_rows = 0;
    while (std::getline(pg, line)) {
      ++rows;
      if (line.rfind("ridge squared,", 0) == 0) {
        ++model_rows;
        EXPECT_NE(line.find(",eval,tn,"), std::string::npos) << line;
      }
    }
    size_t methods_all = 0;
    for (const auto& row : ej) methods_all += row["slice"] == "all";
    EXPECT_EQ(rows, 4 * methods_all);
    EXPECT_EQ(model_rows, 4u);
  }
  std::vector<std::string> methods;
  for (const auto& row : ej)
    if (row["slice"] == "all") methods.push_back(row["method"]);
  for (const char* m : {"ridge squared", "best-single-config", "static-score", "random", "nvmmh", "cublas"})
    EXPECT_NE(std::find(methods.begin(), methods.end(), m), methods.end()) << m;
  for (const auto& row : ej)
    if (row["method"] == "ridge squared" && row["slice"] == "all") {
      EXPECT_EQ(row["groups"], 4);
      EXPECT_GE(row["regret_mean"].get<double>(), 0.0);
      EXPECT_LE(row["top16_regret"].get<double>(), row["top1_regret"].get<double>());
    }

  const test::CliResult cv = run_cks("eval --registry " + registry() +
                                     " --model ridge --groups cv --folds 3 --no-nvmmh --format csv");
  ASSERT_EQ(cv.exit_code, 0) << cv.err;
  EXPECT_NE(cv.out.find("3-fold CV grouped by shape"), std::string::npos);

  // The deployed two-stage pick out of fold: one row per P over every training group.
  const test::CliResult cvp = run_cks("eval --registry " + registry() +
                                      " --model ridge --groups cv --folds 3 --prefilter 64 --no-baselines --format json");
  ASSERT_EQ(cvp.exit_code, 0) << cvp.err;
  bool saw = false;
  for (const auto& row : nlohmann::json::parse(cvp.out))
    if (row["method"] == "ridge squared prefilter=64 evidence=16:4" && row["slice"] == "all") {
      saw = true;
      EXPECT_EQ(row["groups"], 12);
      EXPECT_NE(row["note"].get<std::string>().find("prefilter 64"), std::string::npos) << row["note"];
    }
  EXPECT_TRUE(saw) << cvp.out;

  const test::CliResult s = run_cks("select --m 1024 --n 1024 --k 1024 --layout tn --top 2 --model " + model +
                                    " --format csv");
  ASSERT_EQ(s.exit_code, 0) << s.err;
  EXPECT_EQ(test::count_lines(s.out), 3u);  // header + 2
  EXPECT_NE(s.out.find("cutlass_type"), std::string::npos);
  EXPECT_EQ(s.err.find("trained on no"), std::string::npos) << s.err;
  // A layout the model has no training group of: ranked, with a note on stderr.
  const test::CliResult tt = run_cks("select --m 1024 --n 1024 --k 1024 --layout tt --top 2 --model " + model);
  ASSERT_EQ(tt.exit_code, 0) << tt.err;
  EXPECT_NE(tt.err.find("cks: note: the model was trained on no tt groups"), std::string::npos) << tt.err;

  // md: a readable table; the CUTLASS type only with --cutlass-type, as code blocks below it.
  const test::CliResult md = run_cks("select --m 1024 --n 1024 --k 1024 --layout tn --top 2 --model " + model +
                                     " --format md --exhaustive --timing");
  ASSERT_EQ(md.exit_code, 0) << md.err;
  EXPECT_EQ(md.out.find("cutlass_type"), std::string::npos);
  EXPECT_EQ(md.out.find("GemmUniversal"), std::string::npos);
  EXPECT_NE(md.err.find("[exhaustive; both orientations (M <= 256; tn, nn, tt; or M > 4096 with N <= 512; or M > 256 with N <= 512 and K <= 4096); sliced-K rule (<= 8 64x64 tiles, M <= 128, K >= 6144; tiles x slices <= 96, K / slices >= 512)]"), std::string::npos) << md.err;
  EXPECT_NE(md.err.find("cold select"), std::string::npos) << md.err;
  const test::CliResult typed = run_cks("select --m 1024 --n 1024 --k 1024 --layout tn --top 2 --model " + model +
                                        " --format md --cutlass-type --prefilter 500");
  ASSERT_EQ(typed.exit_code, 0) << typed.err;
  EXPECT_NE(typed.out.find("```cpp\n"), std::string::npos);
  EXPECT_NE(typed.out.find("GemmUniversal"), std::string::npos);
  expect_error("select --m 64 --n 64 --k 64 --layout tn --model " + model + " --prefilter 10 --exhaustive", "excludes");

  // The prefilter's effect on the evaluation groups: one more row, with the comparison in its note.
  const test::CliResult pe = run_cks("eval --registry " + registry() + " --model " + model +
                                     " --no-baselines --prefilter 300 --format json");
  ASSERT_EQ(pe.exit_code, 0) << pe.err;
  bool found = false;
  for (const auto& row : nlohmann::json::parse(pe.out))
    if (row["method"] == "ridge squared prefilter=300 evidence=16:4" && row["slice"] == "all") {
      found = true;
      EXPECT_NE(row["note"].get<std::string>().find("= exhaustive in"), std::string::npos);
    }
  EXPECT_TRUE(found) << pe.out;
  expect_error("eval --registry " + registry() + " --model ridge --groups cv --prefilter 0", "--prefilter values must be >= 1");

  const test::CliResult b = run_cks("bench select --model " + model + " --layouts tn --problems 3 --cached 10 --format json");
  ASSERT_EQ(b.exit_code, 0) << b.err;
  const auto bj = nlohmann::json::parse(b.out);
  ASSERT_EQ(bj.size(), 1u);
  EXPECT_EQ(bj[0]["problems"], 3);
  EXPECT_GT(bj[0]["cold_ms_mean"].get<double>(), 0.0);
  expect_error("eval --registry " + registry() + " --model " + model + " --groups cv --folds 40", "distinct shapes");
}

TEST(ModelsCli, EvalLeavesOutUnfinishedEvaluationGroupsAndOtherLayouts) {
  test::ScratchDir dir;
  const std::string model = dir.file("ridge.json");
  ASSERT_EQ(run_cks("train --registry " + registry() + " --model ridge --out " + model).exit_code, 0);
  auto groups_of = [](const std::string& out) {
    for (const auto& row : nlohmann::json::parse(out))
      if (row["slice"] == "all") return row["groups"].get<int>();
    return -1;
  };
  // Every synthetic evaluation group has 60 measured candidates.
  const test::CliResult all = run_cks("eval --registry " + registry() + " --model " + model +
                                      " --no-baselines --min-eval-candidates 60 --format json");
  ASSERT_EQ(all.exit_code, 0) << all.err;
  EXPECT_EQ(groups_of(all.out), 4);
  const test::CliResult tn = run_cks("eval --registry " + registry() + " --model " + model +
                                     " --no-baselines --layouts tn --format json");
  ASSERT_EQ(tn.exit_code, 0) << tn.err;
  EXPECT_EQ(groups_of(tn.out), 4);  // the synthetic groups are all tn
  expect_error("eval --registry " + registry() + " --model " + model + " --no-baselines --layouts nt",
               "match --layouts / --min-eval-candidates");
  const test::CliResult few = run_cks("eval --registry " + registry() + " --model " + model +
                                      " --no-baselines --min-eval-candidates 61 --format json");
  EXPECT_NE(few.exit_code, 0);
  EXPECT_NE(few.err.find("has 60 measured candidates (< 61): left out"), std::string::npos) << few.err;
  expect_error("eval --registry " + registry() + " --model " + model + " --layouts xy", "unknown layout 'xy'");
}

// Evidence on the command line: `cks train --evidence-only` adds it to a model file that lacks
// it; `cks eval --prefilter P --evidence-arms G:T` adds one row per arm, in CV from each fold's
// training groups; malformed arms are one clear error.
TEST(ModelsCli, EvidenceOnlyAndEvidenceArms) {
  test::ScratchDir dir;
  const std::string model = dir.file("m.json"), with = dir.file("with.json");
  ASSERT_EQ(run_cks("train --registry " + registry() + " --model ridge --out " + model).exit_code, 0);
  {
    auto m = Model::load(model);
    EXPECT_EQ(m->info().evidence.groups.size(), 12u) << "cks train records the training groups' leaders";
    m->info().evidence = {};
    m->save(model);
  }
  const test::CliResult e = run_cks("train --registry " + registry() + " --evidence-only " + model + " --out " + with);
  ASSERT_EQ(e.exit_code, 0) << e.err;
  EXPECT_NE(e.err.find("evidence of 12 training groups"), std::string::npos) << e.err;
  EXPECT_EQ(Model::load(with)->info().evidence.groups.size(), 12u);
  const test::CliResult sel = run_cks("select --m 1024 --n 1024 --k 1024 --layout tn --top 2 --evidence-groups 4 --model " +
                                      with + " --format json");
  ASSERT_EQ(sel.exit_code, 0) << sel.err;

  const test::CliResult cv = run_cks("eval --registry " + registry() + " --model ridge --groups cv --folds 3 --prefilter 64 " +
                                     "--evidence-groups 0 --evidence-arms 2:3,4:1 --no-baselines --format json");
  ASSERT_EQ(cv.exit_code, 0) << cv.err;
  std::set<std::string> methods;
  for (const auto& row : nlohmann::json::parse(cv.out))
    if (row["slice"] == "all") methods.insert(row["method"].get<std::string>());
  EXPECT_TRUE(methods.count("ridge squared prefilter=64")) << cv.out;
  EXPECT_TRUE(methods.count("ridge squared prefilter=64 evidence=2:3")) << cv.out;
  EXPECT_TRUE(methods.count("ridge squared prefilter=64 evidence=4:1")) << cv.out;
  for (const char* bad : {"2", "2:", ":3", "a:3", "0:3", "2:0", "2:3:4"})
    expect_error("eval --registry " + registry() + " --model ridge --groups cv --folds 3 --prefilter 64 --evidence-arms " +
                     bad,
                 "--evidence-arms");
  expect_error("eval --registry " + registry() + " --model ridge --groups cv --folds 3 --evidence-arms 2:3",
               "--evidence-arms needs --prefilter");
}
