// The training options added for hyper-parameter tuning (issue 6, docs/hpo.md): feature sets
// (masked columns left out of training, recorded in the model file and never read at
// inference), XGBoost early stopping (deterministic), the cross-validation subsamples, the
// model-file compatibility of the defaults, and a smoke run of scripts/hpo/tune.py.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>

#include "models/rankers.hpp"
#include "models/synthetic.hpp"
#include "shapes/cli_run.hpp"

using namespace cks;

namespace {

// 16 training + 4 evaluation groups of 120 candidates, built once.
const Dataset& data() {
  static test::ScratchDir dir;
  static const Dataset d = test::synthetic_dataset(dir.file("hpo.db"), 16, 4, 120, 17);
  return d;
}
const Dataset& train_part() {
  static const Dataset d = data().subset(data().train_groups());
  return d;
}

std::vector<float> scores_of(const Model& m, const FeatureMatrix& x) {
  std::vector<float> s(x.rows);
  m.predict(x, s);
  return s;
}

// x with every column outside `kept` overwritten by garbage (NaN, huge, negative codes).
FeatureMatrix scramble(const FeatureMatrix& x, const std::vector<bool>& kept) {
  FeatureMatrix y = x;
  for (size_t r = 0; r < y.rows; ++r)
    for (size_t c = 0; c < y.cols; ++c)
      if (!kept[c]) y.row(r)[c] = (r + c) % 3 == 0 ? std::numeric_limits<float>::quiet_NaN() : (r % 2 ? 1e9f : -7.0f);
  return y;
}

}  // namespace

TEST(HpoFeatureSets, CanonicalNamesAndFamilies) {
  EXPECT_EQ(canonical_feature_set("full"), "full");
  EXPECT_EQ(canonical_feature_set(""), "full");
  EXPECT_EQ(canonical_feature_set("arch+core"), "core+arch");
  EXPECT_EQ(canonical_feature_set("core+arch+fill+core"), "core+arch+fill");
  EXPECT_EQ(canonical_feature_set("core+arch+waves+intensity+smem+balance+fill+estimate"), "full");
  EXPECT_THROW(canonical_feature_set("core+cache"), Error);
  EXPECT_THROW(canonical_feature_set("core+"), Error);

  const FeatureSchema& s = FeatureSchema::get();
  std::set<std::string_view> seen;
  for (size_t c = 0; c < s.size(); ++c) seen.insert(feature_family(c));  // every column has a family
  EXPECT_EQ(seen.size(), feature_families().size());
  auto family = [&](const char* name) { return std::string(feature_family(s.index(name))); };
  EXPECT_EQ(family("m"), "core");
  EXPECT_EQ(family("tile_m"), "core");
  EXPECT_EQ(family("mainloop"), "core");
  EXPECT_EQ(family("splits"), "core");
  EXPECT_EQ(family("raster"), "core");
  EXPECT_EQ(family("swizzle_eff"), "waves");
  EXPECT_EQ(family("hw_sm_count"), "arch");
  EXPECT_EQ(family("edge_m"), "waves");
  EXPECT_EQ(family("wave_eff"), "waves");
  EXPECT_EQ(family("cluster_fill_m"), "waves");
  EXPECT_EQ(family("multicast_load_ratio"), "intensity");
  EXPECT_EQ(family("working_set_llc"), "intensity");
  EXPECT_EQ(family("b_res"), "smem");
  EXPECT_EQ(family("f_smem"), "smem");
  EXPECT_EQ(family("acc_regs_per_thread"), "smem");
  EXPECT_EQ(family("consumer_producer_ratio"), "balance");
  EXPECT_EQ(family("pipeline_fill"), "fill");
  EXPECT_EQ(family("est_efficiency"), "estimate");

  const auto core = feature_mask("core");
  const auto full = feature_mask("full");
  EXPECT_EQ(std::count(full.begin(), full.end(), true), static_cast<long>(s.size()));
  EXPECT_TRUE(core[s.index("k")]);
  EXPECT_FALSE(core[s.index("hw_sm_count")]);
  EXPECT_FALSE(core[s.index("waves")]);
}

