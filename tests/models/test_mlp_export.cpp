// Model B's export (docs/models.md): the standardisation folded into the first layer must give
// the layer the network was trained with, on real feature rows. The hardware columns of a
// one-preset corpus are constant and huge (hw_peak_flops ~ 1e15); the fold once kept an
// untrained random weight on them, and b - W mean + W x cancelled in float into noise of ~1e6
// that swamped every score (the first MLP on the H200 data ranked worse than random).
#include <gtest/gtest.h>

#include <Eigen/Dense>
#include <cmath>
#include <limits>
#include <random>

#include "models/encoding.hpp"
#include "models/synthetic.hpp"

// End to end (a trained MLP far better than random): ModelsMlp in test_rankers.cpp.

using namespace cks;
using models_detail::Encoding;
using models_detail::FoldedLinear;

namespace {

// 12 training + 4 evaluation groups of 120 candidates, built once for the suite.
const Dataset& data() {
  static test::ScratchDir dir;
  static const Dataset d = test::synthetic_dataset(dir.file("mlp-export.db"), 12, 4, 120, 5);
  return d;
}

const Encoding::Numeric& numeric_of(const Encoding& enc, const std::string& name) {
  const size_t column = FeatureSchema::get().index(name);
  for (const auto& n : enc.numeric)
    if (n.column == column) return n;
  throw std::runtime_error("not a numeric column: " + name);
}

// W z + b in double on the encoding of rows [0, x.rows).
Eigen::MatrixXd layer_on_encoding(const Encoding& enc, const FeatureMatrix& x, const Eigen::MatrixXd& w,
                                  const Eigen::VectorXd& b) {
  Eigen::MatrixXd z;
  enc.encode_rows(x, 0, x.rows, z);
  Eigen::MatrixXd h = z * w.transpose();
  h.rowwise() += b.transpose();
  return h;
}

}  // namespace

TEST(ModelsEncoding, ConstantColumnsEncodeAsZero) {
  const Dataset& d = data();
  const Encoding enc = Encoding::fit(d.x);
  const auto& peak = numeric_of(enc, "hw_peak_flops");
  EXPECT_TRUE(peak.constant);
  EXPECT_EQ(peak.mean, static_cast<double>(d.x.at(0, peak.column)));  // exact, not a rounded sum
  EXPECT_FALSE(numeric_of(enc, "tiles").constant);
  Eigen::MatrixXd z;
  enc.encode_rows(d.x, 0, d.rows(), z);
  for (size_t j = 0; j < enc.numeric.size(); ++j) {
    if (enc.numeric[j].constant) {
      EXPECT_EQ(z.col(static_cast<Eigen::Index>(j)).cwiseAbs().maxCoeff(), 0.0) << j;
    } else {  // standardised
      EXPECT_NEAR(z.col(static_cast<Eigen::Index>(j)).mean(), 0.0, 1e-9) << j;
      EXPECT_NEAR(z.col(static_cast<Eigen::Index>(j)).squaredNorm() / z.rows(), 1.0, 1e-9) << j;
    }
  }
}

// A first layer as torch initialises it (uniform +-1/sqrt(fan_in), every input weighted,
// constant ones included), folded, against the layer on the encoding.
TEST(ModelsEncoding, FoldedLayerMatchesTheLayerOnTheEncoding) {
  const Dataset& d = data();
  const Encoding enc = Encoding::fit(d.subset(d.train_groups()).x);
  std::mt19937_64 rng(7);
  const double bound = 1.0 / std::sqrt(static_cast<double>(enc.width));
  std::uniform_real_distribution<double> u(-bound, bound);
  Eigen::MatrixXd w(16, static_cast<Eigen::Index>(enc.width));
  for (Eigen::Index i = 0; i < w.size(); ++i) w.data()[i] = u(rng);
  Eigen::VectorXd b(16);
  for (Eigen::Index i = 0; i < b.size(); ++i) b(i) = u(rng);
  const FoldedLinear folded(enc, w, b);

  // Every row (training and evaluation groups), plus copies with NaN / inf numerics and an
  // out-of-range level, which both sides must treat alike.
  FeatureMatrix x = d.x;
  const FeatureSchema& schema = FeatureSchema::get();
  const size_t extra = 3;
  for (size_t e = 0; e < extra; ++e) x.data.insert(x.data.end(), d.x.row(e), d.x.row(e) + d.x.cols);
  x.rows += extra;
  x.data[(d.rows() + 0) * x.cols + schema.index("tiles")] = std::numeric_limits<float>::quiet_NaN();
  x.data[(d.rows() + 1) * x.cols + schema.index("waves")] = std::numeric_limits<float>::infinity();
  x.data[(d.rows() + 2) * x.cols + schema.index("mainloop")] = 99.0f;

  const Eigen::MatrixXd want = layer_on_encoding(enc, x, w, b);
  Eigen::MatrixXf got;
  folded.apply(x, 0, x.rows, got);
  const double err = (got.cast<double>() - want).cwiseAbs().maxCoeff();
  EXPECT_LT(err, 1e-4 * (1.0 + want.cwiseAbs().maxCoeff())) << "folded first layer disagrees with W z + b";

  // The model file keeps it (constant columns are not stored).
  const FoldedLinear loaded = FoldedLinear::from_json(folded.to_json());
  Eigen::MatrixXf again;
  loaded.apply(x, 0, x.rows, again);
  EXPECT_EQ(again, got);
  // (The JSON is held: a range-for over a reference into a temporary dangles, ASan's heap-use-after-free.)
  const nlohmann::json file = folded.to_json();
  for (const auto& name : file.at("numeric").at("features")) EXPECT_NE(name, "hw_peak_flops");
}
