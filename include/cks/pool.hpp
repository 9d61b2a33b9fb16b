// cks/pool.hpp — compiled kernel pools: the subset of the catalogue that a collection compiles.
//
// A pool must cover every axis of the catalogue while spending most of its (expensive, ~5-30 s
// of nvcc per kernel) slots on kernels likely to matter. Rule (deterministic per seed):
//   prior q(k) = mean over kReferenceShapes of static_score(shape, k, default knobs) — a
//               problem-agnostic estimate of how often k is competitive;
//   1. coverage: for every value of every axis (T_M, T_N, T_K, stages incl. auto, mainloop,
//      epilogue, cluster shape, tile scheduler, spill flag) the highest-q kernel with that value;
//   2. exploitation: the highest-q remaining kernels until ceil(top_fraction * size) are chosen;
//   3. exploration: the rest drawn uniformly without replacement from the remaining catalogue.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "cks/catalogue.hpp"
#include "cks/hw.hpp"

namespace cks {

struct PoolOptions {
  Layout layout = Layout::tn;
  int size = 2000;
  uint64_t seed = 0;
  double top_fraction = 0.6;
};

struct PoolEntry {
  uint32_t kernel = 0;  // index into Catalogue::get(layout).kernels()
  double prior = 0;     // q(k)
  std::string reason;   // "coverage:<axis>=<value>", "top", "explore"
};

// Throws Error when size < 1 or top_fraction is outside [0, 1]. Returns entries sorted by
// kernel canonical text (the pool file order).
std::vector<PoolEntry> select_pool(const PoolOptions& o, const HardwareDesc& hw);

}  // namespace cks
