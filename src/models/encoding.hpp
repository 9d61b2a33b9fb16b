// Feature encoding shared by the ridge and MLP rankers (paper, Model B / ridge baseline):
// numeric columns standardised with training-set mean and standard deviation after mapping
// NaN/+-inf to 0; categorical columns one-hot encoded over the schema's frozen level sets.
// A numeric column that is constant in the training rows (the hardware columns of a one-preset
// corpus) carries no information: it encodes as 0 and the fold drops it. For deployment the
// standardisation is folded into the first linear layer (FoldedLinear), so inference runs on
// raw feature rows.
#pragma once
#include <Eigen/Dense>
#include <cmath>
#include <vector>

#include <nlohmann/json.hpp>

#include "cks/features.hpp"

namespace cks::models_detail {

// Non-finite features enter as 0 (before scaling).
inline double clean(float v) { return std::isfinite(v) ? static_cast<double>(v) : 0.0; }

struct Encoding {
  struct Numeric {
    size_t column = 0;
    double mean = 0, scale = 1;  // z = (clean(x) - mean) / scale; scale = std
    // Constant over the training rows (std ~ 0): z = 0 always. Without this, a fold of such a
    // column (mean up to ~1e15 for hw_peak_flops) is a float cancellation b - W mean + W x that
    // swamps the score (the first MLP on real data scored noise of ~1e6).
    bool constant = false;
  };
  struct Categorical {
    size_t column = 0, offset = 0, levels = 0;  // one-hot block [offset, offset + levels) of z
  };
  std::vector<Numeric> numeric;  // z[0 .. numeric.size()) in this order
  std::vector<Categorical> categorical;
  size_t width = 0;

  // Means and population standard deviations over the rows of x. `kept` (a feature set's mask,
  // empty = every column): columns not kept are left out of z altogether.
  static Encoding fit(const FeatureMatrix& x, const std::vector<bool>& kept = {});
  // z of one raw row (out has `width` entries). An out-of-range level code encodes as all zeros.
  void encode(const float* row, double* out) const;
  // z of rows [begin, end) of x into the rows of out.
  void encode_rows(const FeatureMatrix& x, size_t begin, size_t end, Eigen::MatrixXd& out) const;
};

// A first linear layer h = W z + b over the encoding, folded onto raw rows:
//   h = b' + sum_numeric W'_j clean(x_j) + sum_categorical T_c[:, level(x_c)]
// with W'_j = W_j / scale_j, b' = b - sum_j W_j mean_j / scale_j, T_c = W's one-hot block of c.
// Constant numeric columns (z_j = 0) are left out, whatever W_j is (an MLP's weights on them are
// never trained and keep their random initialisation).
class FoldedLinear {
 public:
  FoldedLinear() = default;
  FoldedLinear(const Encoding& enc, const Eigen::MatrixXd& w, const Eigen::VectorXd& b);
  size_t outputs() const { return static_cast<size_t>(bias_.size()); }
  // out (rows x outputs) = layer applied to rows [begin, end) of x.
  void apply(const FeatureMatrix& x, size_t begin, size_t end, Eigen::MatrixXf& out) const;

  nlohmann::json to_json() const;
  // Feature names are resolved against the current schema (Error on an unknown name).
  static FoldedLinear from_json(const nlohmann::json& j);

 private:
  std::vector<size_t> numeric_columns_;
  Eigen::MatrixXf numeric_weights_;  // outputs x numeric
  struct Table {
    size_t column = 0;
    Eigen::MatrixXf weights;  // outputs x levels
  };
  std::vector<Table> tables_;
  Eigen::VectorXf bias_;
};

}  // namespace cks::models_detail
