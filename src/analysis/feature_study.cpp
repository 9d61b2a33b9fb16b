// The parameter / derived-feature study (the paper's "Table 4"): Spearman's rho between every
// numeric feature and measured throughput, pooled over groups and within each group, for the
// whole selection and per shape partition (definitions in include/cks/analysis.hpp).
#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <tuple>

#include "analysis/stats.hpp"
#include "cks/analysis.hpp"
#include "cks/models.hpp"
#include "cks/sampling.hpp"

namespace cks {

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// The partition values of a partition, in report order.
std::vector<std::string> partition_values(std::string_view partition) {
  if (partition == "all") return {"all"};
  std::vector<std::string> out;
  if (partition == "size")
    for (auto v : {SizeClass::small, SizeClass::medium, SizeClass::large}) out.emplace_back(to_string(v));
  else if (partition == "geometry")
    for (auto v : {Geometry::square, Geometry::tall, Geometry::wide, Geometry::skinny_k}) out.emplace_back(to_string(v));
  else if (partition == "regime")
    for (auto v : {Regime::memory_bound, Regime::balanced, Regime::compute_bound}) out.emplace_back(to_string(v));
  else
    throw std::logic_error("unknown partition " + std::string(partition));
  return out;
}

// A studied column: a numeric schema feature, or the static score (schema_index npos).
struct Column {
  std::string name, group;
  size_t schema_index = static_cast<size_t>(-1);
};

std::vector<Column> studied_columns() {
  const FeatureSchema& schema = FeatureSchema::get();
  std::vector<Column> cols;
  for (size_t j = 0; j < schema.size(); ++j)
    if (schema[j].kind == FeatureKind::numeric)
      cols.push_back({std::string(schema[j].name), std::string(schema[j].group), j});
  cols.push_back({std::string(kStaticScoreFeature), "sampling"});
  return cols;
}

// The studied columns of every row, column-major, plus T and y per row.
struct RowValues {
  std::vector<std::vector<float>> x;  // [column][row]
  std::vector<double> t, y;
  std::vector<size_t> begin;          // first row of each group (and the end as the last entry)
};

RowValues compute_values(const AnalysisData& data, const std::vector<Column>& cols, const HardwareDesc& hw,
                         const AnalysisProgress& progress) {
  RowValues v;
  size_t rows = 0;
  v.begin.reserve(data.groups.size() + 1);
  for (const auto& g : data.groups) {
    v.begin.push_back(rows);
    rows += g.size();
  }
  v.begin.push_back(rows);
  v.x.assign(cols.size(), std::vector<float>(rows));
  v.t.resize(rows);
  v.y.resize(rows);
  std::map<Layout, FeatureComputer> computers;
  FeatureMatrix m;
  for (size_t gi = 0; gi < data.groups.size(); ++gi) {
    const AnalysisGroup& g = data.groups[gi];
    const Catalogue& cat = Catalogue::get(g.problem.layout);
    auto it = computers.find(g.problem.layout);
    if (it == computers.end()) it = computers.emplace(g.problem.layout, FeatureComputer(cat.kernels(), hw)).first;
    it->second.compute(g.problem, g.candidates, m);
    const size_t b = v.begin[gi];
    for (size_t r = 0; r < g.size(); ++r) {
      v.t[b + r] = g.tflops[r];
      v.y[b + r] = g.tflops[r] / g.oracle;
    }
    for (size_t c = 0; c < cols.size(); ++c) {
      if (cols[c].schema_index == static_cast<size_t>(-1)) continue;
      for (size_t r = 0; r < g.size(); ++r) v.x[c][b + r] = m.at(r, cols[c].schema_index);
    }
    const auto ranked = rank_candidates(GemmShape{g.problem.m, g.problem.n, g.problem.k}, cat.kernels(),
                                        g.candidates, hw);
    for (const RankedCandidate& rc : ranked) v.x.back()[b + rc.pool_index] = static_cast<float>(rc.score);
    if (progress) progress("computing features", gi + 1, data.groups.size());
  }
  return v;
}

// Spearman's rho of column x[rows] against precomputed ranks of the targets over the same rows.
// NaN cells of x are dropped, and the targets re-ranked over the remaining rows.
class RankCorrelator {
 public:
  // rows: the rows correlated; targets: one or more target vectors indexed by row.
  RankCorrelator(std::vector<size_t> rows, std::vector<const std::vector<double>*> targets)
      : rows_(std::move(rows)), targets_(std::move(targets)) {
    target_ranks_.resize(targets_.size());
    for (size_t k = 0; k < targets_.size(); ++k) {
      gather_target(k, rows_, buf_);
      analysis_detail::average_ranks(buf_, target_ranks_[k], scratch_);
    }
  }

