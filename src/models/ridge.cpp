// Ridge baseline (paper eq. 9): least squares on the encoded features z with ell2 shrinkage,
//   min_{w,b} sum_i (y_i - b - w.z_i)^2 + lambda ||w||^2,
// solved in closed form after centring z and y (the intercept is not shrunk):
//   (Zc^T Zc + lambda I) w = Zc^T yc,  b = mean(y) - mean(z).w,
// with Zc^T Zc = Z^T Z - n mu mu^T and Zc^T yc = Z^T y - n mu ybar accumulated in row blocks.
// Target y = T / T*_g. Deployed folded onto raw rows (encoding.hpp).
#include <Eigen/Dense>

#include "cks/models.hpp"
#include "models/encoding.hpp"
#include "models/rankers.hpp"

namespace cks::models_detail {

namespace {

constexpr size_t kBlockRows = 4096;

class RidgeModel final : public Model {
 public:
  explicit RidgeModel(FoldedLinear layer) : layer_(std::move(layer)) {}
  void predict(const FeatureMatrix& x, std::span<float> out) const override {
    Eigen::MatrixXf h;
    for (size_t begin = 0; begin < x.rows; begin += kBlockRows) {
      const size_t end = std::min(x.rows, begin + kBlockRows);
      layer_.apply(x, begin, end, h);
      for (size_t r = begin; r < end; ++r) out[r] = h(static_cast<Eigen::Index>(r - begin), 0);
    }
  }
  nlohmann::json parameters() const override { return {{"linear", layer_.to_json()}}; }

 private:
  FoldedLinear layer_;
};

}  // namespace

std::unique_ptr<Model> train_ridge(const Dataset& data, const TrainOptions& options, const Progress& progress) {
  if (!(options.ridge_lambda >= 0)) throw Error("ridge lambda must be >= 0");
  const Encoding enc = Encoding::fit(data.x, feature_mask(options.features));
  const Eigen::Index d = static_cast<Eigen::Index>(enc.width);
  Eigen::MatrixXd ztz = Eigen::MatrixXd::Zero(d, d);
  Eigen::VectorXd zty = Eigen::VectorXd::Zero(d), zsum = Eigen::VectorXd::Zero(d);
  double ysum = 0;
  Eigen::MatrixXd z;
  for (size_t begin = 0; begin < data.rows(); begin += kBlockRows) {
    const size_t end = std::min(data.rows(), begin + kBlockRows);
    enc.encode_rows(data.x, begin, end, z);
    Eigen::VectorXd y(static_cast<Eigen::Index>(end - begin));
    for (size_t r = begin; r < end; ++r) y(static_cast<Eigen::Index>(r - begin)) = data.y[r];
    ztz.selfadjointView<Eigen::Lower>().rankUpdate(z.transpose());
    zty.noalias() += z.transpose() * y;
    zsum += z.colwise().sum().transpose();
    ysum += y.sum();
    if (progress) progress("ridge: accumulating", end, data.rows());
  }
  const double n = static_cast<double>(data.rows());
  const Eigen::VectorXd mu = zsum / n;
  const double ybar = ysum / n;
  Eigen::MatrixXd a = ztz.selfadjointView<Eigen::Lower>();
  a.noalias() -= n * mu * mu.transpose();
  a.diagonal().array() += options.ridge_lambda;
  const Eigen::VectorXd rhs = zty - n * mu * ybar;
  // lambda > 0 makes the system positive definite; without shrinkage constant columns make it
  // singular, so take the minimum-norm least-squares solution.
  const Eigen::VectorXd w = options.ridge_lambda > 0 ? Eigen::VectorXd(a.ldlt().solve(rhs))
                                                     : Eigen::VectorXd(a.completeOrthogonalDecomposition().solve(rhs));
  Eigen::VectorXd b(1);
  b(0) = ybar - mu.dot(w);
  return std::make_unique<RidgeModel>(FoldedLinear(enc, w.transpose(), b));
}

std::unique_ptr<Model> load_ridge(const nlohmann::json& parameters) {
  FoldedLinear layer = FoldedLinear::from_json(parameters.at("linear"));
  if (layer.outputs() != 1) throw Error("model: a ridge model has one output");
  return std::make_unique<RidgeModel>(std::move(layer));
}

}  // namespace cks::models_detail