TEST(HpoOptions, DefaultOptionsKeepTheModelFileFormat) {
  // A default model's options carry none of the tuning keys (its bytes stay as before).
  const nlohmann::json j = TrainOptions{}.to_json();
  for (const char* key : {"features", "l1", "gamma", "max_cat_to_onehot", "early_stopping", "relevance_bands",
                          "num_pairsample", "dropout", "weight_decay", "batch_rows", "top_weight"})
    EXPECT_FALSE(j.contains(key)) << key;
  TrainOptions o;
  o.features = "core+arch";
  o.l1 = 0.5;
  o.early_stopping = 7;
  o.dropout = 0.25;
  o.batch_rows = 512;
  const TrainOptions back = TrainOptions::from_json(o.to_json());
  EXPECT_EQ(back.features, "core+arch");
  EXPECT_EQ(back.l1, 0.5);
  EXPECT_EQ(back.early_stopping, 7);
  EXPECT_EQ(back.dropout, 0.25);
  EXPECT_EQ(back.batch_rows, 512);
}

// --top-weight P (reg:squarederror): rows weigh y^P, recorded in the model file; it changes the trees,
// is deterministic, and a ranking objective or a bad P is one clear error.
TEST(HpoTopWeight, WeighsTheTopRowsAndIsRecorded) {
  if (!models_detail::xgboost_library_available()) GTEST_SKIP() << "libxgboost not installed";
  TrainOptions o;
  o.objective = "reg:squarederror";
  o.rounds = 20;
  o.max_depth = 4;
  o.threads = 1;
  const auto plain = train_model(train_part(), o);
  o.top_weight = 4;
  const auto weighted = train_model(train_part(), o);
  EXPECT_EQ(nlohmann::json::parse(weighted->serialize())["options"]["top_weight"], 4.0);
  EXPECT_FALSE(nlohmann::json::parse(plain->serialize())["options"].contains("top_weight"));
  EXPECT_NE(scores_of(*weighted, data().x), scores_of(*plain, data().x));
  EXPECT_EQ(train_model(train_part(), o)->serialize(), weighted->serialize());
  EXPECT_EQ(TrainOptions::from_json(o.to_json()).top_weight, 4.0);
  o.objective = "rank:ndcg";
  EXPECT_THROW(
      {
        try {
          train_model(train_part(), o);
        } catch (const Error& e) {
          EXPECT_STREQ(e.what(), "--top-weight applies to --objective reg:squarederror only (got rank:ndcg)");
          throw;
        }
      },
      Error);
  o.objective = "reg:squarederror";
  o.top_weight = -1;
  EXPECT_THROW(train_model(train_part(), o), Error);
}

TEST(HpoFeatureSets, XgboostMaskIsRecordedAndApplied) {
  if (!models_detail::xgboost_library_available()) GTEST_SKIP() << "libxgboost not installed";
  TrainOptions o;
  o.rounds = 25;
  o.max_depth = 4;
  o.threads = 1;
  o.features = "waves+core";  // canonicalised
  const auto model = train_model(train_part(), o);
  const auto kept = feature_mask("core+waves");
  const nlohmann::json file = nlohmann::json::parse(model->serialize());
  EXPECT_EQ(file["options"]["features"], "core+waves");
  ASSERT_TRUE(file["parameters"].contains("columns"));
  EXPECT_EQ(file["parameters"]["features"].get<size_t>(), static_cast<size_t>(std::count(kept.begin(), kept.end(), true)));
  for (const auto& name : file["parameters"]["columns"]) EXPECT_TRUE(kept[FeatureSchema::get().index(name.get<std::string>())]);

  // Inference reads only the kept columns, natively and through libxgboost, also after a reload.
  const FeatureMatrix& x = data().x;
  const std::vector<float> want = scores_of(*model, x);
  EXPECT_EQ(scores_of(*model, scramble(x, kept)), want);
  std::vector<float> lib(x.rows);
  models_detail::xgboost_library_predict(*model, x, lib);
  EXPECT_EQ(lib, want);
  const auto loaded = Model::deserialize(model->serialize());
  EXPECT_EQ(loaded->info().options.features, "core+waves");
  EXPECT_EQ(scores_of(*loaded, x), want);
  EXPECT_EQ(loaded->serialize(), model->serialize());

  // The mask changes the model.
  TrainOptions full = o;
  full.features = "full";
  EXPECT_NE(scores_of(*train_model(train_part(), full), x), want);
}

