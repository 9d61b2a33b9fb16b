// Model B: a multilayer perceptron on the encoded features (encoding.hpp). Inference runs here
// in plain Eigen on raw rows (standardisation folded into the first layer); training runs in
// the libtorch plugin (src/models/torch/), loaded with dlopen when `cks train --model mlp` asks.
#include <dlfcn.h>

#include <Eigen/Dense>
#include <algorithm>
#include <cstdlib>
#include <string>

#include "cks/models.hpp"
#include "models/encoding.hpp"
#include "models/mlp_plugin.h"
#include "models/rankers.hpp"

namespace cks::models_detail {

namespace {

constexpr size_t kBlockRows = 4096;

struct Dense {
  Eigen::MatrixXf weight;  // out x in
  Eigen::VectorXf bias;
};

Dense dense_from_json(const nlohmann::json& j) {
  const auto rows = j.at("weight").get<std::vector<std::vector<float>>>();
  const auto bias = j.at("bias").get<std::vector<float>>();
  if (rows.empty() || rows.size() != bias.size()) throw Error("model: malformed MLP layer");
  Dense d;
  d.weight.resize(static_cast<Eigen::Index>(rows.size()), static_cast<Eigen::Index>(rows[0].size()));
  for (size_t r = 0; r < rows.size(); ++r) {
    if (rows[r].size() != rows[0].size()) throw Error("model: malformed MLP layer");
    for (size_t c = 0; c < rows[r].size(); ++c) d.weight(r, c) = rows[r][c];
  }
  d.bias = Eigen::Map<const Eigen::VectorXf>(bias.data(), static_cast<Eigen::Index>(bias.size()));
  return d;
}

nlohmann::json dense_to_json(const Dense& d) {
  std::vector<std::vector<float>> rows(d.weight.rows(), std::vector<float>(d.weight.cols()));
  for (Eigen::Index r = 0; r < d.weight.rows(); ++r)
    for (Eigen::Index c = 0; c < d.weight.cols(); ++c) rows[r][c] = d.weight(r, c);
  return {{"weight", rows}, {"bias", std::vector<float>(d.bias.data(), d.bias.data() + d.bias.size())}};
}

class MlpModel final : public Model {
 public:
  MlpModel(FoldedLinear input, std::vector<Dense> layers) : input_(std::move(input)), layers_(std::move(layers)) {
    Eigen::Index width = static_cast<Eigen::Index>(input_.outputs());
    for (const Dense& d : layers_) {
      if (d.weight.cols() != width) throw Error("model: MLP layer sizes do not chain");
      width = d.weight.rows();
    }
    if (layers_.empty() || width != 1) throw Error("model: an MLP ends in one output");
  }

  void predict(const FeatureMatrix& x, std::span<float> out) const override {
    Eigen::MatrixXf h, next;
    for (size_t begin = 0; begin < x.rows; begin += kBlockRows) {
      const size_t end = std::min(x.rows, begin + kBlockRows);
      input_.apply(x, begin, end, h);  // rows x hidden0
      for (const Dense& d : layers_) {
        h = h.cwiseMax(0.f);  // ReLU after every layer but the output
        next.noalias() = h * d.weight.transpose();
        next.rowwise() += d.bias.transpose();
        h.swap(next);
      }
      for (size_t r = begin; r < end; ++r) out[r] = h(static_cast<Eigen::Index>(r - begin), 0);
    }
  }

  nlohmann::json parameters() const override {
    nlohmann::json layers = nlohmann::json::array();
    for (const Dense& d : layers_) layers.push_back(dense_to_json(d));
    return {{"input", input_.to_json()}, {"layers", layers}};
  }

