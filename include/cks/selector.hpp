// cks/selector.hpp — deployment: rank the full catalogue of one problem with a trained model
// (paper eq. 1: argmax of the score over the candidates) and return the top K.
//
// By default a cheap prefilter keeps a few thousand candidates and only those get phi and the
// model (SelectorOptions); the exhaustive ranking scores every candidate in blocks. Results are
// cached per (M, N, K, layout): a repeated problem is a hash lookup.
#pragma once
#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "cks/catalogue.hpp"
#include "cks/features.hpp"
#include "cks/hw.hpp"

namespace cks {

class Model;

struct Selection {
  // Index into Catalogue::get(layout).kernels(); for a swapped kernel (swapped = true, only with
  // SelectorOptions::orientations = both) into Catalogue::get(swap_layout(layout)).kernels(): the
  // catalogue kernel whose swapped twin (KernelDesc::swapped_twin()) this is.
  uint32_t kernel = 0;
  RuntimeKnobs knobs;
  double score = 0;         // the model's score (static score in the fallback)
  std::string kernel_id;    // KernelDesc::id()
  std::string knobs_text;   // RuntimeKnobs::canonical()
  std::string canonical;    // KernelDesc::canonical()
  bool swapped = false;     // a swapped kernel (docs/catalogue.md, "Swapped kernels")
  // A sliced-K kernel (docs/catalogue.md, "Sliced-K kernels"), put first by SelectorOptions::sliced:
  // `kernel` indexes the problem's own catalogue kernel whose sliced_variant() this is; knobs
  // d=sk,k=S. Its score is that of the model's candidate it precedes (the model does not score
  // sliced-K kernels).
  bool sliced = false;
};
// The kernel a selection of a problem of `layout` names: its catalogue's kernel, for a swapped
// selection the swapped twin of swap_layout(layout)'s kernel, for a sliced one its sliced variant.
KernelDesc selected_kernel(const Selection& s, Layout layout);

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

// How a model ranks one problem's catalogue (docs/models.md, "Deployment"):
//   exhaustive (prefilter == 0)  every candidate gets phi and the full model, in blocks;
//   two-stage (the default)      stage 1, the prefilter: the `prefilter` best candidates by
//                                ln(static score) + prior_weight * prior(c), from per-class
//                                static scores (selector/static_index.hpp); prior(c) is the
//                                model's mean standardised score of c on fixed reference
//                                problems (computed once per layout by prepare()). Stage 2: phi
//                                and the model for those candidates only. For an additive model
//                                (XGBoost) stage 2 is a cascade: the first `cascade_terms` trees
//                                score all of them, the `cascade_keep` best get the remaining
//                                trees. The scores returned are always the full model's.
// Evidence (the default): the measured leaders of the problem's nearest training groups join
// stage 1's candidates (SelectorOptions::evidence_groups below).
// The defaults were chosen by measurement (docs/models.md, "Deployment"): ~0.9 ms cold on one
// core (tn); the top-1 equals the exhaustive ranking's on 31 of the 32 evaluation problems (91
// of 100 random problems). --prefilter 2048 / 4096 cost ~1.5 / ~2.7 ms and agree more often.
// The prefilter prior's dependence on the problem: `mean`, one problem-independent prior (the
// mean over the reference problems); `nearest`, one prior per reference problem, the problem
// using that of the nearest reference problem (squared distance of log2 M, log2 N, log2 K).
enum class PriorMode { mean, nearest };
// Which orientations of a problem the selector ranks (docs/catalogue.md, "Swapped kernels"):
//   own   the problem as given, with its layout's catalogue;
//   both  (the default since session 31) also the transposed problem (N, M, K) in
//         swap_layout(layout), whose candidates are run by the swapped twins of that catalogue's
//         kernels (ranked at once on a second thread, or after the own one:
//         concurrent_orientations). The swapped orientation leads when the best static score
//         (cks/sampling.hpp: an absolute efficiency estimate, padding and waves included) of its
//         first `orientation_depth` candidates beats the own one's by more than `swap_margin`: then
//         the two rankings are interleaved, the swapped first; else the own ranking alone. Scores
//         are each ranking's own (the model scores one problem relative to itself, so they do not
//         compare across the two). Measured side by side in lease 40 where it changes the first
//         pick (NOTES.md, "Lease 40 read"): mean regret 4.9 -> 1.8 % on 29 evaluation, 6.8 -> 5.4 %
//         on 29 family and 4.3 -> 1.5 % on 183 llm groups; nt swaps lose in most of the 8 measured.
//         Which problems rank the transposed problem at all (swap_max_m, swap_layouts) was chosen
//         on training groups in lease 41 (session 33): M <= 256, layouts tn, nn, tt; and in lease 43
//         (session 34): also M > 4096 with N <= 512, any layout; and (session 38, leases 41 and 43
//         again) also M > 256 with N <= 512 and K <= 4096, any layout.
enum class Orientations { own, both };

// The sliced-K rule (docs/catalogue.md, "Sliced-K kernels"; NOTES.md "Session 42"): in few-tile,
// long-K problems no catalogue kernel fills the GPU, and a sliced-K kernel (S independent K
// slices into FP32 partials, then a fixed-order reduction) runs 1.2-1.4x faster than the best of
// the rest (lease 50). Where a problem is in the rule's region, the ranking is led by the sliced-K
// variant of the layout's ping-pong 64x64x128 kernel (no-smem epilogue, persistent, raster along
// M) at the largest slice count S that fits, then the ranking without it, interleaved with the
// same kernel at the next smaller slice counts (`alternates` of them) after its first entry:
//   region   ceil(M/64) * ceil(N/64) <= max_tiles, M <= max_m (0: any M), K >= min_k;
//   S        the largest of 2, 3, 4, 6, 8, 12, 16 with K % (8 S) == 0 (the kernel's alignment),
//            tiles x S <= max_ctas and K / S >= min_slice_k.
// A problem in the region with no such S gets the ranking without the rule. max_tiles = 0 turns
// the rule off. The default (session 43) was chosen on the 182 training groups of leases 50 and
// 51 (part A), measured on an H100 (the H200 was not lent): 1.90 % mean regret there against
// 5.86 % without the rule, 2.89 % leave-one-shape-out, this rule chosen in 74 of 81 folds
// (data/plans/lease51/read51.py). On lease 51's 45 held-out evaluation and llm groups, never used
// to choose it, the deployed pick's mean regret goes from 4.46 % to 3.03 % (7 groups in the region:
// 10.7 % -> 1.5 %, pick / cuBLAS 0.79 -> 0.87); session 42's first rule (<= 14 tiles, M <= 64,
// K >= 8192, <= 64 CTAs) reached none of them.
struct SlicedRule {
  long max_tiles = 8;
  long max_m = 128;
  long min_k = 6144;
  long max_ctas = 96;
  long min_slice_k = 512;
  size_t alternates = 1;
};
// The slice counts the rule gives p, best first (the first and its `alternates`); empty outside
// the region or when no S fits.
std::vector<int> sliced_rule_slices(const SlicedRule& r, const Problem& p);
// The kernel the rule runs for a layout: the sliced-K variant of its ping-pong 64x64x128 kernel.
KernelDesc sliced_rule_kernel(Layout layout);

struct SelectorOptions {
  int threads = 1;                // threads scoring one problem (the latency target is one core)
  size_t cache_capacity = 65536;  // problems kept; the oldest is evicted first
  size_t block_rows = 8192;       // candidates per scoring block (exhaustive ranking)
  int setup_threads = 0;          // threads computing the prior in prepare() (0 = every core)
  // Threads scoring one two-stage select of an additive model (XGBoost): phi and the cascade's
  // first stage are shared out in blocks of rows, its second stage in ranges of trees, to
  // persistent workers of the selector (started on first use, parked between calls); every row is
  // scored as on one thread, so the ranking is the same bits for any count. 0 = min(4, hardware threads); 1 = the calling thread only. A small cascade
  // stays on the calling thread, and so does a select made while another thread's select
  // holds the workers (concurrent selects are safe either way).
  int select_threads = 0;
  size_t prefilter = 1024;        // candidates kept by the prefilter; 0 = exhaustive
  size_t cascade_terms = 50;      // additive models: terms (trees) scoring every kept candidate
  size_t cascade_keep = 64;       // additive models: candidates that get every term
  double prior_weight = 0.3;      // weight of the model prior in the prefilter key (0: static only)
  size_t prior_terms = 100;       // additive models: terms (trees) scoring the prior
  PriorMode prior_mode = PriorMode::mean;
  // Evidence (two-stage ranking): the first `evidence_top` measured leaders of the
  // `evidence_groups` training groups nearest to the problem (the model file's "evidence",
  // cks/models.hpp) join the prefilter's candidates. 0 groups: off; a model without evidence
  // adds nothing. 16 x 4 was chosen by cross-validation on the training groups and measured
  // side by side in lease 15 (docs/models.md, "Evidence").
  size_t evidence_groups = 16;
  size_t evidence_top = 4;
  // The prior's reference problems (M, N, K), in the layout being ranked: large and small M, N
  // and K, where the model's preferences among schedules, stage counts and knobs differ.
  std::vector<std::array<long, 3>> prior_problems{{4096, 4096, 4096}, {256, 4096, 4096}, {4096, 4096, 64},
                                                  {256, 4096, 64},     {4096, 256, 512},  {64, 64, 4096}};
  // The orientations ranked (Orientations above).
  Orientations orientations = Orientations::both;
  double swap_margin = 0.05;      // both: the swapped orientation leads above (1 + margin) x the own one's estimate
  size_t orientation_depth = 8;   // both: candidates of each ranking whose static scores make its estimate
  // both: the problems whose transposed problem is ranked at all; any other problem gets the own
  // ranking alone (and its latency). M at most swap_max_m (0: any M), and a layout whose bit
  // (1 << int(Layout)) is set in swap_layouts.
  // Default (session 33, lease 41: chosen by 5-fold cross-validation on 268 training groups where
  // the unrestricted rule changes the first pick; NOTES.md "Lease 41 read"): M <= 256 and the
  // layouts tn, nn and tt (nt swaps lost 10-12 points at M <= 256 there).
  long swap_max_m = 256;
  unsigned swap_layouts = (1u << 0) | (1u << 2) | (1u << 3);  // tn, nn, tt (Layout's values)
  // both: also the tall problems, M > swap_tall_min_m with N <= swap_tall_max_n, in any layout
  // (0: none). Default (session 34, lease 43: 97 training groups of M > 256, N <= 512 beside lease
  // 41's 93 of M > 256; 5-fold cross-validation chose it in 89 of 100 folds, 2.63 % mean regret
  // against 3.41 % for none; NOTES.md "Lease 43 read, A"): M > 4096 with N <= 512.
  long swap_tall_min_m = 4096;
  long swap_tall_max_n = 512;
  // both: also M > swap_max_m with N <= swap_tall_max_n and K <= swap_tall_max_k, any layout (0:
  // none). Default (session 38, on the same 190 training groups of M > 256 from leases 41 and 43:
  // 5-fold cross-validation, 20 repetitions, over 80 rules of minimum M, maximum N, maximum K and
  // with or without nt, chose this one in 72 of 100 folds; 2.04 % cross-validated mean regret
  // against 2.43 % for the tall rule alone; NOTES.md "Session 38"): M > 256 with N <= 512 and
  // K <= 4096. Where K is larger and M at most 4096, the swapped kernels lose (20.8 % mean regret
  // in the 3 groups of M in (2048, 4096] with K in (4096, 8192]).
  long swap_tall_max_k = 4096;
  // both: how the two rankings of an eligible problem run (the ranking is the same either way):
  // 1 = at once, each on select_threads threads with its own workers; 0 = one after the other on
  // every select thread; -1 = at once on a machine with two hardware threads or more, else one
  // after the other. Either way the transposed ranking stops once static bounds show that its
  // orientation cannot lead (its catalogue's or its cascade's best static score is not above
  // the bar).
  int concurrent_orientations = -1;
  // The sliced-K rule (SlicedRule above; on by default since session 42).
  SlicedRule sliced;
};
// Whether SelectorOptions::orientations = both ranks p's transposed problem (swap_max_m and
// swap_layouts, or swap_tall_min_m, swap_tall_max_n and swap_tall_max_k).
bool swap_eligible(const SelectorOptions& o, const Problem& p);
// "own" or "both" (throws Error naming `what` otherwise).
Orientations parse_orientations(std::string_view v, const std::string& what);


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