TEST(HpoFeatureSets, RidgeAndMlpMaskIsApplied) {
  TrainOptions o;
  o.kind = ModelKind::ridge;
  o.features = "core+arch";
  const auto kept = feature_mask(o.features);
  const auto ridge = train_model(train_part(), o);
  const FeatureMatrix& x = data().x;
  EXPECT_EQ(scores_of(*ridge, scramble(x, kept)), scores_of(*ridge, x));
  const nlohmann::json file = nlohmann::json::parse(ridge->serialize());
  EXPECT_EQ(file["options"]["features"], "core+arch");
  for (const auto& name : file["parameters"]["linear"]["numeric"]["features"])
    EXPECT_TRUE(kept[FeatureSchema::get().index(name.get<std::string>())]) << name;
  EXPECT_EQ(scores_of(*Model::deserialize(ridge->serialize()), x), scores_of(*ridge, x));

  if (!mlp_training_available()) GTEST_SKIP() << "no MLP training plugin";
  TrainOptions m;
  m.kind = ModelKind::mlp;
  m.objective = "ranknet";
  m.features = "core+smem";
  m.hidden = {16};
  m.epochs = 2;
  m.threads = 1;
  m.dropout = 0.2;
  m.weight_decay = 1e-3;
  m.batch_rows = 256;
  const auto mlp = train_model(train_part(), m);
  const auto mkept = feature_mask(m.features);
  EXPECT_EQ(scores_of(*mlp, scramble(x, mkept)), scores_of(*mlp, x));
  // Deterministic with dropout and AdamW.
  EXPECT_EQ(train_model(train_part(), m)->serialize(), mlp->serialize());
}

TEST(HpoEarlyStopping, DeterministicAndReported) {
  if (!models_detail::xgboost_library_available()) GTEST_SKIP() << "libxgboost not installed";
  TrainOptions o;
  o.rounds = 60;
  o.max_depth = 3;
  o.threads = 1;
  o.early_stopping = 5;
  o.early_stopping_fraction = 0.25;
  o.early_stopping_refit = false;
  const auto a = train_model(train_part(), o);
  const auto b = train_model(train_part(), o);
  EXPECT_EQ(a->serialize(), b->serialize());
  const auto& es = a->info().provenance.at("early_stopping");
  const int rounds = es.at("rounds").get<int>();
  EXPECT_GE(rounds, 1);
  EXPECT_LE(rounds, es.at("rounds_run").get<int>());
  EXPECT_LE(es.at("rounds_run").get<int>(), 60);
  EXPECT_EQ(es.at("validation_groups").get<size_t>(), 4u);  // ceil(0.25 * 16 shapes)
  EXPECT_EQ(a->terms(), static_cast<size_t>(rounds));       // trees up to the best round
  EXPECT_EQ(nlohmann::json::parse(a->serialize())["provenance"]["early_stopping"]["rounds"], rounds);

  // Refit: the same round count, retrained on every group.
  o.early_stopping_refit = true;
  const auto c = train_model(train_part(), o);
  EXPECT_EQ(c->info().provenance.at("early_stopping").at("rounds").get<int>(), rounds);
  EXPECT_EQ(c->terms(), static_cast<size_t>(rounds));
  EXPECT_EQ(c->serialize(), train_model(train_part(), o)->serialize());
}

