// cks::Selector: block-wise scoring of one problem's catalogue, top-K selection, result cache.
#include "cks/selector.hpp"

#include <algorithm>
#include <cstdlib>
#include <deque>
#include <map>
#include <mutex>
#include <queue>
#include <unordered_map>

#include "cks/models.hpp"
#include "cks/sampling.hpp"

namespace cks {

namespace {

// Cached rankings keep at least this many candidates, so a later, larger top-K of the same
// problem is usually served from the cache too.
constexpr size_t kMinCachedDepth = 16;

struct ProblemKey {
  long m, n, k;
  Layout layout;
  bool operator==(const ProblemKey&) const = default;
};
struct ProblemKeyHash {
  size_t operator()(const ProblemKey& p) const {
    uint64_t h = 0xcbf29ce484222325ull;
    for (uint64_t v : {uint64_t(p.m), uint64_t(p.n), uint64_t(p.k), uint64_t(p.layout)}) h = (h ^ v) * 0x100000001b3ull;
    return static_cast<size_t>(h);
  }
};

// Per-layout state built once: the feature computer and, for the static fallback, the resolved
// stage count and spill flag of every kernel.
struct LayoutState {
  FeatureComputer features;
  std::vector<std::pair<int, bool>> stages_spills;
};

using Entry = std::pair<double, uint32_t>;  // (score, candidate index)
// Orders the heap so that its top is the worst kept entry (lowest score, then highest index).
struct WorseFirst {
  bool operator()(const Entry& a, const Entry& b) const {
    return a.first > b.first || (a.first == b.first && a.second < b.second);
  }
};

}  // namespace

struct Selector::Impl {
  std::shared_ptr<const Model> model;  // null: static score
  HardwareDesc hw;
  SelectorOptions options;
  std::string origin;

  mutable std::mutex layouts_mutex;
  mutable std::map<Layout, std::shared_ptr<const LayoutState>> layouts;

  mutable std::mutex cache_mutex;
  // A cached list shorter than the depth it was ranked for holds the whole catalogue.
  struct Cached {
    std::shared_ptr<const std::vector<Selection>> list;
    size_t depth = 0;
  };
  mutable std::unordered_map<ProblemKey, Cached, ProblemKeyHash> cache;
  mutable std::deque<ProblemKey> cache_order;  // insertion order, for eviction

  std::shared_ptr<const LayoutState> layout_state(Layout layout) const {
    std::lock_guard lock(layouts_mutex);
    auto& slot = layouts[layout];
    if (!slot) {
      const Catalogue& cat = Catalogue::get(layout);
      auto st = std::make_shared<LayoutState>(LayoutState{FeatureComputer(cat.kernels(), hw), {}});
      if (!model)
        for (const KernelDesc& k : cat.kernels()) {
          const KernelResources r = resources(k, hw);
          st->stages_spills.emplace_back(r.stages, r.spills_expected);
        }
      slot = std::move(st);
    }
    return slot;
  }

