// Rank statistics of the analysis studies: average ranks and Spearman's rho.
#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

#include "analysis/stats.hpp"
#include "cks/analysis.hpp"

namespace cks {

namespace analysis_detail {

void average_ranks(std::span<const double> values, std::vector<double>& ranks,
                   std::vector<std::pair<double, uint32_t>>& scratch) {
  const size_t n = values.size();
  scratch.resize(n);
  for (size_t i = 0; i < n; ++i) scratch[i] = {values[i], static_cast<uint32_t>(i)};
  std::sort(scratch.begin(), scratch.end());
  ranks.resize(n);
  for (size_t i = 0; i < n;) {
    size_t j = i + 1;
    while (j < n && scratch[j].first == scratch[i].first) ++j;
    const double r = 0.5 * static_cast<double>(i + 1 + j);  // mean of the 1-based ranks i+1 .. j
    for (size_t t = i; t < j; ++t) ranks[scratch[t].second] = r;
    i = j;
  }
}

double pearson(std::span<const double> a, std::span<const double> b) {
  const size_t n = a.size();
  if (n < 2 || b.size() != n) return std::numeric_limits<double>::quiet_NaN();
  double ma = 0, mb = 0;
  for (size_t i = 0; i < n; ++i) {
    ma += a[i];
    mb += b[i];
  }
  ma /= static_cast<double>(n);
  mb /= static_cast<double>(n);
  double sab = 0, saa = 0, sbb = 0;
  for (size_t i = 0; i < n; ++i) {
    const double da = a[i] - ma, db = b[i] - mb;
    sab += da * db;
    saa += da * da;
    sbb += db * db;
  }
  // Ranks of a constant side are all equal: zero variance, no correlation defined.
  if (!(saa > 0) || !(sbb > 0)) return std::numeric_limits<double>::quiet_NaN();
  return std::clamp(sab / std::sqrt(saa * sbb), -1.0, 1.0);
}

}  // namespace analysis_detail

std::vector<double> average_ranks(std::span<const double> values) {
  std::vector<double> ranks;
  std::vector<std::pair<double, uint32_t>> scratch;
  analysis_detail::average_ranks(values, ranks, scratch);
  return ranks;
}

double spearman(std::span<const double> x, std::span<const double> y) {
  if (x.size() != y.size()) throw std::logic_error("spearman: samples of different sizes");
  std::vector<double> xs, ys;
  xs.reserve(x.size());
  ys.reserve(y.size());
  for (size_t i = 0; i < x.size(); ++i)
    if (!std::isnan(x[i]) && !std::isnan(y[i])) {
      xs.push_back(x[i]);
      ys.push_back(y[i]);
    }
  if (xs.size() < 2) return std::numeric_limits<double>::quiet_NaN();
  return analysis_detail::pearson(average_ranks(xs), average_ranks(ys));
}

}  // namespace cks