TEST(HpoSubsample, CandidatesKeepTheTopAndTheLabels) {
  const Dataset& d = train_part();
  const Dataset s = subsample_candidates(d, 40, 8, 3);
  ASSERT_EQ(s.groups.size(), d.groups.size());
  EXPECT_EQ(s.x.rows, s.rows());
  for (size_t g = 0; g < d.groups.size(); ++g) {
    const DataGroup &a = d.groups[g], &b = s.groups[g];
    EXPECT_EQ(b.size(), std::min<size_t>(a.size(), 40));
    // The 8 best throughputs are kept, with the labels of the whole group.
    std::vector<double> top(d.tflops.begin() + a.begin, d.tflops.begin() + a.end);
    std::sort(top.rbegin(), top.rend());
    std::multiset<double> kept(s.tflops.begin() + b.begin, s.tflops.begin() + b.end);
    for (size_t i = 0; i < 8; ++i) EXPECT_TRUE(kept.count(top[i])) << g;
    for (size_t r = b.begin; r < b.end; ++r) {
      const auto it = std::find(d.tflops.begin() + a.begin, d.tflops.begin() + a.end, s.tflops[r]);
      ASSERT_NE(it, d.tflops.begin() + a.end);
      const size_t orig = static_cast<size_t>(it - d.tflops.begin());
      EXPECT_EQ(s.y[r], d.y[orig]);
      EXPECT_EQ(s.grade[r], d.grade[orig]);
    }
  }
  // Seeded: the same draw for the same seed, another for another seed.
  EXPECT_EQ(subsample_candidates(d, 40, 8, 3).tflops, s.tflops);
  EXPECT_NE(subsample_candidates(d, 40, 8, 4).tflops, s.tflops);

  const auto picked = subsample_groups(d.groups, 5, 1);
  EXPECT_EQ(picked.size(), 5u);
  EXPECT_TRUE(std::is_sorted(picked.begin(), picked.end()));
  EXPECT_EQ(subsample_groups(d.groups, 5, 1), picked);
}

// A pool run of 60 candidates a group, then a targeted run of 2 (an active-learning round's picks):
// the targeted rows know their run measured 2, and --keep-targeted keeps them under the cap.
TEST(HpoSubsample, TargetedRowsAreKeptUnderTheCap) {
  test::ScratchDir dir;
  const std::string reg = dir.file("two_runs.db");
  const auto groups = test::synthetic_shapes(6, 11, "train");
  test::write_synthetic_registry(reg, groups, 60, 11);
  test::write_synthetic_registry(reg, groups, 2, 12);
  Registry r(reg);
  const Dataset d = load_dataset(r, default_hw());
  ASSERT_EQ(d.run_rows.size(), d.rows());
  size_t targeted = 0;
  for (uint32_t v : d.run_rows) {
    EXPECT_TRUE(v <= 2 || (v >= 50 && v <= 60)) << v;  // repeats within a run merge into one row
    targeted += v <= 2;
  }
  EXPECT_GE(targeted, 2 * groups.size() - 2);  // a draw of the second run may repeat one of the first

  const Dataset plain = subsample_candidates(d, 20, 4, 5);
  EXPECT_EQ(subsample_candidates(d, 20, 4, 5, 0).tflops, plain.tflops) << "keep_targeted 0 is the old draw";
  const Dataset kept = subsample_candidates(d, 20, 4, 5, 8);
  ASSERT_EQ(kept.run_rows.size(), kept.rows());
  size_t kept_targeted = 0, plain_targeted = 0;
  for (size_t g = 0; g < d.groups.size(); ++g) {
    EXPECT_EQ(kept.groups[g].size(), 20u);
    for (size_t i = kept.groups[g].begin; i < kept.groups[g].end; ++i) kept_targeted += kept.run_rows[i] <= 2;
    for (size_t i = plain.groups[g].begin; i < plain.groups[g].end; ++i) plain_targeted += plain.run_rows[i] <= 2;
  }
  EXPECT_EQ(kept_targeted, targeted);
  EXPECT_LT(plain_targeted, targeted) << "without it the targeted rows are the random rest's draws";
  EXPECT_EQ(subsample_candidates(d, 20, 4, 5, 8).tflops, kept.tflops) << "seeded";
}