  // The shipped default model: $CKS_MODEL, else models/default.json as docs/library.md "Data files" finds it.
  static std::string default_model_path();

  // Top `top_k` candidates of the problem's layout catalogue (cached). Throws Error on
  // non-positive dimensions or top_k == 0.
  Ranking select(const Problem& p, size_t top_k) const;
  // Builds the per-layout state that the first select() of a layout otherwise builds: the
  // catalogue, the feature computer's per-kernel terms, the static classes and (two-stage
  // ranking) the model prior: a one-time start-up cost. With both orientations, for
  // swap_layout(layout) too.
  void prepare(Layout layout) const;
  // The same without the cache (always ranks).
  Ranking select_uncached(const Problem& p, size_t top_k) const;
  // The candidates the prefilter keeps for the model (catalogue indices, ascending; at least
  // top_k): every candidate when exhaustive. The ranking is the model's over these (the
  // cascade only decides which of them get all the trees). For measuring what the prefilter
  // changes (cks eval --prefilter).
  std::vector<uint32_t> prefiltered(const Problem& p, size_t top_k) const;

  // The training groups of a layout the model records (provenance "groups_by_layout"; models
  // trained before it was recorded, and the static score, say nothing: nullopt).
  std::optional<size_t> training_groups(Layout layout) const;
  const HardwareDesc& hw() const;
  const SelectorOptions& options() const;
  std::string description() const;  // "xgboost rank:ndcg (models/default.json)" or "static score"
  // The ranking mode: "exhaustive", "prefilter 2048, cascade 25 trees -> 128" or "static score".
  std::string mode() const;
  // both orientations: whether an eligible problem's two rankings run at once (resolved
  // SelectorOptions::concurrent_orientations).
  bool concurrent_orientations() const;
  size_t cached_problems() const;

 private:
  struct Impl;
  explicit Selector(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace cks
