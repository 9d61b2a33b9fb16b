#include "cks/pool.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <random>

#include "cks/common.hpp"
#include "cks/sampling.hpp"

namespace cks {

namespace {

// Reference problems for the prior: decode-like (small M), square, large, tall, wide and
// skinny-K shapes across the [32, 16384] domain.
constexpr GemmShape kReferenceShapes[] = {
    {16, 4096, 4096},   {128, 8192, 8192},  {512, 14336, 4096}, {1024, 1024, 1024},
    {2048, 2048, 8192}, {4096, 4096, 4096}, {8192, 8192, 8192}, {16384, 1024, 4096},
    {1024, 16384, 2048}, {4096, 4096, 256}, {8192, 2048, 128},  {256, 256, 16384},
};

// Uniform integer in [0, n) without std:: distributions (identical on every standard library).
uint64_t uniform_index(std::mt19937_64& rng, uint64_t n) {
  const uint64_t limit = UINT64_MAX - UINT64_MAX % n;
  uint64_t x;
  do x = rng(); while (x >= limit);
  return x % n;
}

// Every axis value of a kernel, as "axis=value" keys.
std::vector<std::string> axis_values(const KernelDesc& k, const HardwareDesc& hw) {
  return {"tm=" + std::to_string(k.tm),
          "tn=" + std::to_string(k.tn),
          "tk=" + std::to_string(k.tk),
          "stages=" + kernel_axis_value(k, "stages"),
          "mainloop=" + std::string(to_string(k.mainloop)),
          "epilogue=" + std::string(to_string(k.epilogue)),
          "cluster=" + kernel_axis_value(k, "cluster"),
          "scheduler=" + std::string(to_string(k.scheduler)),
          std::string("spills=") + (resources(k, hw).spills_expected ? "yes" : "no")};
}

}  // namespace

std::vector<PoolEntry> select_pool(const PoolOptions& o, const HardwareDesc& hw) {
  if (o.size < 1) throw Error("pool size must be at least 1 (got " + std::to_string(o.size) + ")");
  if (!(o.top_fraction >= 0 && o.top_fraction <= 1))
    throw Error("top fraction must be in [0, 1] (got " + format_double(o.top_fraction) + ")");
  const Catalogue& cat = Catalogue::get(o.layout);
  const auto& kernels = cat.kernels();
  const size_t n = kernels.size();

  std::vector<double> prior(n, 0.0);
  for (size_t i = 0; i < n; ++i) {
    const KernelResources r = resources(kernels[i], hw);
    double s = 0;
    for (const auto& p : kReferenceShapes)
      s += static_score_terms(p, kernels[i], RuntimeKnobs{}, hw, r.stages, r.spills_expected).score;
    prior[i] = s / std::size(kReferenceShapes);
  }
  // Kernel indices by descending prior; ties by catalogue order (canonical text).
  std::vector<uint32_t> by_prior(n);
  for (size_t i = 0; i < n; ++i) by_prior[i] = static_cast<uint32_t>(i);
  std::stable_sort(by_prior.begin(), by_prior.end(), [&](uint32_t a, uint32_t b) { return prior[a] > prior[b]; });

  std::vector<PoolEntry> out;
  std::vector<char> taken(n, 0);
  const size_t size = std::min<size_t>(o.size, n);
  auto take = [&](uint32_t i, std::string reason) {
    taken[i] = 1;
    out.push_back({i, prior[i], std::move(reason)});
  };

  // 1. Coverage: the best kernel for each axis value (in order of first appearance by prior).
  std::map<std::string, uint32_t> best_for_value;
  for (uint32_t i : by_prior)
    for (auto& v : axis_values(kernels[i], hw)) best_for_value.emplace(v, i);
  for (auto& [value, i] : best_for_value) {
    if (out.size() >= size) break;
    if (!taken[i]) take(i, "coverage:" + value);
  }
  // 2. Exploitation.
  const size_t n_top = std::max(out.size(), static_cast<size_t>(std::ceil(o.top_fraction * size)));
  for (uint32_t i : by_prior) {
    if (out.size() >= std::min(n_top, size)) break;
    if (!taken[i]) take(i, "top");
  }
  // 3. Exploration: a seeded partial Fisher-Yates over the remaining kernels.
  std::vector<uint32_t> rest;
  for (uint32_t i = 0; i < n; ++i)
    if (!taken[i]) rest.push_back(i);
  std::mt19937_64 rng(o.seed ^ 0x706f6f6c5f636b73ull);  // "pool_cks"
  for (size_t j = 0; out.size() < size && j < rest.size(); ++j) {
    const size_t pick = j + uniform_index(rng, rest.size() - j);
    std::swap(rest[j], rest[pick]);
    take(rest[j], "explore");
  }
  std::sort(out.begin(), out.end(), [](const PoolEntry& a, const PoolEntry& b) { return a.kernel < b.kernel; });
  return out;
}

}  // namespace cks
