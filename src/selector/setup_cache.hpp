// The selector's set-up cache (docs/models.md, "Start-up"): the prefilter's model prior of one
// layout (SelectorOptions: 6 reference problems x the catalogue x 100 trees, ~1 s for tn) kept in
// "<cache_dir()>/prior-<key>.bin" (common/cache_file.hpp), so that a later process with the same
// model file, catalogue and prior options reads it back.
//
// key = hash of (the model file's hash (ModelInfo::source_hash), the layout's catalogue (every
// kernel's and candidate's fields), the hardware preset, the prior options, the entry format,
// this build's schema and version). As a check that the code computing the prior did not change
// under an unchanged key (phi, the trees' evaluation), an entry also holds the raw scores of a
// fixed sample of candidates on each reference problem: the selector recomputes them (64 rows x 6
// problems) and rebuilds the entry when one bit differs.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "cks/catalogue.hpp"
#include "cks/hw.hpp"
#include "cks/selector.hpp"

namespace cks::selector_detail {

struct PriorSetup {
  std::vector<std::vector<float>> priors;         // one per prior view, each of catalogue size
  std::vector<uint32_t> sample;                   // candidates whose raw scores are checked
  std::vector<std::vector<float>> sample_scores;  // per reference problem, per sample candidate
};

// The sample: 64 candidates spread evenly over the catalogue (all when fewer).
std::vector<uint32_t> prior_sample(size_t candidates);
uint64_t prior_setup_key(uint64_t model_source_hash, const Catalogue& cat, const HardwareDesc& hw,
                         const SelectorOptions& options);
std::string prior_setup_path(const std::string& dir, uint64_t key);
// nullopt: missing, stale or corrupt, or not of these sizes.
std::optional<PriorSetup> read_prior_setup(const std::string& path, uint64_t key, size_t candidates, size_t problems);
// Best effort (false when it cannot be written).
bool write_prior_setup(const std::string& path, uint64_t key, const PriorSetup& setup);

}  // namespace cks::selector_detail
