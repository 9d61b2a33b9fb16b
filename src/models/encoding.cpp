#include "models/encoding.hpp"

namespace cks::models_detail {

Encoding Encoding::fit(const FeatureMatrix& x, const std::vector<bool>& kept) {
  const FeatureSchema& schema = FeatureSchema::get();
  Encoding e;
  for (size_t c = 0; c < schema.size(); ++c) {
    if (!kept.empty() && !kept.at(c)) continue;
    if (schema[c].kind == FeatureKind::categorical) {
      e.categorical.push_back({c, 0, schema[c].levels.size()});
    } else {
      e.numeric.push_back({c, 0.0, 1.0});
    }
  }
  e.width = e.numeric.size();
  for (auto& cat : e.categorical) {
    cat.offset = e.width;
    e.width += cat.levels;
  }
  const double n = static_cast<double>(x.rows);
  for (auto& num : e.numeric) {
    if (x.rows == 0) {
      num.constant = true;
      continue;
    }
    // Sums shifted by the first value (exact for a constant column, accurate for large
    // magnitudes), then centred squares.
    const double first = clean(x.at(0, num.column));
    double shifted = 0;
    for (size_t r = 0; r < x.rows; ++r) shifted += clean(x.at(r, num.column)) - first;
    num.mean = first + shifted / n;
    double sq = 0;
    for (size_t r = 0; r < x.rows; ++r) {
      const double d = clean(x.at(r, num.column)) - num.mean;
      sq += d * d;
    }
    const double sd = std::sqrt(sq / n);
    num.constant = !(sd > 1e-12 * std::max(1.0, std::abs(num.mean)));
    num.scale = num.constant ? 1.0 : sd;
  }
  return e;
}

void Encoding::encode(const float* row, double* out) const {
  for (size_t i = 0; i < numeric.size(); ++i)
    out[i] = numeric[i].constant ? 0.0 : (clean(row[numeric[i].column]) - numeric[i].mean) / numeric[i].scale;
  for (const auto& cat : categorical) {
    for (size_t l = 0; l < cat.levels; ++l) out[cat.offset + l] = 0.0;
    const float code = row[cat.column];
    if (code >= 0 && code < static_cast<float>(cat.levels) && code == std::floor(code))
      out[cat.offset + static_cast<size_t>(code)] = 1.0;
  }
}

void Encoding::encode_rows(const FeatureMatrix& x, size_t begin, size_t end, Eigen::MatrixXd& out) const {
  // Row-major scratch so encode() writes contiguous rows.
  Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor> z(end - begin, width);
  for (size_t r = begin; r < end; ++r) encode(x.row(r), z.row(r - begin).data());
  out = z;
}

FoldedLinear::FoldedLinear(const Encoding& enc, const Eigen::MatrixXd& w, const Eigen::VectorXd& b) {
  const Eigen::Index outs = w.rows();
  Eigen::VectorXd bias = b;
  std::vector<size_t> kept;  // indices into enc.numeric of the non-constant columns
  for (size_t j = 0; j < enc.numeric.size(); ++j)
    if (!enc.numeric[j].constant) kept.push_back(j);
  numeric_weights_.resize(outs, static_cast<Eigen::Index>(kept.size()));
  for (size_t k = 0; k < kept.size(); ++k) {
    const auto& num = enc.numeric[kept[k]];
    numeric_columns_.push_back(num.column);
    numeric_weights_.col(static_cast<Eigen::Index>(k)) = (w.col(kept[k]) / num.scale).cast<float>();
    bias -= w.col(kept[k]) * (num.mean / num.scale);
  }
  for (const auto& cat : enc.categorical)
    tables_.push_back({cat.column, w.middleCols(cat.offset, cat.levels).cast<float>()});
  bias_ = bias.cast<float>();
}

void FoldedLinear::apply(const FeatureMatrix& x, size_t begin, size_t end, Eigen::MatrixXf& out) const {
  const Eigen::Index rows = static_cast<Eigen::Index>(end - begin);
  Eigen::MatrixXf raw(rows, static_cast<Eigen::Index>(numeric_columns_.size()));
  // Column by column: raw is column-major (a row-major fill strides by the block's row count).
  for (size_t j = 0; j < numeric_columns_.size(); ++j) {
    const size_t c = numeric_columns_[j];
    float* dst = raw.col(static_cast<Eigen::Index>(j)).data();
    for (Eigen::Index r = 0; r < rows; ++r) dst[r] = static_cast<float>(clean(x.row(begin + r)[c]));
  }
  out.noalias() = raw * numeric_weights_.transpose();
  out.rowwise() += bias_.transpose();
  if (tables_.empty()) return;
  // The categorical tables add one column of weights per row: in a row-major copy, so that a
  // row's outputs are contiguous (same additions in the same order as on `out` itself).
  Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor> acc = out;
  for (const Table& t : tables_) {
    for (Eigen::Index r = 0; r < rows; ++r) {
      const float code = x.row(begin + r)[t.column];
      if (code >= 0 && code < static_cast<float>(t.weights.cols()) && code == std::floor(code))
        acc.row(r) += t.weights.col(static_cast<Eigen::Index>(code)).transpose();
    }
  }
  out = acc;
}

namespace {
nlohmann::json matrix_json(const Eigen::MatrixXf& m) {
  nlohmann::json rows = nlohmann::json::array();
  for (Eigen::Index r = 0; r < m.rows(); ++r) {
    std::vector<float> row(m.cols());
    for (Eigen::Index c = 0; c < m.cols(); ++c) row[c] = m(r, c);
    rows.push_back(row);
  }
  return rows;
}
Eigen::MatrixXf matrix_from_json(const nlohmann::json& j, Eigen::Index rows, Eigen::Index cols, const char* what) {
  if (!j.is_array() || static_cast<Eigen::Index>(j.size()) != rows) throw Error(std::string("model: bad shape of ") + what);
  Eigen::MatrixXf m(rows, cols);
  for (Eigen::Index r = 0; r < rows; ++r) {
    const auto& row = j[r];
    if (!row.is_array() || static_cast<Eigen::Index>(row.size()) != cols) throw Error(std::string("model: bad shape of ") + what);
    for (Eigen::Index c = 0; c < cols; ++c) m(r, c) = row[c].get<float>();
  }
  return m;
}
}  // namespace

nlohmann::json FoldedLinear::to_json() const {
  const FeatureSchema& schema = FeatureSchema::get();
  nlohmann::json j;
  j["bias"] = std::vector<float>(bias_.data(), bias_.data() + bias_.size());
  std::vector<std::string> names;
  for (size_t c : numeric_columns_) names.emplace_back(schema[c].name);
  j["numeric"] = {{"features", names}, {"weights", matrix_json(numeric_weights_)}};
  nlohmann::json cats = nlohmann::json::array();
  for (const Table& t : tables_) cats.push_back({{"feature", schema[t.column].name}, {"weights", matrix_json(t.weights)}});
  j["categorical"] = cats;
  return j;
}

FoldedLinear FoldedLinear::from_json(const nlohmann::json& j) {
  const FeatureSchema& schema = FeatureSchema::get();
  FoldedLinear f;
  const auto bias = j.at("bias").get<std::vector<float>>();
  f.bias_ = Eigen::Map<const Eigen::VectorXf>(bias.data(), static_cast<Eigen::Index>(bias.size()));
  const Eigen::Index outs = f.bias_.size();
  for (const auto& name : j.at("numeric").at("features")) f.numeric_columns_.push_back(schema.index(name.get<std::string>()));
  f.numeric_weights_ = matrix_from_json(j.at("numeric").at("weights"), outs,
                                        static_cast<Eigen::Index>(f.numeric_columns_.size()), "numeric weights");
  for (const auto& t : j.at("categorical")) {
    const size_t column = schema.index(t.at("feature").get<std::string>());
    f.tables_.push_back({column, matrix_from_json(t.at("weights"), outs,
                                                  static_cast<Eigen::Index>(schema[column].levels.size()),
                                                  "categorical weights")});
  }
  return f;
}

}  // namespace cks::models_detail