TEST(HpoCli, CrossValidationSubsampleAndEarlyStopping) {
  test::ScratchDir dir;
  const std::string reg = dir.file("syn.db");
  auto groups = test::synthetic_shapes(14, 5, "train");
  groups.back().set = "eval";
  test::write_synthetic_registry(reg, groups, 60, 5);
  const test::CliResult r = test::run_cks(
      "eval --registry " + reg +
      " --groups cv --folds 2 --cv-max-groups 8 --cv-max-candidates 30 --model xgboost --rounds 30 --max-depth 3 "
      "--early-stopping 5 --threads 1 --no-baselines --format json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  ASSERT_FALSE(j.empty());
  EXPECT_EQ(j[0]["slice"], "all");
  EXPECT_EQ(j[0]["groups"], 8);
  for (const char* k : {"regret_mean", "regret_median", "regret_p95", "regret_max", "top4_regret"})
    EXPECT_TRUE(j[0][k].is_number()) << k;
  const std::string note = j[0]["note"];
  EXPECT_NE(note.find("<= 30 candidates per group"), std::string::npos) << note;
  EXPECT_NE(note.find("early stopping per fold"), std::string::npos) << note;

  const test::CliResult bad = test::run_cks("eval --registry " + reg + " --model ridge --cv-max-groups 3");
  EXPECT_NE(bad.exit_code, 0);
  EXPECT_NE(bad.err.find("--cv-max-groups needs --groups cv"), std::string::npos) << bad.err;
  const test::CliResult badset = test::run_cks("eval --registry " + reg + " --model ridge --features core+nope");
  EXPECT_NE(badset.exit_code, 0);
  EXPECT_NE(badset.err.find("unknown feature family 'nope'"), std::string::npos) << badset.err;
}

// scripts/hpo/tune.py end to end: two trials of one arm on a tiny registry, two workers on one
// SQLite study, then a resume to three trials and the report's export.
TEST(HpoTune, SmokeTwoWorkersAndResume) {
  if (std::system("python3 -c 'import optuna' >/dev/null 2>&1") != 0) GTEST_SKIP() << "Optuna not installed";
  if (!models_detail::xgboost_library_available()) GTEST_SKIP() << "libxgboost not installed";
  test::ScratchDir dir;
  const std::string reg = dir.file("syn.db");
  auto groups = test::synthetic_shapes(14, 9, "train");
  groups.back().set = "eval";
  test::write_synthetic_registry(reg, groups, 60, 9);
  const std::string script = std::string(CKS_SOURCE_DIR) + "/scripts/hpo/tune.py";
  const std::string common = " --storage sqlite:///" + dir.file("s.db") + " --registry " + reg + " --cks " +
                             CKS_BIN_DIR + "/cks --folds 2 --cv-max-groups 8 --cv-max-candidates 30 --heartbeat 5";
  const std::string log = dir.file("log.txt");
  auto log_text = [&] {
    std::ifstream in(log);
    return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  };
  ASSERT_EQ(std::system(("python3 " + script + " --arm ridge --trials 2 --workers 2" + common + " 2>" + log).c_str()), 0)
      << log_text();
  const std::string text = log_text();
  EXPECT_NE(text.find("complete 2/2"), std::string::npos) << text;
  EXPECT_NE(text.find("best "), std::string::npos) << text;
  ASSERT_EQ(std::system(("python3 " + script + " --arm ridge --trials 3 --workers 1" + common + " 2>>" + log).c_str()), 0)
      << log_text();
  ASSERT_EQ(std::system(("python3 " + script + " --report --no-evaluate --export-dir " + dir.file("export") + common +
                         " >" + dir.file("report.md") + " 2>>" + log)
                            .c_str()),
            0)
      << log_text();
  std::ifstream csv(dir.file("export/trials/ridge.csv"));
  std::string line;
  int complete = 0;
  while (std::getline(csv, line)) complete += line.find(",COMPLETE,") != std::string::npos;
  EXPECT_EQ(complete, 3);
  std::ifstream rep(dir.file("report.md"));
  const std::string report((std::istreambuf_iterator<char>(rep)), std::istreambuf_iterator<char>());
  EXPECT_NE(report.find("| ridge | 3 |"), std::string::npos) << report;
}
