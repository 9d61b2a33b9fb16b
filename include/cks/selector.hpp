// cks/selector.hpp — deployment: rank the full catalogue of one problem with a trained model
// (paper eq. 1: argmax of the score over the candidates) and return the top K.
//
// Scoring runs in blocks (features of a block of candidates, then the model), keeping only the
// best K, so memory stays small for the ~400k candidates of a layout. Results are cached per
// (M, N, K, layout): a repeated problem is a hash lookup.
#pragma once
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "cks/catalogue.hpp"
#include "cks/features.hpp"
#include "cks/hw.hpp"

namespace cks {

class Model;

struct Selection {
  uint32_t kernel = 0;      // index into Catalogue::get(layout).kernels()
  RuntimeKnobs knobs;
  double score = 0;         // the model's score (static score in the fallback)
  std::string kernel_id;    // KernelDesc::id()
  std::string knobs_text;   // RuntimeKnobs::canonical()
  std::string canonical;    // KernelDesc::canonical()
};

// The ranked candidates of one problem (best first); shares the cached list.
class Ranking {
 public:
  Ranking() = default;
  Ranking(std::shared_ptr<const std::vector<Selection>> all, size_t count)
      : all_(std::move(all)), count_(std::min(count, all_ ? all_->size() : 0)) {}
  size_t size() const { return count_; }
  bool empty() const { return count_ == 0; }
  const Selection& operator[](size_t i) const { return (*all_)[i]; }
  const Selection* begin() const { return all_ ? all_->data() : nullptr; }
  const Selection* end() const { return begin() + count_; }

 private:
  std::shared_ptr<const std::vector<Selection>> all_;
  size_t count_ = 0;
};

struct SelectorOptions {
  int threads = 1;                // threads scoring one problem (the latency target is one core)
  size_t cache_capacity = 65536;  // problems kept; the oldest is evicted first
  size_t block_rows = 8192;       // candidates per scoring block
};

class Selector {
 public:
  // Loads a model file (Model::load; throws Error). The model's hardware preset is used for phi.
  explicit Selector(const std::string& model_path, SelectorOptions options = {});
  explicit Selector(std::shared_ptr<const Model> model, SelectorOptions options = {});
  // The static efficiency score (cks/sampling.hpp) instead of a model: the explicit fallback.
  static Selector static_score(const HardwareDesc& hw, SelectorOptions options = {});
  ~Selector();
  Selector(Selector&&) noexcept;
  Selector& operator=(Selector&&) noexcept;

  // The shipped default model: $CKS_MODEL if set, else <source tree>/models/default.json.
  static std::string default_model_path();

  // Top `top_k` candidates of the problem's layout catalogue (cached). Throws Error on
  // non-positive dimensions or top_k == 0.
  Ranking select(const Problem& p, size_t top_k) const;
  // Builds the per-layout state (the catalogue and the feature computer's per-kernel terms) that
  // the first select() of a layout otherwise builds: a one-time start-up cost.
  void prepare(Layout layout) const;
  // The same without the cache (always scores the catalogue).
  Ranking select_uncached(const Problem& p, size_t top_k) const;

  const HardwareDesc& hw() const;
  std::string description() const;  // "xgboost rank:ndcg (models/default.json)" or "static score"
  size_t cached_problems() const;

 private:
  struct Impl;
  explicit Selector(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace cks
