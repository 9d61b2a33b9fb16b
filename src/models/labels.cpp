// Labels of the paper's "Labels" paragraph; definitions in cks/models.hpp.
#include <algorithm>
#include <cmath>
#include <numeric>

#include "cks/models.hpp"

namespace cks {

GroupLabels label_group(std::span<const double> throughput, std::span<const double> sigma, int relevance_bands) {
  const size_t n = throughput.size();
  if (n == 0) throw Error("cannot label an empty group");
  if (sigma.size() != n) throw Error("label_group: throughput and sigma sizes differ");
  if (relevance_bands < 1 || relevance_bands > kGradeMax)
    throw Error("relevance bands must be in [1, " + std::to_string(kGradeMax) + "] (got " +
                std::to_string(relevance_bands) + ")");
  for (double t : throughput)
    if (!(t > 0) || !std::isfinite(t)) throw Error("label_group: throughputs must be positive and finite");

  // Decreasing throughput; equal throughputs keep their input order.
  std::vector<size_t> order(n);
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return throughput[a] > throughput[b]; });
  const double best = throughput[order[0]];

  GroupLabels out;
  out.y.resize(n);
  out.band.resize(n);
  out.grade.resize(n);
  out.relevance.resize(n);
  int band = 0;
  for (size_t r = 0; r < n; ++r) {
    const size_t i = order[r];
    if (r > 0) {
      const size_t prev = order[r - 1];
      const double pooled = std::sqrt(sigma[prev] * sigma[prev] + sigma[i] * sigma[i]);
      const double gap = throughput[prev] - throughput[i];
      // Equal throughputs always share a band (also when both sigmas are 0).
      if (gap > 0 && !(gap < kBandMergeSigmas * pooled)) ++band;
    }
    out.y[i] = throughput[i] / best;
    out.band[i] = band;
    out.grade[i] = std::max(0, kGradeMax - band);
    out.relevance[i] = static_cast<float>(std::max(0, relevance_bands - band));
  }
  return out;
}

}  // namespace cks
