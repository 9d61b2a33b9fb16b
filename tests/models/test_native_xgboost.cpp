// Native inference of XGBoost models (src/models/tree_ensemble.hpp) against XGBoost's own
// predict: the shipped model (categorical splits on native categoricals) and a freshly trained
// one, on real feature rows, with missing values (NaN, +-inf) and invalid categorical codes.
// The comparisons skip where libxgboost is not installed.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <limits>
#include <random>

#include "cks/selector.hpp"
#include "models/base64.hpp"
#include "models/rankers.hpp"
#include "models/synthetic.hpp"
#include "models/tree_ensemble.hpp"

using namespace cks;

namespace {

// Feature rows of real candidates: a strided sample of the catalogue of a few problems (every
// schedule, scheduler, raster and decomposition level appears).
FeatureMatrix catalogue_rows(Layout layout, size_t stride) {
  const Catalogue& cat = Catalogue::get(layout);
  FeatureMatrix out;
  out.cols = FeatureSchema::get().size();
  for (const Problem& p : {Problem{4096, 4096, 4096, layout}, Problem{64, 8192, 1024, layout},
                           Problem{12288, 96, 40, layout}, Problem{1000, 1000, 100000, layout}}) {
    std::vector<Candidate> picked;
    for (size_t i = p.m % stride; i < cat.candidates().size(); i += stride) picked.push_back(cat.candidates()[i]);
    FeatureMatrix x;
    FeatureComputer(cat.kernels(), default_hw()).compute(p, picked, x);
    out.data.insert(out.data.end(), x.data.begin(), x.data.end());
    out.rows += x.rows;
  }
  return out;
}

// A copy with missing values and invalid categorical codes in random cells (seeded).
FeatureMatrix with_missing(const FeatureMatrix& x, uint64_t seed) {
  FeatureMatrix y = x;
  const FeatureSchema& schema = FeatureSchema::get();
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<size_t> col(0, x.cols - 1);
  const float inf = std::numeric_limits<float>::infinity(), nan = std::numeric_limits<float>::quiet_NaN();
  for (size_t r = 0; r < y.rows; ++r) {
    for (int j = 0; j < 6; ++j) {
      const size_t c = col(rng);
      const bool categorical = schema[c].kind == FeatureKind::categorical;
      switch (rng() % 6) {
        case 0:
          y.data[r * y.cols + c] = nan;
          break;
        case 1:
          y.data[r * y.cols + c] = inf;
          break;
        case 2:
          y.data[r * y.cols + c] = -inf;
          break;
        case 3:
          y.data[r * y.cols + c] = categorical ? 7.0f : 1e30f;
          break;  // beyond the levels
        case 4:
          y.data[r * y.cols + c] = categorical ? -1.0f : -1e30f;
          break;  // invalid code
        default:
          y.data[r * y.cols + c] = categorical ? 1.5f : 0.0f;
          break;  // truncated to 1
      }
    }
  }
  return y;
}

void expect_matches_xgboost(const Model& model, const FeatureMatrix& x, const char* what) {
  std::vector<float> native(x.rows), reference(x.rows);
  model.predict(x, native);
  models_detail::xgboost_library_predict(model, x, reference);
  double worst = 0;
  size_t worst_row = 0;
  for (size_t r = 0; r < x.rows; ++r) {
    const double d = std::fabs(static_cast<double>(native[r]) - reference[r]);
    if (!(d <= worst)) {
      worst = d;
      worst_row = r;
    }
  }
  EXPECT_LE(worst, 1e-5) << what << ": row " << worst_row << " native " << native[worst_row] << " XGBoost "
                         << reference[worst_row];
}

// 10 synthetic training groups of ~80 candidates, built once.
const Dataset& synthetic() {
  static test::ScratchDir dir;
  static const Dataset d = test::synthetic_dataset(dir.file("syn.db"), 10, 0, 80, 4);
  return d;
}

const std::string& shipped_model() {
  static const std::string path = std::string(CKS_SOURCE_DIR) + "/models/default.json";
  return path;
}

}  // namespace

