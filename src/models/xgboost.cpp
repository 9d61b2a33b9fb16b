// Model A: gradient-boosted trees, trained through XGBoost's C API (libxgboost, loaded with
// dlopen so that cks runs where XGBoost is not installed: only training needs it). Scoring is
// native (tree_ensemble.hpp): the saved booster is parsed at load and evaluated in cks_core. Objectives rank:ndcg / rank:pairwise on the relevance rel(g, c) with query groups,
// or reg:squarederror on y (ablation). Categorical schema columns are native categoricals
// (feature type "c", level code = frozen level index); NaN is missing and +-inf is mapped to
// missing because XGBoost rejects infinities. A feature set (TrainOptions::features) trains on
// the kept columns only; the model file then names them ("columns") and the native ensemble
// maps the booster's features back onto schema columns. Early stopping: TrainOptions.
#include <dlfcn.h>
#include <xgboost/c_api.h>

#include <algorithm>
#include <atomic>
#include <functional>
#include <cmath>
#include <map>
#include <mutex>
#include <thread>

#include "cks/models.hpp"
#include "common/cache_file.hpp"
#include "models/base64.hpp"
#include "models/rankers.hpp"
#include "models/tree_ensemble.hpp"
#include "models/xz.hpp"
#include "common/json_limits.hpp"

namespace cks::models_detail {

namespace {

// The entry points used, resolved once from libxgboost.
struct XgbApi {
#define CKS_XGB_FUNCTIONS(X)                                                                               \
  X(XGBGetLastError) X(XGBoostVersion) X(XGDMatrixCreateFromMat) X(XGDMatrixSetFloatInfo)                  \
  X(XGDMatrixSetUIntInfo) X(XGDMatrixSetStrFeatureInfo) X(XGDMatrixFree) X(XGBoosterCreate)                \
  X(XGBoosterSetParam) X(XGBoosterUpdateOneIter) X(XGBoosterSaveModelToBuffer)                              \
  X(XGBoosterLoadModelFromBuffer) X(XGBoosterPredictFromDense) X(XGBoosterFree)                              \
  X(XGBoosterPredictFromDMatrix) X(XGBoosterSlice)
#define CKS_XGB_MEMBER(f) decltype(&::f) f = nullptr;
  CKS_XGB_FUNCTIONS(CKS_XGB_MEMBER)
#undef CKS_XGB_MEMBER

  // Throws Error naming the library when it (or a symbol) cannot be loaded.
  static const XgbApi& get() {
    static const XgbApi api = load();
    return api;
  }

  // Throws Error with XGBoost's message when rc != 0.
  void check(int rc, const char* what) const {
    if (rc != 0) throw Error(std::string("XGBoost ") + what + " failed: " + XGBGetLastError());
  }