  size_t rows() const { return rows_.size(); }

  // rho per target; `used` = rows with a non-NaN x.
  std::vector<double> correlate(const std::vector<float>& x, size_t& used) {
    std::vector<double> out(targets_.size(), kNaN);
    xs_.clear();
    bool any_nan = false;
    for (size_t r : rows_) {
      xs_.push_back(x[r]);
      any_nan |= std::isnan(xs_.back());
    }
    if (!any_nan) {
      used = rows_.size();
      analysis_detail::average_ranks(xs_, xr_, scratch_);
      for (size_t k = 0; k < targets_.size(); ++k) out[k] = analysis_detail::pearson(xr_, target_ranks_[k]);
      return out;
    }
    std::vector<size_t> kept;
    std::vector<double> xk;
    for (size_t i = 0; i < rows_.size(); ++i)
      if (!std::isnan(xs_[i])) {
        kept.push_back(rows_[i]);
        xk.push_back(xs_[i]);
      }
    used = kept.size();
    if (kept.size() < 2) return out;
    analysis_detail::average_ranks(xk, xr_, scratch_);
    std::vector<double> tr;
    for (size_t k = 0; k < targets_.size(); ++k) {
      gather_target(k, kept, buf_);
      analysis_detail::average_ranks(buf_, tr, scratch_);
      out[k] = analysis_detail::pearson(xr_, tr);
    }
    return out;
  }

 private:
  void gather_target(size_t k, const std::vector<size_t>& rows, std::vector<double>& out) const {
    out.clear();
    for (size_t r : rows) out.push_back((*targets_[k])[r]);
  }

  std::vector<size_t> rows_;
  std::vector<const std::vector<double>*> targets_;
  std::vector<std::vector<double>> target_ranks_;
  std::vector<double> buf_, xs_, xr_;
  std::vector<std::pair<double, uint32_t>> scratch_;
};

}  // namespace

std::string partition_value(std::string_view partition, const ShapeTags& tags) {
  if (partition == "all") return "all";
  if (partition == "size") return std::string(to_string(tags.size));
  if (partition == "geometry") return std::string(to_string(tags.geometry));
  if (partition == "regime") return std::string(to_string(tags.regime));
  throw Error("unknown partition '" + std::string(partition) + "' (expected all, size, geometry or regime)");
}