TEST(ModelsNativeXgboost, ShippedModelEqualsXgboostPredict) {
  if (!models_detail::xgboost_library_available()) GTEST_SKIP() << "libxgboost not installed";
  if (!std::filesystem::exists(shipped_model())) GTEST_SKIP() << "no shipped model";
  const auto model = Model::load(shipped_model());
  for (Layout layout : {Layout::tn, Layout::nt, Layout::nn}) {
    const FeatureMatrix x = catalogue_rows(layout, 97);
    ASSERT_GT(x.rows, 8000u);
    expect_matches_xgboost(*model, x, "catalogue rows");
    expect_matches_xgboost(*model, with_missing(x, 3), "rows with missing values and invalid categories");
  }
}

TEST(ModelsNativeXgboost, TrainedModelEqualsXgboostPredict) {
  if (!models_detail::xgboost_library_available()) GTEST_SKIP() << "libxgboost not installed";
  test::ScratchDir dir;
  const Dataset& d = synthetic();
  for (const char* objective : {"rank:ndcg", "reg:squarederror"}) {
    TrainOptions o;
    o.objective = objective;
    o.rounds = 25;
    o.threads = 2;
    const auto model = train_model(d, o);
    expect_matches_xgboost(*model, d.x, objective);
    expect_matches_xgboost(*model, with_missing(d.x, 5), objective);
    // The file round trip keeps the scores.
    model->save(dir.file("m.json"));
    const auto loaded = Model::load(dir.file("m.json"));
    std::vector<float> a(d.rows()), b(d.rows());
    model->predict(d.x, a);
    loaded->predict(d.x, b);
    EXPECT_EQ(a, b);
  }
}

// An XGBoost model of 30 trees on synthetic().
std::unique_ptr<Model> trained_model() {
  TrainOptions o;
  o.rounds = 30;
  o.threads = 2;
  return train_model(synthetic(), o);
}

TEST(ModelsNativeXgboost, ScoresInPiecesEqualOnePass) {
  const Dataset& d = synthetic();
  const auto model = trained_model();
  ASSERT_EQ(model->terms(), 30u);
  const FeatureMatrix x = with_missing(d.x, 1);
  std::vector<float> whole(x.rows), pieces(x.rows, model->terms_base());
  model->predict(x, whole);
  model->add_terms(x, pieces, 0, 7);
  model->add_terms(x, pieces, 7, 8);
  model->add_terms(x, pieces, 8, 30);
  EXPECT_EQ(whole, pieces);  // bit for bit: the same summation order
  // The terms one by one, added in order (the selector's second stage on several threads).
  std::vector<float> by_term(x.rows, model->terms_base()), values(x.rows * 23);
  model->add_terms(x, by_term, 0, 7);
  ASSERT_TRUE(model->term_values(x, values, 7, 30));
  for (size_t r = 0; r < x.rows; ++r)
    for (size_t t = 0; t < 23; ++t) by_term[r] += values[r * 23 + t];
  EXPECT_EQ(whole, by_term);
  std::vector<float> wrong(5);
  EXPECT_THROW(model->term_values(x, wrong, 7, 30), Error);
  // Several threads give the same scores.
  model->set_threads(2);
  std::vector<float> threaded(x.rows);
  model->predict(x, threaded);
  EXPECT_EQ(whole, threaded);
}

TEST(ModelsNativeXgboost, RejectsWhatItCannotEvaluate) {
  EXPECT_THROW(models_detail::TreeEnsemble::from_xgboost("not a model"), Error);
  EXPECT_THROW(models_detail::TreeEnsemble::from_xgboost(R"({"learner": {}})"), Error);
  const std::string dart =
      R"({"learner": {"learner_model_param": {"base_score": "5E-1", "num_feature": "2"},
          "objective": {"name": "rank:ndcg"}, "gradient_booster": {"name": "dart", "model": {}}}})";
  EXPECT_THROW(models_detail::TreeEnsemble::from_xgboost(dart), Error);
  const std::string logistic =
      R"({"learner": {"learner_model_param": {"base_score": "5E-1", "num_feature": "2"},
          "objective": {"name": "binary:logistic"}, "gradient_booster": {"name": "gbtree", "model": {}}}})";
  EXPECT_THROW(models_detail::TreeEnsemble::from_xgboost(logistic), Error);
  // A hand-written JSON booster: one stump on feature 1 (x < 2 -> -1, else 3; missing -> right).
  const std::string stump = R"({"learner": {"learner_model_param": {"base_score": "[5E-1]", "num_feature": "2"},
      "objective": {"name": "reg:squarederror"},
      "gradient_booster": {"name": "gbtree", "model": {"gbtree_model_param": {"num_trees": "1"}, "tree_info": [0],
        "trees": [{"left_children": [1, -1, -1], "right_children": [2, -1, -1], "split_indices": [1, 0, 0],
                   "split_conditions": [2.0, -1.0, 3.0], "default_left": [0, 0, 0], "split_type": [0, 0, 0],
                   "categories": [], "categories_nodes": [], "categories_segments": [], "categories_sizes": []}]}}}})";
  const auto e = models_detail::TreeEnsemble::from_xgboost(stump);
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const float rows[] = {0, 1.5f, 0, 2.0f, 0, nan, 0, std::numeric_limits<float>::infinity()};
  float out[4];
  e.predict(rows, 4, 2, out);
  EXPECT_FLOAT_EQ(out[0], -0.5f);
  EXPECT_FLOAT_EQ(out[1], 3.5f);
  EXPECT_FLOAT_EQ(out[2], 3.5f);  // missing: default right
  EXPECT_FLOAT_EQ(out[3], 3.5f);  // +inf is missing
}

