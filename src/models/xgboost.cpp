// Model A: gradient-boosted trees, trained through XGBoost's C API (libxgboost, loaded with
// dlopen so that cks runs where XGBoost is not installed: only training needs it). Scoring is
// native (tree_ensemble.hpp): the saved booster is parsed at load and evaluated in cks_core. Objectives rank:ndcg / rank:pairwise on the relevance rel(g, c) with query groups,
// or reg:squarederror on y (ablation). Categorical schema columns are native categoricals
// (feature type "c", level code = frozen level index); NaN is missing and +-inf is mapped to
// missing because XGBoost rejects infinities.
#include <dlfcn.h>
#include <xgboost/c_api.h>

#include <atomic>
#include <cmath>
#include <mutex>
#include <thread>

#include "cks/models.hpp"
#include "models/base64.hpp"
#include "models/rankers.hpp"
#include "models/tree_ensemble.hpp"

namespace cks::models_detail {

namespace {

// The entry points used, resolved once from libxgboost.
struct XgbApi {
#define CKS_XGB_FUNCTIONS(X)                                                                               \
  X(XGBGetLastError) X(XGBoostVersion) X(XGDMatrixCreateFromMat) X(XGDMatrixSetFloatInfo)                  \
  X(XGDMatrixSetUIntInfo) X(XGDMatrixSetStrFeatureInfo) X(XGDMatrixFree) X(XGBoosterCreate)                \
  X(XGBoosterSetParam) X(XGBoosterUpdateOneIter) X(XGBoosterSaveModelToBuffer)                              \
  X(XGBoosterLoadModelFromBuffer) X(XGBoosterPredictFromDense) X(XGBoosterFree)
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

// A copy of rows [begin, end) with +-inf replaced by NaN (missing).
std::vector<float> xgb_rows(const FeatureMatrix& x, size_t begin, size_t end) {
  std::vector<float> v(x.data.begin() + begin * x.cols, x.data.begin() + end * x.cols);
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
  XgbModel(std::string blob, int threads)
      : blob_(std::move(blob)), trees_(TreeEnsemble::from_xgboost(blob_)), threads_(std::max(1, threads)) {
    if (trees_.features() > FeatureSchema::get().size())
      throw Error("model: XGBoost booster splits on more features than the schema has");
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

  nlohmann::json parameters() const override {
    return {{"encoding", "ubj+base64"}, {"booster", base64_encode(blob_)}, {"features", FeatureSchema::get().size()}};
  }

  const std::string& blob() const { return blob_; }
  const TreeEnsemble& trees() const { return trees_; }

 private:
  std::string blob_;
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

std::unique_ptr<Model> train_xgboost(const Dataset& data, const TrainOptions& o, const Progress& progress) {
  if (o.rounds < 1) throw Error("--rounds must be >= 1");
  if (o.max_depth < 1) throw Error("--max-depth must be >= 1");
  if (!(o.eta > 0)) throw Error("--eta must be > 0");
  if (!(o.subsample > 0 && o.subsample <= 1) || !(o.colsample > 0 && o.colsample <= 1))
    throw Error("subsample and colsample must be in (0, 1]");
  const XgbApi& api = XgbApi::get();
  const FeatureSchema& schema = FeatureSchema::get();
  const bool ranking = o.objective != "reg:squarederror";

  DMatrix train;
  {
    const std::vector<float> rows = xgb_rows(data.x, 0, data.rows());
    api.check(api.XGDMatrixCreateFromMat(rows.data(), data.rows(), data.x.cols, std::numeric_limits<float>::quiet_NaN(),
                                         &train.h),
              "create DMatrix");
  }
  std::vector<std::string> names, types;
  for (const auto& f : schema.features()) {
    names.emplace_back(f.name);
    types.emplace_back(f.kind == FeatureKind::categorical ? "c" : "q");
  }
  auto set_str = [&](const char* field, const std::vector<std::string>& v) {
    std::vector<const char*> p;
    for (const auto& s : v) p.push_back(s.c_str());
    api.check(api.XGDMatrixSetStrFeatureInfo(train.h, field, p.data(), p.size()), "set feature info");
  };
  set_str("feature_name", names);
  set_str("feature_type", types);
  const std::vector<float>& label = ranking ? data.relevance : data.y;
  api.check(api.XGDMatrixSetFloatInfo(train.h, "label", label.data(), label.size()), "set labels");
  if (ranking) {
    std::vector<unsigned> sizes;
    for (const auto& g : data.groups) sizes.push_back(static_cast<unsigned>(g.size()));
    api.check(api.XGDMatrixSetUIntInfo(train.h, "group", sizes.data(), sizes.size()), "set groups");
  }

  Booster booster;
  api.check(api.XGBoosterCreate(&train.h, 1, &booster.h), "create booster");
  const int threads = resolve_threads(o.threads);
  auto num = [](double v) { return format_double(v); };
  const std::vector<std::pair<const char*, std::string>> params{
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
  for (const auto& [k, v] : params) set_param(booster, k, v);
  for (int it = 0; it < o.rounds; ++it) {
    api.check(api.XGBoosterUpdateOneIter(booster.h, it, train.h), "training round");
    if (progress) progress("xgboost: boosting rounds", static_cast<size_t>(it + 1), static_cast<size_t>(o.rounds));
  }
  return std::make_unique<XgbModel>(save_booster(booster), 1);
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
    const std::vector<float> rows = xgb_rows(x, begin, end);
    const std::string values = R"({"data": [)" + std::to_string(reinterpret_cast<uintptr_t>(rows.data())) +
                               R"(, true], "shape": [)" + std::to_string(end - begin) + ", " + std::to_string(x.cols) +
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
  if (parameters.at("encoding").get<std::string>() != "ubj+base64") throw Error("model: unknown XGBoost encoding");
  if (parameters.at("features").get<size_t>() != FeatureSchema::get().size())
    throw Error("model: XGBoost model has another feature count than the schema");
  return std::make_unique<XgbModel>(base64_decode(parameters.at("booster").get<std::string>()), 1);
}

}  // namespace cks::models_detail