std::vector<FeatureCorrelation> feature_study(const AnalysisData& data, const HardwareDesc& hw,
                                              const AnalysisProgress& progress) {
  const std::vector<Column> cols = studied_columns();
  const RowValues v = compute_values(data, cols, hw, progress);
  const size_t n_groups = data.groups.size();

  // rho_g of every column in every group (T and y rank identically within a group).
  std::vector<std::vector<double>> rho_g(cols.size(), std::vector<double>(n_groups, kNaN));
  for (size_t gi = 0; gi < n_groups; ++gi) {
    std::vector<size_t> rows(v.begin[gi + 1] - v.begin[gi]);
    for (size_t r = 0; r < rows.size(); ++r) rows[r] = v.begin[gi] + r;
    RankCorrelator corr(std::move(rows), {&v.t});
    size_t used = 0;
    for (size_t c = 0; c < cols.size(); ++c) rho_g[c][gi] = corr.correlate(v.x[c], used)[0];
    if (progress) progress("within-group correlations", gi + 1, n_groups);
  }

  // Rows ordered by (column, partition, value): collected per partition value, placed at the end.
  struct Keyed {
    size_t col, partition, value;
    FeatureCorrelation row;
  };
  std::vector<Keyed> out;
  size_t done = 0, total = 0;
  for (size_t p = 0; p < std::size(kPartitions); ++p) total += partition_values(kPartitions[p]).size();
  for (size_t p = 0; p < std::size(kPartitions); ++p) {
    const std::vector<std::string> values = partition_values(kPartitions[p]);
    for (size_t vi = 0; vi < values.size(); ++vi) {
      std::vector<size_t> groups, rows;
      for (size_t gi = 0; gi < n_groups; ++gi)
        if (partition_value(kPartitions[p], data.groups[gi].tags) == values[vi]) {
          groups.push_back(gi);
          for (size_t r = v.begin[gi]; r < v.begin[gi + 1]; ++r) rows.push_back(r);
        }
      ++done;
      if (groups.empty()) continue;
      RankCorrelator corr(std::move(rows), {&v.y, &v.t});
      for (size_t c = 0; c < cols.size(); ++c) {
        FeatureCorrelation fc;
        fc.feature = cols[c].name;
        fc.feature_group = cols[c].group;
        fc.partition = kPartitions[p];
        fc.value = values[vi];
        fc.groups = groups.size();
        const std::vector<double> rho = corr.correlate(v.x[c], fc.rows);
        fc.rho_global = rho[0];
        fc.rho_global_raw = rho[1];
        std::vector<double> within;
        for (size_t gi : groups)
          if (!std::isnan(rho_g[c][gi])) within.push_back(rho_g[c][gi]);
        fc.groups_computable = within.size();
        if (within.empty()) {
          fc.rho_within_mean = fc.rho_within_median = fc.share_positive = kNaN;
        } else {
          double sum = 0;
          size_t positive = 0;
          for (double r : within) {
            sum += r;
            positive += r > 0;
          }
          fc.rho_within_mean = sum / static_cast<double>(within.size());
          fc.rho_within_median = quantile(within, 0.5);
          fc.share_positive = static_cast<double>(positive) / static_cast<double>(within.size());
        }
        out.push_back({c, p, vi, std::move(fc)});
      }
      if (progress) progress("pooled correlations", done, total);
    }
  }
  std::stable_sort(out.begin(), out.end(), [](const Keyed& a, const Keyed& b) {
    return std::tie(a.col, a.partition, a.value) < std::tie(b.col, b.partition, b.value);
  });
  std::vector<FeatureCorrelation> rows;
  rows.reserve(out.size());
  for (auto& k : out) rows.push_back(std::move(k.row));
  return rows;
}

Table feature_table(std::span<const FeatureCorrelation> rows) {
  Table t({"feature", "feature_group", "partition", "value", "groups", "rows", "rho_global", "rho_global_raw",
           "rho_within_mean", "rho_within_median", "share_positive", "groups_computable"});
  t.reserve(rows.size());
  // Four decimals: the sampling error of a rank correlation over a few dozen groups is far larger.
  auto num = [](double x) -> Cell { return std::isnan(x) ? Cell{} : Cell{std::round(x * 1e4) / 1e4}; };
  for (const FeatureCorrelation& r : rows)
    t.add_row({r.feature, r.feature_group, r.partition, r.value, static_cast<int64_t>(r.groups),
               static_cast<int64_t>(r.rows), num(r.rho_global), num(r.rho_global_raw), num(r.rho_within_mean),
               num(r.rho_within_median), num(r.share_positive), static_cast<int64_t>(r.groups_computable)});
  return t;
}

}  // namespace cks