  std::shared_ptr<const std::vector<Selection>> rank(const Problem& p, size_t depth) const {
    const Catalogue& cat = Catalogue::get(p.layout);
    const std::vector<Candidate>& cands = cat.candidates();
    const auto state = layout_state(p.layout);
    std::priority_queue<Entry, std::vector<Entry>, WorseFirst> best;
    auto offer = [&](double score, uint32_t index) {
      if (best.size() < depth) {
        best.emplace(score, index);
      } else if (WorseFirst{}(Entry{score, index}, best.top())) {
        best.pop();
        best.emplace(score, index);
      }
    };
    if (model) {
      FeatureMatrix x;
      std::vector<float> scores;
      for (size_t begin = 0; begin < cands.size(); begin += options.block_rows) {
        const size_t end = std::min(cands.size(), begin + options.block_rows);
        state->features.compute(p, std::span<const Candidate>(cands).subspan(begin, end - begin), x);
        scores.resize(end - begin);
        model->predict(x, scores);
        for (size_t i = begin; i < end; ++i) offer(scores[i - begin], static_cast<uint32_t>(i));
      }
    } else {
      const GemmShape shape{p.m, p.n, p.k};
      for (size_t i = 0; i < cands.size(); ++i) {
        const auto [stages, spills] = state->stages_spills[cands[i].kernel];
        offer(static_score_terms(shape, cat.kernels()[cands[i].kernel], cands[i].knobs, hw, stages, spills).score,
              static_cast<uint32_t>(i));
      }
    }
    auto out = std::make_shared<std::vector<Selection>>(best.size());
    for (size_t r = best.size(); r-- > 0; best.pop()) {
      const auto [score, index] = best.top();
      const Candidate& c = cands[index];
      const KernelDesc& d = cat.kernels()[c.kernel];
      (*out)[r] = Selection{c.kernel, c.knobs, score, d.id(), c.knobs.canonical(), d.canonical()};
    }
    return out;
  }
};

Selector::Selector(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Selector::~Selector() = default;
Selector::Selector(Selector&&) noexcept = default;
Selector& Selector::operator=(Selector&&) noexcept = default;

Selector::Selector(std::shared_ptr<const Model> model, SelectorOptions options) : impl_(std::make_unique<Impl>()) {
  if (!model) throw Error("selector: no model");
  impl_->hw = hw_preset(model->info().hw_preset);
  impl_->options = options;
  impl_->origin = std::string(to_string(model->info().kind)) + " " + model->info().objective;
  model->set_threads(std::max(1, options.threads));
  impl_->model = std::move(model);
}

Selector::Selector(const std::string& model_path, SelectorOptions options)
    : Selector(std::shared_ptr<const Model>(Model::load(model_path)), options) {
  impl_->origin += " (" + model_path + ")";
}

Selector Selector::static_score(const HardwareDesc& hw, SelectorOptions options) {
  auto impl = std::make_unique<Impl>();
  impl->hw = hw;
  impl->options = options;
  impl->origin = "static score";
  return Selector(std::move(impl));
}

std::string Selector::default_model_path() {
  if (const char* p = std::getenv("CKS_MODEL")) return p;
  return std::string(CKS_SOURCE_DIR) + "/models/default.json";
}

namespace {
void validate(const Problem& p, size_t top_k) {
  if (p.m <= 0 || p.n <= 0 || p.k <= 0) throw Error("problem dimensions must be positive");
  if (top_k == 0) throw Error("top-K must be >= 1");
}
}  // namespace

Ranking Selector::select_uncached(const Problem& p, size_t top_k) const {
  validate(p, top_k);
  return Ranking(impl_->rank(p, top_k), top_k);
}

Ranking Selector::select(const Problem& p, size_t top_k) const {
  validate(p, top_k);
  const ProblemKey key{p.m, p.n, p.k, p.layout};
  {
    std::lock_guard lock(impl_->cache_mutex);
    auto it = impl_->cache.find(key);
    if (it != impl_->cache.end() && (it->second.depth >= top_k || it->second.list->size() < it->second.depth))
      return Ranking(it->second.list, top_k);
  }
  const size_t depth = std::max(top_k, kMinCachedDepth);
  auto ranked = impl_->rank(p, depth);
  std::lock_guard lock(impl_->cache_mutex);
  auto [it, inserted] = impl_->cache.insert_or_assign(key, Impl::Cached{ranked, depth});
  if (inserted) {
    impl_->cache_order.push_back(key);
    while (impl_->cache.size() > std::max<size_t>(1, impl_->options.cache_capacity)) {
      impl_->cache.erase(impl_->cache_order.front());
      impl_->cache_order.pop_front();
    }
  }
  return Ranking(std::move(ranked), top_k);
}

void Selector::prepare(Layout layout) const { impl_->layout_state(layout); }

const HardwareDesc& Selector::hw() const { return impl_->hw; }
std::string Selector::description() const { return impl_->origin; }
size_t Selector::cached_problems() const {
  std::lock_guard lock(impl_->cache_mutex);
  return impl_->cache.size();
}

}  // namespace cks
