// The selector's set-up cache (setup_cache.hpp).
#include "selector/setup_cache.hpp"

#include "cks/features.hpp"
#include "common/cache_file.hpp"

namespace cks::selector_detail {

namespace {

// Bumped whenever the payload or the prior's definition changes.
constexpr uint64_t kPriorCacheFormat = 1;
constexpr std::string_view kKind = "prior";
constexpr size_t kSample = 64;
// Entries kept (most recently used first): one per (model, layout, prior options), ~1-2 MB each.
constexpr size_t kKeepPriors = 32;

uint64_t catalogue_fingerprint(const Catalogue& cat) {
  std::vector<int64_t> v;
  v.reserve(2 + cat.kernels().size() * 10 + cat.candidates().size() * 5);
  v.push_back(static_cast<int64_t>(cat.layout()));
  v.push_back(static_cast<int64_t>(cat.kernels().size()));
  for (const KernelDesc& k : cat.kernels())
    v.insert(v.end(), {static_cast<int64_t>(k.layout), k.tm, k.tn, k.tk, k.cm, k.cn, k.stages,
                       static_cast<int64_t>(k.mainloop), static_cast<int64_t>(k.epilogue),
                       static_cast<int64_t>(k.scheduler)});
  for (const Candidate& c : cat.candidates())
    v.insert(v.end(), {static_cast<int64_t>(c.kernel), static_cast<int64_t>(c.knobs.raster), c.knobs.max_swizzle,
                       static_cast<int64_t>(c.knobs.decomposition), c.knobs.splits});
  return hash64(std::string_view(reinterpret_cast<const char*>(v.data()), v.size() * sizeof(int64_t)));
}

}  // namespace

std::vector<uint32_t> prior_sample(size_t candidates) {
  std::vector<uint32_t> out;
  const size_t n = std::min(kSample, candidates);
  for (size_t i = 0; i < n; ++i) out.push_back(static_cast<uint32_t>(i * candidates / n + (candidates / n) / 2));
  return out;
}

uint64_t prior_setup_key(uint64_t model_source_hash, const Catalogue& cat, const HardwareDesc& hw,
                         const SelectorOptions& options) {
  std::string id = hex64(model_source_hash) + ":" + hex64(catalogue_fingerprint(cat)) + ":" + hw.preset + ":" +
                   std::to_string(options.prior_terms) + ":" + std::to_string(static_cast<int>(options.prior_mode)) + ":";
  for (const auto& [m, n, k] : options.prior_problems)
    id += std::to_string(m) + "x" + std::to_string(n) + "x" + std::to_string(k) + ",";
  id += ":" + std::to_string(kPriorCacheFormat) + ":" + FeatureSchema::get().hash_hex() + ":" + CKS_VERSION;
  return hash64(id);
}

std::string prior_setup_path(const std::string& dir, uint64_t key) { return dir + "/prior-" + hex64(key) + ".bin"; }

std::optional<PriorSetup> read_prior_setup(const std::string& path, uint64_t key, size_t candidates, size_t problems) {
  const std::optional<CacheEntry> entry = read_cache_entry(path, kKind, key);
  if (!entry) return std::nullopt;
  try {
    BinaryReader r(entry->payload);
    PriorSetup s;
    s.priors.resize(r.count(8));
    for (auto& p : s.priors)
      if ((p = r.vec<float>()).size() != candidates) return std::nullopt;
    s.sample = r.vec<uint32_t>();
    if (s.sample != prior_sample(candidates)) return std::nullopt;
    s.sample_scores.resize(r.count(8));
    if (s.sample_scores.size() != problems) return std::nullopt;
    for (auto& p : s.sample_scores)
      if ((p = r.vec<float>()).size() != s.sample.size()) return std::nullopt;
    if (!r.done() || s.priors.empty()) return std::nullopt;
    return s;
  } catch (const CacheCorrupt&) {
    return std::nullopt;
  }
}

bool write_prior_setup(const std::string& path, uint64_t key, const PriorSetup& setup) {
  BinaryWriter w;
  w.u64(setup.priors.size());
  for (const auto& p : setup.priors) w.vec(p);
  w.vec(setup.sample);
  w.u64(setup.sample_scores.size());
  for (const auto& p : setup.sample_scores) w.vec(p);
  return write_cache_entry(path, kKind, key, w.data(), "prior-", kKeepPriors);
}

}  // namespace cks::selector_detail
