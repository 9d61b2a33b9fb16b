// Helpers shared by the analysis sources (not part of the public API).
#pragma once
#include <cmath>
#include <cstdint>

#include "cks/catalogue.hpp"
#include "cks/common.hpp"

namespace cks::analysis_detail {

// A candidate as one integer (kernel index, then every knob), for hash lookups: distinct
// candidates of one catalogue get distinct codes.
inline uint64_t candidate_code(const Candidate& c) {
  const RuntimeKnobs& k = c.knobs;
  return (static_cast<uint64_t>(c.kernel) << 32) | (static_cast<uint64_t>(k.raster) << 28) |
         (static_cast<uint64_t>(k.decomposition) << 24) | ((static_cast<uint64_t>(k.max_swizzle) & 0xfff) << 12) |
         (static_cast<uint64_t>(k.reduction) << 11) | (static_cast<uint64_t>(k.splits) & 0x7ff);
}

// x rounded to `digits` decimals (dividing by the power of ten keeps the printed text short);
// an empty cell for NaN.
inline Cell num(double x, int digits = 5) {
  if (std::isnan(x)) return Cell{};
  const double scale = std::pow(10.0, digits);
  return Cell{std::round(x * scale) / scale};
}

}  // namespace cks::analysis_detail