 private:
  static XgbApi load() {
    void* lib = nullptr;
    std::string tried;
    for (const char* name : {CKS_XGBOOST_LIB, "libxgboost.so.0", "libxgboost.so"}) {
      if ((lib = dlopen(name, RTLD_NOW | RTLD_LOCAL))) break;
      tried += (tried.empty() ? "" : ", ") + std::string(name);
    }
    if (!lib) throw Error("XGBoost is not installed (tried " + tried + "; install libxgboost-dev)");
    XgbApi api;
#define CKS_XGB_LOAD(f)                                                                  \
  api.f = reinterpret_cast<decltype(&::f)>(dlsym(lib, #f));                              \
  if (!api.f) throw Error("libxgboost lacks " #f " (XGBoost >= 1.7 is required)");
    CKS_XGB_FUNCTIONS(CKS_XGB_LOAD)
#undef CKS_XGB_LOAD
    return api;
  }
};

// Owning handles.
struct DMatrix {
  DMatrixHandle h = nullptr;
  ~DMatrix() {
    if (h) XgbApi::get().XGDMatrixFree(h);
  }
};
struct Booster {
  BoosterHandle h = nullptr;
  Booster() = default;
  Booster(const Booster&) = delete;
  Booster& operator=(const Booster&) = delete;
  ~Booster() {
    if (h) XgbApi::get().XGBoosterFree(h);
  }
};

// A copy of rows [begin, end) with +-inf replaced by NaN (missing); with `columns`, only those
// columns (a feature set), in that order.
std::vector<float> xgb_rows(const FeatureMatrix& x, size_t begin, size_t end, const std::vector<uint32_t>& columns = {}) {
  std::vector<float> v;
  if (columns.empty()) {
    v.assign(x.data.begin() + begin * x.cols, x.data.begin() + end * x.cols);
  } else {
    v.reserve((end - begin) * columns.size());
    for (size_t r = begin; r < end; ++r)
      for (uint32_t c : columns) v.push_back(x.at(r, c));
  }
  for (float& f : v)
    if (std::isinf(f)) f = std::numeric_limits<float>::quiet_NaN();
  return v;
}

void set_param(const Booster& b, const char* name, const std::string& value) {
  XgbApi::get().check(XgbApi::get().XGBoosterSetParam(b.h, name, value.c_str()), "set parameter");
}

constexpr size_t kPredictBlock = 65536;

class XgbModel final : public Model {
 public:
  // `blob` is a saved booster (UBJSON). It is parsed into the native ensemble here, so scoring
  // never needs libxgboost.
  // `columns`: the schema columns of the booster's features when it was trained on a feature
  // set (empty: every schema column).
  XgbModel(std::string blob, int threads, std::vector<uint32_t> columns = {})
      : blob_(std::move(blob)),
        columns_(std::move(columns)),
        trees_(TreeEnsemble::from_xgboost(blob_, columns_)),
        threads_(std::max(1, threads)) {
    check_features();
  }
  // From a cache entry: the ensemble parsed before; the booster's bytes (needed only to save the
  // model or to predict through libxgboost) are read by `blob_source` on first use.
  XgbModel(std::function<std::string()> blob_source, std::vector<uint32_t> columns, TreeEnsemble trees)
      : blob_source_(std::move(blob_source)), columns_(std::move(columns)), trees_(std::move(trees)), threads_(1) {
    check_features();
  }

  void predict(const FeatureMatrix& x, std::span<float> out) const override {
    if (out.size() != x.rows) throw Error("predict: output size differs from the row count");
    const int threads = std::min<int>(threads_.load(std::memory_order_relaxed), static_cast<int>(x.rows / 4096) + 1);
    if (threads <= 1) {
      trees_.predict(x.data.data(), x.rows, x.cols, out.data());
      return;
    }
    std::vector<std::thread> pool;
    const size_t chunk = (x.rows + threads - 1) / threads;
    for (int t = 0; t < threads; ++t) {
      const size_t begin = std::min(x.rows, t * chunk), end = std::min(x.rows, begin + chunk);
      pool.emplace_back([&, begin, end] {
        trees_.predict(x.row(begin), end - begin, x.cols, out.data() + begin);
      });
    }
    for (auto& th : pool) th.join();
  }

  void set_threads(int threads) const override { threads_.store(std::max(1, threads), std::memory_order_relaxed); }

  size_t terms() const override { return trees_.trees(); }
  float terms_base() const override { return trees_.base_score(); }
  void add_terms(const FeatureMatrix& x, std::span<float> out, size_t begin, size_t end) const override {
    if (out.size() != x.rows) throw Error("predict: output size differs from the row count");
    trees_.add_trees(x.data.data(), x.rows, x.cols, out.data(), begin, end);
  }
  bool term_values(const FeatureMatrix& x, std::span<float> out, size_t begin, size_t end) const override {
    if (!trees_.compiled()) return false;
    end = std::min(end, trees_.trees());
    if (begin > end || out.size() != x.rows * (end - begin)) throw Error("term_values: output size differs from rows x terms");
    trees_.tree_leaves(x.data.data(), x.rows, x.cols, out.data(), begin, end);
    return true;
  }

  nlohmann::json parameters() const override {
    // The booster xz-compressed (its node statistics were zeroed when it was trained: a quarter of
    // the size; a model loaded from an older "ubj+base64" file keeps its booster as it was).
    const std::string booster = base64_encode(xz_compress(blob()));
    if (columns_.empty())
      return {{"encoding", "ubj+xz+base64"}, {"booster", booster}, {"features", FeatureSchema::get().size()}};
    std::vector<std::string> names;
    for (uint32_t c : columns_) names.emplace_back(FeatureSchema::get()[c].name);
    return {{"encoding", "ubj+xz+base64"}, {"booster", booster}, {"features", columns_.size()}, {"columns", names}};
  }

  const std::string& blob() const {
    std::call_once(blob_once_, [&] {
      if (blob_source_) blob_ = blob_source_();
    });
    return blob_;
  }
  void write_cache(BinaryWriter& w) const {
    w.vec(columns_);
    trees_.write(w);
    w.u64(hash64(blob()));
    w.str(blob());
  }
  const std::vector<uint32_t>& columns() const { return columns_; }
  const TreeEnsemble& trees() const { return trees_; }

 private:
  void check_features() const {
    if (trees_.features() > FeatureSchema::get().size())
      throw Error("model: XGBoost booster splits on more features than the schema has");
  }

  mutable std::once_flag blob_once_;
  mutable std::string blob_;
  std::function<std::string()> blob_source_;  // empty: blob_ is the booster
  std::vector<uint32_t> columns_;
  TreeEnsemble trees_;
  mutable std::atomic<int> threads_;
};

std::string save_booster(const Booster& b) {
  const XgbApi& api = XgbApi::get();
  bst_ulong len = 0;
  const char* data = nullptr;
  api.check(api.XGBoosterSaveModelToBuffer(b.h, R"({"format": "ubj"})", &len, &data), "save model");
  return std::string(data, len);
}

}  // namespace

namespace {

// A DMatrix of the rows of `data` (the kept `columns`, empty = all) with feature names and types,
// labels and, for ranking, query groups.
void make_dmatrix(DMatrix& m, const Dataset& data, const std::vector<uint32_t>& columns, bool ranking,
                  const std::vector<float>& label, double top_weight = 0) {
  const XgbApi& api = XgbApi::get();
  const FeatureSchema& schema = FeatureSchema::get();
  const size_t cols = columns.empty() ? data.x.cols : columns.size();
  {
    const std::vector<float> rows = xgb_rows(data.x, 0, data.rows(), columns);
    api.check(api.XGDMatrixCreateFromMat(rows.data(), data.rows(), cols, std::numeric_limits<float>::quiet_NaN(), &m.h),
              "create DMatrix");
  }
  std::vector<std::string> names, types;
  for (size_t i = 0; i < cols; ++i) {
    const FeatureSpec& f = schema[columns.empty() ? i : columns[i]];
    names.emplace_back(f.name);
    types.emplace_back(f.kind == FeatureKind::categorical ? "c" : "q");
  }
  auto set_str = [&](const char* field, const std::vector<std::string>& v) {
    std::vector<const char*> p;
    for (const auto& s : v) p.push_back(s.c_str());
    api.check(api.XGDMatrixSetStrFeatureInfo(m.h, field, p.data(), p.size()), "set feature info");
  };
  set_str("feature_name", names);
  set_str("feature_type", types);
  api.check(api.XGDMatrixSetFloatInfo(m.h, "label", label.data(), label.size()), "set labels");
  if (top_weight > 0) {  // reg:squarederror only (checked by the caller): y^top_weight per row
    std::vector<float> w(data.y.size());
    for (size_t i = 0; i < w.size(); ++i) w[i] = static_cast<float>(std::pow(std::max(double(data.y[i]), 1e-6), top_weight));
    api.check(api.XGDMatrixSetFloatInfo(m.h, "weight", w.data(), w.size()), "set weights");
  }
  if (ranking) {
    std::vector<unsigned> sizes;
    for (const auto& g : data.groups) sizes.push_back(static_cast<unsigned>(g.size()));
    api.check(api.XGDMatrixSetUIntInfo(m.h, "group", sizes.data(), sizes.size()), "set groups");
  }
}

// The ranking label: relevance max(0, B - band) = max(0, grade - (kGradeMax - B)).
std::vector<float> ranking_label(const Dataset& data, int bands) {
  if (bands == kRelevanceBands) return data.relevance;
  std::vector<float> out(data.rows());
  for (size_t r = 0; r < data.rows(); ++r) out[r] = static_cast<float>(std::max(0, data.grade[r] - (kGradeMax - bands)));
  return out;
}

// Early stopping's split of the training groups: the shapes sorted by fnv1a64("es:<seed>:MxNxK"),
// the first ceil(fraction * shapes) held out (every layout of a shape on the same side).
std::vector<bool> early_stopping_holdout(const Dataset& data, double fraction, uint64_t seed) {
  std::map<std::string, std::vector<size_t>> by_shape;
  for (size_t g = 0; g < data.groups.size(); ++g) {
    const Problem& p = data.groups[g].problem;
    by_shape[std::to_string(p.m) + "x" + std::to_string(p.n) + "x" + std::to_string(p.k)].push_back(g);
  }
  if (by_shape.size() < 2) throw Error("early stopping needs training groups of at least 2 shapes");
  std::vector<std::pair<uint64_t, std::string>> order;
  for (const auto& [shape, members] : by_shape) order.emplace_back(fnv1a64("es:" + std::to_string(seed) + ":" + shape), shape);
  std::sort(order.begin(), order.end());
  const size_t held = std::clamp<size_t>(static_cast<size_t>(std::ceil(fraction * static_cast<double>(order.size()))), 1,
                                         order.size() - 1);
  std::vector<bool> out(data.groups.size(), false);
  for (size_t i = 0; i < held; ++i)
    for (size_t g : by_shape[order[i].second]) out[g] = true;
  return out;
}

// Early stopping's validation loss: over the groups of `data`, the mean of the top-k regrets
// for k = 1, 2, 4, 8, 16 (top-k regret: 1 - the best throughput among the k highest scores / T*;
// score ties to the lower row), averaged over the groups. Top-1 regret alone is a step function
// of the scores that plateaus for many rounds on a small validation slice; the deeper top-k
// regrets move with the ranking of the whole top of each group.
double validation_loss(const Dataset& data, const float* scores) {
  double sum = 0;
  std::vector<uint32_t> order;
  for (const DataGroup& g : data.groups) {
    const size_t n = g.size();
    order.resize(n);
    for (size_t i = 0; i < n; ++i) order[i] = static_cast<uint32_t>(i);
    const size_t deepest = std::min<size_t>(n, static_cast<size_t>(kTopK.back()));
    std::partial_sort(order.begin(), order.begin() + static_cast<std::ptrdiff_t>(deepest), order.end(),
                      [&](uint32_t a, uint32_t b) {
                        const float sa = scores[g.begin + a], sb = scores[g.begin + b];
                        return sa > sb || (sa == sb && a < b);
                      });
    double best = 0;
    for (size_t r = g.begin; r < g.end; ++r) best = std::max(best, data.tflops[r]);
    double seen = 0, group = 0;
    size_t next_k = 0;
    for (size_t i = 0; i < deepest; ++i) {
      seen = std::max(seen, data.tflops[g.begin + order[i]]);
      while (next_k < kTopK.size() && static_cast<size_t>(kTopK[next_k]) == i + 1) {
        group += 1.0 - seen / best;
        ++next_k;
      }
    }
    for (; next_k < kTopK.size(); ++next_k) group += 1.0 - seen / best;  // k beyond the group: all seen
    sum += group / static_cast<double>(kTopK.size());
  }
  return data.groups.empty() ? 0.0 : sum / static_cast<double>(data.groups.size());
}

}  // namespace

std::string merge_boosters(const std::vector<std::string_view>& blobs);

std::unique_ptr<Model> train_xgboost(const Dataset& data, const TrainOptions& o, const Progress& progress) {
  if (o.rounds < 1) throw Error("--rounds must be >= 1");
  if (o.max_depth < 1) throw Error("--max-depth must be >= 1");
  if (!(o.eta > 0)) throw Error("--eta must be > 0");
  if (!(o.subsample > 0 && o.subsample <= 1) || !(o.colsample > 0 && o.colsample <= 1))
    throw Error("subsample and colsample must be in (0, 1]");
  if (!(o.l1 >= 0) || !(o.l2 >= 0) || !(o.gamma >= 0) || !(o.min_child_weight >= 0))
    throw Error("--reg-alpha, --reg-lambda, --gamma and --min-child-weight must be >= 0");
  if (o.max_bin < 2) throw Error("--max-bin must be >= 2");
  if (o.max_cat_to_onehot < 1 || o.max_cat_threshold < 1)
    throw Error("--max-cat-to-onehot and --max-cat-threshold must be >= 1");
  if (o.relevance_bands < 1 || o.relevance_bands > kGradeMax) throw Error("--relevance-bands must be in [1, 31]");
  if (o.num_pairsample < 1) throw Error("--num-pairsample must be >= 1");
  if (!(o.top_weight >= 0) || !std::isfinite(o.top_weight)) throw Error("--top-weight must be a finite number >= 0");
  if (o.top_weight > 0 && o.objective != "reg:squarederror")
    throw Error("--top-weight applies to --objective reg:squarederror only (got " + o.objective + ")");
  if (o.early_stopping < 0) throw Error("--early-stopping must be >= 0");
  if (o.early_stopping > 0 && !(o.early_stopping_fraction > 0 && o.early_stopping_fraction < 1))
    throw Error("--early-stopping-fraction must be in (0, 1)");
  const XgbApi& api = XgbApi::get();
  const bool ranking = o.objective != "reg:squarederror";

  // The feature set: the booster sees only the kept columns.
  std::vector<uint32_t> columns;
  if (const std::vector<bool> kept = feature_mask(o.features); std::find(kept.begin(), kept.end(), false) != kept.end())
    for (size_t c = 0; c < kept.size(); ++c)
      if (kept[c]) columns.push_back(static_cast<uint32_t>(c));

  // Early stopping trains on part of the groups and scores the rest after every round.
  Dataset fit_part, held_part;
  const bool early = o.early_stopping > 0;
  if (early) {
    const std::vector<bool> held = early_stopping_holdout(data, o.early_stopping_fraction, o.seed);
    std::vector<size_t> in, out;
    for (size_t g = 0; g < data.groups.size(); ++g) (held[g] ? out : in).push_back(g);
    fit_part = data.subset(in);
    held_part = data.subset(out);
  }
  const Dataset& fit = early ? fit_part : data;

  DMatrix train, valid;
  make_dmatrix(train, fit, columns, ranking, ranking ? ranking_label(fit, o.relevance_bands) : fit.y, o.top_weight);
  if (early)
    make_dmatrix(valid, held_part, columns, ranking, ranking ? ranking_label(held_part, o.relevance_bands) : held_part.y,
                 o.top_weight);

  Booster booster;
  DMatrixHandle cached[2] = {train.h, valid.h};
  api.check(api.XGBoosterCreate(cached, early ? 2 : 1, &booster.h), "create booster");
  const int threads = resolve_threads(o.threads);
  auto num = [](double v) { return format_double(v); };
  std::vector<std::pair<const char*, std::string>> params{
      {"objective", o.objective},
      {"tree_method", "hist"},
      {"eta", num(o.eta)},
      {"max_depth", std::to_string(o.max_depth)},
      {"min_child_weight", num(o.min_child_weight)},
      {"subsample", num(o.subsample)},
      {"colsample_bytree", num(o.colsample)},
      {"lambda", num(o.l2)},
      {"max_bin", std::to_string(o.max_bin)},
      {"seed", std::to_string(o.seed % 2147483647)},
      {"nthread", std::to_string(threads)},
      {"verbosity", "0"},
  };
  // Parameters added for tuning are passed only when not at XGBoost's defaults (the defaults
  // train exactly as before).
  const TrainOptions d;
  if (o.l1 != d.l1) params.emplace_back("alpha", num(o.l1));
  if (o.gamma != d.gamma) params.emplace_back("gamma", num(o.gamma));
  if (o.max_cat_to_onehot != d.max_cat_to_onehot) params.emplace_back("max_cat_to_onehot", std::to_string(o.max_cat_to_onehot));
  if (o.max_cat_threshold != d.max_cat_threshold) params.emplace_back("max_cat_threshold", std::to_string(o.max_cat_threshold));
  if (ranking && o.num_pairsample != d.num_pairsample) params.emplace_back("num_pairsample", std::to_string(o.num_pairsample));
  for (const auto& [k, v] : params) set_param(booster, k, v);

  int best_round = o.rounds - 1;
  double best_regret = std::numeric_limits<double>::infinity();
  int rounds_run = 0;
  for (int it = 0; it < o.rounds; ++it) {
    api.check(api.XGBoosterUpdateOneIter(booster.h, it, train.h), "training round");
    rounds_run = it + 1;
    if (progress) progress("xgboost: boosting rounds", static_cast<size_t>(it + 1), static_cast<size_t>(o.rounds));
    if (!early) continue;
    // The validation matrix is in the booster's prediction cache: each call adds the new tree.
    static const char* config =
        R"({"type": 0, "training": false, "iteration_begin": 0, "iteration_end": 0, "strict_shape": false})";
    const bst_ulong* shape = nullptr;
    bst_ulong dim = 0;
    const float* scores = nullptr;
    api.check(api.XGBoosterPredictFromDMatrix(booster.h, valid.h, config, &shape, &dim, &scores), "predict");
    const double regret = validation_loss(held_part, scores);
    if (regret < best_regret) {
      best_regret = regret;
      best_round = it;
    } else if (it - best_round >= o.early_stopping) {
      break;
    }
  }
  // What early stopping chose, recorded in the model file (refit: retrained on every group).
  const auto early_stopping_info = [&](bool refit) {
    return nlohmann::json{{"early_stopping",
                           {{"rounds", best_round + 1},
                            {"rounds_run", rounds_run},
                            {"validation_groups", held_part.groups.size()},
                            {"validation_regret", best_regret},
                            {"patience", o.early_stopping},
                            {"fraction", o.early_stopping_fraction},
                            {"refit", refit}}}};
  };
  std::string blob;
  if (early && o.early_stopping_refit) {
    // The held-out slice only chose the round count: refit on every group with that many rounds.
    TrainOptions refit = o;
    refit.early_stopping = 0;
    refit.rounds = best_round + 1;
    auto model = train_xgboost(data, refit, progress);
    model->info().provenance = early_stopping_info(true);
    return model;
  }
  if (early && best_round + 1 < rounds_run) {
    Booster sliced;
    api.check(api.XGBoosterSlice(booster.h, 0, best_round + 1, 1, &sliced.h), "slice the booster");
    blob = save_booster(sliced);
  } else {
    blob = save_booster(booster);
  }
  // Node statistics zeroed (merge_boosters of one booster: the same scores, bit for bit).
  auto model = std::make_unique<XgbModel>(merge_boosters({blob}), 1, columns);
  if (early)
    model->info().provenance = early_stopping_info(false);
  return model;
}

namespace {

// XGBoost's JSON writes non-finite numbers (statistics of some nodes) as bare NaN / Infinity,
// which strict JSON (nlohmann) refuses: outside strings they are turned into marker strings and
// back. (Its UBJSON is no way around it: libxgboost reads only the UBJSON it writes itself.)
constexpr std::string_view kNonFinite[] = {"-Infinity", "Infinity", "-NaN", "NaN"};
std::string quote_non_finite(std::string_view text) {
  std::string out;
  out.reserve(text.size() + 64);
  bool in_string = false;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      out += c;
      if (c == '\\' && i + 1 < text.size()) out += text[++i];
      else if (c == '"') in_string = false;
      continue;
    }
    if (c == '"') {
      in_string = true;
      out += c;
      continue;
    }
    bool replaced = false;
    for (std::string_view token : kNonFinite)
      if (text.substr(i).starts_with(token)) {
        out += "\"cks-non-finite:" + std::string(token) + "\"";
        i += token.size() - 1;
        replaced = true;
        break;
      }
    if (!replaced) out += c;
  }
  return out;
}
std::string unquote_non_finite(std::string text) {
  for (std::string_view token : kNonFinite) {
    const std::string marker = "\"cks-non-finite:" + std::string(token) + "\"";
    for (size_t at = text.find(marker); at != std::string::npos; at = text.find(marker, at + token.size()))
      text.replace(at, marker.size(), token);
  }
  return text;
}

}  // namespace

// The boosters `blobs` (UBJSON) as one booster scoring their mean: their trees in order, leaves
// scaled by 1/K, base score the mean. The trees' node statistics (loss change, hessian sum, base
// weight), which prediction never reads, are zeroed: they are most of a booster's entropy, so
// the model file compresses about 4x smaller (docs/models.md, "Model file"). For K = 1 the scores
// are the booster's own, bit for bit. Needs libxgboost: it writes its JSON and reads the result
// back, so that the booster written is one it loads.
std::string merge_boosters(const std::vector<std::string_view>& blobs) {
  if (blobs.empty()) throw Error("merge: no boosters given");
  const XgbApi& api = XgbApi::get();
  const float scale = 1.0f / static_cast<float>(blobs.size());
  nlohmann::json merged;
  nlohmann::json trees = nlohmann::json::array(), tree_info = nlohmann::json::array();
  double base_sum = 0;
  for (std::string_view blob : blobs) {
    Booster b;
    api.check(api.XGBoosterCreate(nullptr, 0, &b.h), "create booster");
    api.check(api.XGBoosterLoadModelFromBuffer(b.h, blob.data(), blob.size()), "load model");
    bst_ulong len = 0;
    const char* data = nullptr;
    api.check(api.XGBoosterSaveModelToBuffer(b.h, R"({"format": "json"})", &len, &data), "save model");
    nlohmann::json j = nlohmann::json::parse(quote_non_finite(std::string_view(data, len)));
    if (j.at("learner").at("gradient_booster").at("name") != "gbtree") throw Error("merge: only gbtree boosters");
    nlohmann::json& model = j.at("learner").at("gradient_booster").at("model");
    {
      std::string base = j.at("learner").at("learner_model_param").at("base_score").get<std::string>();
      std::erase_if(base, [](char c) { return c == '[' || c == ']'; });
      base_sum += std::strtod(base.c_str(), nullptr);
    }
    for (nlohmann::json& tree : model.at("trees")) {
      const auto& left = tree.at("left_children");
      auto& cond = tree.at("split_conditions");
      // A leaf's value is its split condition: scaled by 1/K, the sum over every member's trees is
      // the members' mean (up to float rounding; exact for K = 1).
      if (blobs.size() > 1)
        for (size_t i = 0; i < left.size(); ++i)
          if (left[i].get<int64_t>() < 0) cond[i] = static_cast<double>(cond[i].get<float>() * scale);
      for (const char* stat : {"loss_changes", "sum_hessian", "base_weights"})
        for (auto& v : tree.at(stat)) v = 0.0;
      tree["id"] = trees.size();
      trees.push_back(std::move(tree));
      tree_info.push_back(0);
    }
    if (merged.is_null()) merged = std::move(j);
  }
  nlohmann::json& model = merged.at("learner").at("gradient_booster").at("model");
  model["trees"] = std::move(trees);
  model["tree_info"] = std::move(tree_info);
  model.at("gbtree_model_param")["num_trees"] = std::to_string(model["trees"].size());
  if (model.contains("iteration_indptr")) {  // XGBoost >= 2: one tree per boosting round
    nlohmann::json indptr = nlohmann::json::array();
    for (size_t i = 0; i <= model["trees"].size(); ++i) indptr.push_back(i);
    model["iteration_indptr"] = std::move(indptr);
  }
  if (blobs.size() > 1) {  // XGBoost writes base_score as a string ("5E-1", or "[5E-1]" in 2.x)
    const double base = base_sum / static_cast<double>(blobs.size());
    auto& param = merged.at("learner").at("learner_model_param");
    const bool bracketed = param.at("base_score").get<std::string>().starts_with("[");
    param["base_score"] = bracketed ? "[" + format_double(base) + "]" : format_double(base);
  }
  const std::string text = unquote_non_finite(merged.dump());
  Booster b;
  api.check(api.XGBoosterCreate(nullptr, 0, &b.h), "create booster");
  api.check(api.XGBoosterLoadModelFromBuffer(b.h, text.data(), text.size()), "load the merged booster");
  return save_booster(b);
}

std::unique_ptr<Model> average_xgboost(const std::vector<const Model*>& members) {
  if (members.empty()) throw Error("average: no models given");
  std::vector<std::string_view> blobs;
  const std::vector<uint32_t>* columns = nullptr;
  for (const Model* member : members) {
    const auto* m = dynamic_cast<const XgbModel*>(member);
    if (!m) throw Error("average: every model must be an XGBoost model");
    if (columns && *columns != m->columns()) throw Error("average: the models were trained on different feature sets");
    columns = &m->columns();
    blobs.push_back(m->blob());
  }
  return std::make_unique<XgbModel>(merge_boosters(blobs), 1, *columns);
}

bool xgboost_library_available() {
  try {
    XgbApi::get();
    return true;
  } catch (const Error&) {
    return false;
  }
}

void xgboost_library_predict(const Model& model, const FeatureMatrix& x, std::span<float> out) {
  const auto* m = dynamic_cast<const XgbModel*>(&model);
  if (!m) throw Error("xgboost_library_predict: not an XGBoost model");
  if (out.size() != x.rows) throw Error("predict: output size differs from the row count");
  const XgbApi& api = XgbApi::get();
  Booster booster;
  api.check(api.XGBoosterCreate(nullptr, 0, &booster.h), "create booster");
  api.check(api.XGBoosterLoadModelFromBuffer(booster.h, m->blob().data(), m->blob().size()), "load model");
  set_param(booster, "nthread", "1");
  // In-place prediction on a dense array (numpy's __array_interface__ protocol). "missing" is
  // NaN, which XGBoost's JSON reader accepts.
  static const char* config =
      R"({"type": 0, "training": false, "iteration_begin": 0, "iteration_end": 0, "strict_shape": false, "cache_id": 0, "missing": NaN})";
  for (size_t begin = 0; begin < x.rows; begin += kPredictBlock) {
    const size_t end = std::min(x.rows, begin + kPredictBlock);
    const std::vector<float> rows = xgb_rows(x, begin, end, m->columns());
    const size_t cols = m->columns().empty() ? x.cols : m->columns().size();
    const std::string values = R"({"data": [)" + std::to_string(reinterpret_cast<uintptr_t>(rows.data())) +
                               R"(, true], "shape": [)" + std::to_string(end - begin) + ", " + std::to_string(cols) +
                               R"(], "typestr": "<f4", "version": 3})";
    const bst_ulong* shape = nullptr;
    bst_ulong dim = 0;
    const float* result = nullptr;
    api.check(api.XGBoosterPredictFromDense(booster.h, values.c_str(), config, nullptr, &shape, &dim, &result),
              "predict");
    std::copy(result, result + (end - begin), out.begin() + static_cast<std::ptrdiff_t>(begin));
  }
}

std::unique_ptr<Model> load_xgboost(const nlohmann::json& parameters) {
  const std::string encoding = parameters.at("encoding").get<std::string>();
  if (encoding != "ubj+base64" && encoding != "ubj+xz+base64")
    throw Error("model: unknown XGBoost encoding '" + encoding + "' (expected ubj+xz+base64 or ubj+base64)");
  std::vector<uint32_t> columns;
  if (parameters.contains("columns")) {
    // A feature set: the booster's features are these schema columns.
    for (const auto& name : parameters.at("columns"))
      columns.push_back(static_cast<uint32_t>(FeatureSchema::get().index(name.get<std::string>())));
    if (columns.empty() || parameters.at("features").get<size_t>() != columns.size())
      throw Error("model: XGBoost model's feature count disagrees with its columns");
  } else if (parameters.at("features").get<size_t>() != FeatureSchema::get().size()) {
    throw Error("model: XGBoost model has another feature count than the schema");
  }
  std::string booster = base64_decode(parameters.at("booster").get<std::string>());
  if (encoding == "ubj+xz+base64") booster = xz_decompress(booster, kMaxInputFileBytes);
  return std::make_unique<XgbModel>(std::move(booster), 1, std::move(columns));
}

bool write_xgboost_cache(const Model& model, BinaryWriter& w) {
  const auto* m = dynamic_cast<const XgbModel*>(&model);
  if (!m) return false;
  m->write_cache(w);
  return true;
}

std::unique_ptr<Model> read_xgboost_cache(BinaryReader& r, const std::function<std::string(const BlobRef&)>& blob_source) {
  std::vector<uint32_t> columns = r.vec<uint32_t>();
  for (uint32_t c : columns)
    if (c >= FeatureSchema::get().size()) throw CacheCorrupt("cache entry: feature column out of range");
  TreeEnsemble trees = TreeEnsemble::read(r);
  BlobRef ref;
  ref.hash = r.u64();
  ref.size = r.count(1);
  ref.offset = r.position();
  r.skip(ref.size);
  return std::make_unique<XgbModel>([blob_source, ref] { return blob_source(ref); }, std::move(columns), std::move(trees));
}

std::string xgboost_blob(const Model& model) {
  const auto* m = dynamic_cast<const XgbModel*>(&model);
  if (!m) throw Error("not an XGBoost model");
  return m->blob();
}

}  // namespace cks::models_detail