 private:
  FoldedLinear input_;       // first layer on raw rows
  std::vector<Dense> layers_;  // the rest; ReLU before each
};

struct Plugin {
  cks_mlp_train_fn train = nullptr;
  cks_mlp_free_fn free = nullptr;
  std::string error;  // why it is unavailable
};

const Plugin& plugin() {
  static const Plugin p = [] {
    Plugin p;
#ifdef CKS_MLP_PLUGIN
    void* lib = dlopen(CKS_MLP_PLUGIN, RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
      p.error = std::string("cannot load the MLP training plugin: ") + dlerror();
      return p;
    }
    p.train = reinterpret_cast<cks_mlp_train_fn>(dlsym(lib, "cks_mlp_train"));
    p.free = reinterpret_cast<cks_mlp_free_fn>(dlsym(lib, "cks_mlp_free"));
    if (!p.train || !p.free) p.error = "the MLP training plugin lacks its entry points";
#else
    p.error = "MLP training needs libtorch (install libtorch-dev and reconfigure with -DCKS_WITH_TORCH=ON)";
#endif
    return p;
  }();
  return p;
}

// The folded first layer must reproduce the trained one on the training rows: W z + b (z as
// the network saw it) against FoldedLinear on the raw rows, on a sample of rows. A fold that
// loses the scores to cancellation (docs/models.md, Model B) fails here instead of shipping.
void check_fold(const FoldedLinear& folded, const Dense& first, const FeatureMatrix& x, const std::vector<float>& z,
                size_t width) {
  const size_t rows = std::min<size_t>(x.rows, 1024);
  if (rows == 0) return;
  Eigen::MatrixXf got;
  folded.apply(x, 0, rows, got);
  const Eigen::Map<const Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>> zs(
      z.data(), static_cast<Eigen::Index>(rows), static_cast<Eigen::Index>(width));
  Eigen::MatrixXd want = zs.cast<double>() * first.weight.cast<double>().transpose();
  want.rowwise() += first.bias.cast<double>().transpose();
  const double err = (got.cast<double>() - want).cwiseAbs().maxCoeff();
  const double size = want.cwiseAbs().maxCoeff();
  if (!(err <= 1e-3 * (1.0 + size)))
    throw Error("MLP export: the folded first layer disagrees with the trained one (max error " + std::to_string(err) +
                " on outputs up to " + std::to_string(size) + ")");
}

const Progress* g_progress = nullptr;  // the plugin's progress callback is a plain function

}  // namespace

std::unique_ptr<Model> train_mlp(const Dataset& data, const TrainOptions& o, const Progress& progress) {
  const Plugin& p = plugin();
  if (!p.train) throw Error(p.error);
  if (o.hidden.empty() || std::any_of(o.hidden.begin(), o.hidden.end(), [](int h) { return h < 1; }))
    throw Error("--hidden needs one or more positive layer widths");
  if (o.epochs < 1 || !(o.learning_rate > 0) || o.pair_cap < 1 || o.needle_top < 0)
    throw Error("MLP options out of range (epochs >= 1, learning rate > 0, pair cap >= 1, needle top >= 0)");
  if (!(o.dropout >= 0 && o.dropout < 1) || !(o.weight_decay >= 0) || o.batch_rows < 1)
    throw Error("MLP options out of range (dropout in [0, 1), weight decay >= 0, batch >= 1)");
  const Encoding enc = Encoding::fit(data.x, feature_mask(o.features));
  std::vector<float> z(data.rows() * enc.width);
  std::vector<double> row(enc.width);
  for (size_t r = 0; r < data.rows(); ++r) {
    enc.encode(data.x.row(r), row.data());
    std::copy(row.begin(), row.end(), z.begin() + static_cast<std::ptrdiff_t>(r * enc.width));
  }
  std::vector<uint64_t> begins;
  for (const auto& g : data.groups) begins.push_back(g.begin);
  begins.push_back(data.rows());
  std::vector<int32_t> grade(data.grade.begin(), data.grade.end());
  const nlohmann::json options = {{"objective", o.objective},   {"hidden", o.hidden},
                                  {"epochs", o.epochs},         {"learning_rate", o.learning_rate},
                                  {"pair_cap", o.pair_cap},     {"needle_top", o.needle_top},
                                  {"seed", o.seed},             {"threads", resolve_threads(o.threads)},
                                  {"dropout", o.dropout},       {"weight_decay", o.weight_decay},
                                  {"batch_rows", o.batch_rows}};
  const std::string options_text = options.dump();
  char* out = nullptr;
  g_progress = progress ? &progress : nullptr;
  const int rc = p.train(z.data(), data.rows(), enc.width, data.y.data(), grade.data(), begins.data(), data.groups.size(),
                         options_text.c_str(),
                         [](uint64_t done, uint64_t total) {
                           if (g_progress) (*g_progress)("mlp: epochs", done, total);
                         },
                         &out);
  g_progress = nullptr;
  const std::string text = out ? out : "";
  if (out) p.free(out);
  if (rc != 0) throw Error("MLP training failed: " + text);
  const auto layers_json = nlohmann::json::parse(text).at("layers");
  const Dense first = dense_from_json(layers_json.at(0));
  std::vector<Dense> rest;
  for (size_t l = 1; l < layers_json.size(); ++l) rest.push_back(dense_from_json(layers_json[l]));
  FoldedLinear folded(enc, first.weight.cast<double>(), first.bias.cast<double>());
  check_fold(folded, first, data.x, z, enc.width);
  return std::make_unique<MlpModel>(std::move(folded), std::move(rest));
}

std::unique_ptr<Model> load_mlp(const nlohmann::json& parameters) {
  std::vector<Dense> layers;
  for (const auto& l : parameters.at("layers")) layers.push_back(dense_from_json(l));
  return std::make_unique<MlpModel>(FoldedLinear::from_json(parameters.at("input")), std::move(layers));
}

}  // namespace cks::models_detail

namespace cks {
bool mlp_training_available() { return models_detail::plugin().train != nullptr; }
}  // namespace cks
