// Allocation-reusing forms of the rank statistics in cks/analysis.hpp (internal).
#pragma once
#include <cstdint>
#include <span>
#include <utility>
#include <vector>

namespace cks::analysis_detail {

// Average 1-based ranks of `values` (no NaN) into `ranks`; `scratch` is reused storage.
void average_ranks(std::span<const double> values, std::vector<double>& ranks,
                   std::vector<std::pair<double, uint32_t>>& scratch);
// Pearson's correlation; NaN when n < 2 or either side has zero variance.
double pearson(std::span<const double> a, std::span<const double> b);

}  // namespace cks::analysis_detail