namespace {

// The compiled walk (add_trees) against the reference walk (add_trees_reference) of one
// ensemble: bit for bit, over every tree and over tree ranges, on row counts that leave short
// blocks and span several row groups.
void expect_compiled_equals_reference(const models_detail::TreeEnsemble& e, const FeatureMatrix& x, const char* what) {
  ASSERT_TRUE(e.compiled()) << what;
  for (size_t n : {x.rows, size_t{1}, size_t{17}, size_t{515}}) {
    n = std::min(n, x.rows);
    std::vector<float> compiled(n, e.base_score()), reference(n, e.base_score());
    e.add_trees(x.data.data(), n, x.cols, compiled.data(), 0, e.trees());
    e.add_trees_reference(x.data.data(), n, x.cols, reference.data(), 0, e.trees());
    EXPECT_EQ(0, std::memcmp(compiled.data(), reference.data(), n * sizeof(float))) << what << ", " << n << " rows";
    // Ranges (the selector's cascade continues a partial sum).
    const size_t mid = e.trees() / 3;
    std::fill(compiled.begin(), compiled.end(), e.base_score());
    e.add_trees(x.data.data(), n, x.cols, compiled.data(), 0, mid);
    e.add_trees(x.data.data(), n, x.cols, compiled.data(), mid, e.trees());
    EXPECT_EQ(0, std::memcmp(compiled.data(), reference.data(), n * sizeof(float))) << what << ", in two ranges";
    // Per-tree leaves over a few ranges (the cascade's second stage split among threads), added in
    // tree order: the same bits.
    std::fill(compiled.begin(), compiled.end(), e.base_score());
    const size_t cuts[] = {0, mid, mid + 1, e.trees()};
    for (size_t i = 0; i + 1 < std::size(cuts); ++i) {
      const size_t trees = cuts[i + 1] - cuts[i];
      std::vector<float> leaves(n * trees, std::numeric_limits<float>::quiet_NaN());
      e.tree_leaves(x.data.data(), n, x.cols, leaves.data(), cuts[i], cuts[i + 1]);
      for (size_t r = 0; r < n; ++r)
        for (size_t t = 0; t < trees; ++t) compiled[r] += leaves[r * trees + t];
    }
    EXPECT_EQ(0, std::memcmp(compiled.data(), reference.data(), n * sizeof(float))) << what << ", per-tree leaves";
  }
}

// Values whose comparison the integer keys must get right: -0 against conditions of 0, and the
// smallest denormals, in random numeric cells.
FeatureMatrix with_signed_zeros(const FeatureMatrix& x, uint64_t seed) {
  FeatureMatrix y = x;
  std::mt19937_64 rng(seed);
  const FeatureSchema& schema = FeatureSchema::get();
  for (size_t r = 0; r < y.rows; ++r)
    for (int j = 0; j < 6; ++j) {
      const size_t c = rng() % y.cols;
      if (schema[c].kind == FeatureKind::categorical) continue;
      const float values[] = {-0.0f, 0.0f, std::numeric_limits<float>::denorm_min(), -std::numeric_limits<float>::denorm_min()};
      y.data[r * y.cols + c] = values[rng() % 4];
    }
  return y;
}

models_detail::TreeEnsemble ensemble_of(const Model& model) {
  return models_detail::TreeEnsemble::from_xgboost(models_detail::xgboost_blob(model));
}

}  // namespace

