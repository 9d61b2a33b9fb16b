// The selector's cheap first stage: one layout's catalogue grouped into *static classes*, the
// candidates whose static efficiency score (cks/sampling.hpp) is equal for every problem: same
// tile (T_M, T_N, T_K), cluster (c_M, c_N), min(resolved stages, kPipelineRefStages), spill
// flag and split-K factor. A problem's static ranking then costs one score per class (tn:
// 13,046 classes for 211,640 candidates), computed from per-(tile, cluster) terms with the same
// operations, in the same order, as static_score_terms() (bit-identical scores; a test checks).
//
// Two selections:
//   top_static(p, n)      the n best candidates by (static score desc, catalogue index asc):
//                         exactly the static fallback's ranking of the whole catalogue
//   top_prefilter(p, n)   the n best by key = static score * exp(w * prior(c)) (the order of
//                         ln(static score) + w * prior(c)), ties by catalogue index: the model's
//                         prefilter. prior is a problem-independent per-candidate score
//                         (set_prior; the selector derives it from the model) that orders the
//                         many candidates of one static class (schedules, stage counts, runtime
//                         knobs) the way the model tends to, and shifts classes by it. Several
//                         priors (set_priors) give several *views*, each with its own member
//                         order: the selector picks one per problem (SelectorOptions::prior_mode).
// Both bound the n-th best key from below with the class heads (a class's members are
// pre-sorted, so its first member has its best key) and select from the candidates above the
// bound; top_prefilter selects by histograms of the keys' bit patterns rather than comparison
// sorts (branch-free: a std::nth_element over ~10^4 keys costs ~100 us in mispredictions).
#pragma once
#include <cstdint>
#include <utility>
#include <vector>

#include "cks/catalogue.hpp"
#include "cks/features.hpp"
#include "cks/hw.hpp"

namespace cks::selector_detail {

class StaticIndex {
 public:
  StaticIndex(const Catalogue& cat, const HardwareDesc& hw);

  size_t classes() const { return classes_.size(); }
  size_t candidates() const { return members_.size(); }

  // Per-candidate prior (catalogue order) and its weight: view 0 orders every class's members
  // by (prior desc, index asc). Without a prior (empty or weight 0), top_prefilter() is
  // top_static().
  void set_prior(const std::vector<float>& prior, double weight);
  // One view per prior (each of catalogue size), all with the same weight.
  void set_priors(const std::vector<std::vector<float>>& priors, double weight);
  size_t views() const { return views_.size(); }

  // (static score, candidate index), best first.
  std::vector<std::pair<double, uint32_t>> top_static(const Problem& p, size_t n) const;
  // Candidate indices, ascending (the set is what matters; the model orders it), by the key of
  // prior view `view` (< views(); ignored without a prior). Thread-safe; per-thread buffers, so
  // a call allocates only its result.
  // best_static (if given): the best static score of the whole catalogue (top_static's first).
  std::vector<uint32_t> top_prefilter(const Problem& p, size_t n, size_t view = 0, double* best_static = nullptr) const;

  // The best static score of the catalogue for the problem (top_static(p, 1)'s, without the
  // selection; per-thread buffers).
  double best_static(const Problem& p) const;
  // The static score of every class for the problem (class order), as static_score_terms().
  void class_scores(const Problem& p, std::vector<double>& out) const;
  // The class of a candidate (for tests).
  uint32_t class_of(uint32_t candidate) const { return class_of_[candidate]; }

 private:
  struct Geometry {  // one (T_M, T_N, c_M, c_N)
    int tm = 0, tn = 0, cm = 0, cn = 0;
  };
  struct Class {
    uint32_t geometry = 0;
    int tk = 0;
    int stages = 0;  // min(resolved stages, kPipelineRefStages)
    int splits = 1;
    bool spills = false;
    uint32_t begin = 0, end = 0;  // members_[begin, end)
    size_t size() const { return end - begin; }
  };

  HardwareDesc hw_;
  std::vector<Geometry> geometries_;
  std::vector<Class> classes_;
  // class_scores()'s plan, built once: the runs of consecutive classes sharing (geometry, splits,
  // T_K) (the terms computed per problem once per run), and per class its run, stage bucket and
  // spill flag, so that the per-class loop has no branch. A run's T_K and split factor are
  // indices into the distinct values (their per-problem terms are small tables).
  struct Run {
    uint32_t geometry = 0;
    uint16_t tk = 0, splits = 0;  // indices into tk_values_, split_values_
  };
  std::vector<Run> runs_;
  std::vector<int> tk_values_, split_values_;
  std::vector<uint32_t> run_of_;                     // per class
  std::vector<uint8_t> class_stages_, class_spills_;  // per class
  // The class scores (class_scores()); with `head_factor`, also head[c] = score[c] *
  // head_factor[c], returning the largest head (0 if none is larger).
  double scores(const Problem& p, std::vector<double>& out, const std::vector<double>* head_factor,
                std::vector<double>* head) const;
  // top_prefilter()'s sample of a class: its first kSample members (of the view's order).
  static constexpr uint32_t kSample = 4;
  struct View {  // one prior's order of the members within their classes
    std::vector<uint32_t> members;        // candidate indices grouped by class, by prior desc
    std::vector<double> member_factor;    // per member (members order): exp(weight * prior)
    std::vector<double> head_factor;      // per class: its first (largest) member factor
    // Per class, kSample slots: the first members and their factors again, side by side (one
    // cache line per class where top_prefilter() reads most: its sample and most of its pool).
    std::vector<uint32_t> sample_members;
    std::vector<double> sample_factor;
  };
  std::vector<uint8_t> class_sample_;  // per class: min(size, kSample)
  std::vector<uint32_t> members_;   // candidate indices grouped by class, ascending
  std::vector<uint32_t> class_of_;  // per candidate
  std::vector<View> views_;         // empty: no prior
};

}  // namespace cks::selector_detail
