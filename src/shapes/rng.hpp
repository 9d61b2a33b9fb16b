// Portable random draws for shape construction and sampling.
//
// std::mt19937_64's output sequence is fixed by the standard, but the std:: distributions are
// not (libstdc++ and libc++ give different values), so the draws are implemented here on top of
// the raw engine: identical outputs on every platform for a given seed.
#pragma once
#include <cmath>
#include <cstdint>
#include <numeric>
#include <random>
#include <vector>

namespace cks::detail {

class Rng {
 public:
  explicit Rng(uint64_t seed) : engine_(seed) {}

  // Uniform in [0, 1) with 53 random bits.
  double uniform01() { return static_cast<double>(engine_() >> 11) * 0x1.0p-53; }
  double uniform(double lo, double hi) { return lo + (hi - lo) * uniform01(); }
  // Uniform integer in [0, n), n >= 1, without modulo bias (rejects the engine's top partial range).
  uint64_t below(uint64_t n) {
    const uint64_t limit = UINT64_MAX - UINT64_MAX % n;
    uint64_t x;
    do x = engine_();
    while (x >= limit);
    return x % n;
  }
  // Log-uniform in [lo, hi]: exp of a uniform draw between log(lo) and log(hi).
  double log_uniform(double lo, double hi) { return std::exp(uniform(std::log(lo), std::log(hi))); }
  // k distinct indices of [0, n) uniformly without replacement, in draw order (partial Fisher-Yates).
  std::vector<uint32_t> choose(uint32_t n, uint32_t k) {
    std::vector<uint32_t> idx(n);
    std::iota(idx.begin(), idx.end(), 0u);
    for (uint32_t i = 0; i < k; ++i) std::swap(idx[i], idx[i + below(n - i)]);
    idx.resize(k);
    return idx;
  }

 private:
  std::mt19937_64 engine_;
};

// SplitMix64 finalizer: decorrelates seeds derived from (seed, key) pairs.
inline uint64_t mix64(uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

}  // namespace cks::detail