TEST(ModelsNativeXgboost, CompiledWalkEqualsTheReferenceWalk) {
  const Dataset& d = synthetic();
  const auto e = ensemble_of(*trained_model());
  expect_compiled_equals_reference(e, d.x, "trained");
  expect_compiled_equals_reference(e, with_missing(d.x, 2), "trained, missing values");
  expect_compiled_equals_reference(e, with_signed_zeros(d.x, 3), "trained, signed zeros");
  if (!std::filesystem::exists(shipped_model())) GTEST_SKIP() << "no shipped model";
  const auto shipped = ensemble_of(*Model::load(shipped_model()));
  for (Layout layout : {Layout::tn, Layout::nt, Layout::nn, Layout::tt}) {
    const FeatureMatrix x = catalogue_rows(layout, 211);
    expect_compiled_equals_reference(shipped, x, "shipped");
    expect_compiled_equals_reference(shipped, with_missing(x, 4), "shipped, missing values");
    expect_compiled_equals_reference(shipped, with_signed_zeros(x, 5), "shipped, signed zeros");
  }
}

namespace {

// A JSON booster of one chain tree `depth` splits deep on feature 0: split i (x < i -> leaf
// value i, else on to split i + 1), missing left at even splits, right at odd ones.
std::string chain_booster(int depth) {
  std::string left, right, feature, cond, dleft, type;
  const int nodes = 2 * depth + 1;  // split i at 2i, its leaf at 2i + 1, the last leaf at 2 * depth
  for (int n = 0; n < nodes; ++n) {
    const bool split = n % 2 == 0 && n < 2 * depth;
    const std::string sep = n ? ", " : "";
    left += sep + (split ? std::to_string(n + 1) : "-1");
    right += sep + (split ? std::to_string(n + 2) : "-1");
    feature += sep + "0";
    cond += sep + std::to_string(split ? n / 2 : n == 2 * depth ? 100 : n / 2) + ".0";
    dleft += sep + (split && n % 4 == 0 ? "1" : "0");
    type += sep + "0";
  }
  return R"({"learner": {"learner_model_param": {"base_score": "0", "num_feature": "1"},
      "objective": {"name": "reg:squarederror"},
      "gradient_booster": {"name": "gbtree", "model": {"gbtree_model_param": {"num_trees": "1"}, "tree_info": [0],
        "trees": [{"left_children": [)" + left + R"(], "right_children": [)" + right + R"(], "split_indices": [)" +
         feature + R"(], "split_conditions": [)" + cond + R"(], "default_left": [)" + dleft + R"(], "split_type": [)" +
         type + R"(], "categories": [], "categories_nodes": [], "categories_segments": [], "categories_sizes": []}]}}}})";
}

}  // namespace

TEST(ModelsNativeXgboost, DeepTreesFallBackToTheReferenceWalk) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  for (int depth : {12, 13}) {
    const auto e = models_detail::TreeEnsemble::from_xgboost(chain_booster(depth));
    EXPECT_EQ(e.compiled(), depth <= models_detail::TreeEnsemble::kMaxCompiledDepth);
    std::vector<float> rows{nan, -1.0f, -0.0f, 0.5f, 3.0f, 11.5f, 12.0f, 40.0f};
    std::vector<float> out(rows.size(), 0.0f), reference(rows.size(), 0.0f);
    e.add_trees(rows.data(), rows.size(), 1, out.data(), 0, 1);
    e.add_trees_reference(rows.data(), rows.size(), 1, reference.data(), 0, 1);
    EXPECT_EQ(out, reference) << depth;
    EXPECT_EQ(out[0], 0.0f);  // missing: left at split 0
    EXPECT_EQ(out[1], 0.0f);
    EXPECT_EQ(out[2], 1.0f);  // -0 < 0 is false: right at split 0, left at split 1 (leaf value 1)
    EXPECT_EQ(out[7], 100.0f);  // right at every split
  }
}

// A seed ensemble (average_models): one booster that libxgboost itself loads and predicts like the
// native walk, scoring the mean of its members, with member 1's options and evidence.
TEST(ModelsNativeXgboost, AverageOfSeedsScoresTheMembersMean) {
  if (!models_detail::xgboost_library_available()) GTEST_SKIP() << "libxgboost not installed";
  const Dataset& d = synthetic();
  std::vector<std::unique_ptr<Model>> members;
  for (uint64_t seed : {0, 1, 2}) {
    TrainOptions o;
    o.objective = "reg:squarederror";
    o.rounds = 20;
    o.threads = 2;
    o.seed = seed;
    members.push_back(train_model(d, o));
  }
  const auto ensemble = average_models({members[0].get(), members[1].get(), members[2].get()});
  ASSERT_EQ(ensemble->terms(), 60u);
  const FeatureMatrix x = with_missing(d.x, 7);
  expect_matches_xgboost(*ensemble, x, "ensemble");
  std::vector<float> mean(x.rows, 0.0f), one(x.rows), got(x.rows);
  for (const auto& m : members) {
    m->predict(x, one);
    for (size_t r = 0; r < x.rows; ++r) mean[r] += one[r] / 3.0f;
  }
  ensemble->predict(x, got);
  for (size_t r = 0; r < x.rows; ++r) ASSERT_NEAR(got[r], mean[r], 1e-5) << "row " << r;
  EXPECT_EQ(ensemble->info().options.seed, 0u);
  EXPECT_EQ(ensemble->info().evidence.to_json(), members[0]->info().evidence.to_json());
  const auto& listed = ensemble->info().provenance.at("ensemble").at("members");
  ASSERT_EQ(listed.size(), 3u);
  EXPECT_EQ(listed[2].at("seed").get<uint64_t>(), 2u);
  // The cascade reads member 1's first trees: the first 20 terms are member 1 scaled by 1/3.
  std::vector<float> first(x.rows, 0.0f), member1(x.rows, 0.0f);
  ensemble->add_terms(x, first, 0, 20);
  members[0]->add_terms(x, member1, 0, 20);
  for (size_t r = 0; r < x.rows; ++r) ASSERT_NEAR(first[r], member1[r] / 3.0f, 1e-6) << "row " << r;
  // Saved and loaded, it scores the same.
  test::ScratchDir dir;
  ensemble->save(dir.file("ens.json"));
  std::vector<float> loaded(x.rows);
  Model::load(dir.file("ens.json"))->predict(x, loaded);
  EXPECT_EQ(got, loaded);
}

TEST(ModelsNativeXgboost, AverageRefusesMismatchedMembers) {
  const Dataset& d = synthetic();
  TrainOptions o;
  o.objective = "reg:squarederror";
  o.rounds = 5;
  o.threads = 2;
  const auto a = train_model(d, o);
  EXPECT_THROW(average_models({}), Error);
  TrainOptions r = o;
  r.objective = "rank:ndcg";
  const auto b = train_model(d, r);
  try {
    average_models({a.get(), b.get()});
    FAIL() << "objectives differ";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("objective"), std::string::npos) << e.what();
  }
  TrainOptions ridge = o;
  ridge.kind = ModelKind::ridge;
  ridge.objective = "squared";
  const auto c = train_model(d, ridge);
  EXPECT_THROW(average_models({a.get(), c.get()}), Error);
}

// A model rewritten in the compact encoding (node statistics zeroed, booster xz-compressed):
// the same scores bit for bit, in a file a quarter of the size.
TEST(ModelsNativeXgboost, CompactRewriteScoresTheSameBits) {
  if (!models_detail::xgboost_library_available()) GTEST_SKIP() << "libxgboost not installed";
  if (!std::filesystem::exists(shipped_model())) GTEST_SKIP() << "no shipped model";
  const auto shipped = Model::load(shipped_model());
  const auto compact = average_models({shipped.get()});
  EXPECT_FALSE(compact->info().provenance.contains("ensemble"));
  test::ScratchDir dir;
  compact->save(dir.file("compact.json"));
  const auto loaded = Model::load(dir.file("compact.json"));
  EXPECT_LT(std::filesystem::file_size(dir.file("compact.json")), std::filesystem::file_size(shipped_model()) / 2);
  for (Layout layout : {Layout::tn, Layout::tt}) {
    const FeatureMatrix x = with_missing(catalogue_rows(layout, 211), 11);
    std::vector<float> a(x.rows), b(x.rows);
    shipped->predict(x, a);
    loaded->predict(x, b);
    EXPECT_EQ(a, b);
  }
}
