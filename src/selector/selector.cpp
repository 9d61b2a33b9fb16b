// cks::Selector: two-stage (prefilter, then the model) or exhaustive ranking of one problem's
// catalogue, top-K selection, result cache.
#include "cks/selector.hpp"

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <deque>
#include <exception>
#include <future>
#include <map>
#include <mutex>
#include <numeric>
#include <queue>
#include <set>
#include <thread>
#include <unordered_map>

#include "cks/models.hpp"
#include "cks/sampling.hpp"
#include "common/cache_file.hpp"
#include "common/data_files.hpp"
#include "selector/setup_cache.hpp"
#include "selector/static_index.hpp"

namespace cks {

KernelDesc selected_kernel(const Selection& s, Layout layout) {
  if (s.sliced) return Catalogue::get(layout).kernels().at(s.kernel).sliced_variant();
  if (!s.swapped) return Catalogue::get(layout).kernels().at(s.kernel);
  return Catalogue::get(swap_layout(layout)).kernels().at(s.kernel).swapped_twin();
}

namespace {
// The catalogue kernel whose sliced-K variant the rule runs (SlicedRule): ping-pong 64x64x128,
// cluster 1x1, auto stages, no-smem epilogue, persistent.
KernelDesc sliced_rule_base(Layout layout) {
  KernelDesc k;
  k.layout = layout;
  k.tm = 64, k.tn = 64, k.tk = 128;
  k.cm = 1, k.cn = 1;
  k.stages = 0;
  k.mainloop = MainloopSchedule::pingpong;
  k.epilogue = EpilogueSchedule::no_smem;
  k.scheduler = TileSchedulerKind::persistent;
  return k;
}
constexpr int kRuleSlices[] = {16, 12, 8, 6, 4, 3, 2};  // knob_settings' slice counts, largest first
}  // namespace

KernelDesc sliced_rule_kernel(Layout layout) { return sliced_rule_base(layout).sliced_variant(); }

std::vector<int> sliced_rule_slices(const SlicedRule& r, const Problem& p) {
  std::vector<int> out;
  if (r.max_tiles <= 0 || p.m <= 0 || p.n <= 0 || p.k <= 0) return out;
  const long tiles = ((p.m + 63) / 64) * ((p.n + 63) / 64);
  if (tiles > r.max_tiles || (r.max_m > 0 && p.m > r.max_m) || p.k < r.min_k) return out;
  for (int s : kRuleSlices) {
    if (p.k % (8L * s) != 0 || tiles * s > r.max_ctas || p.k / s < r.min_slice_k) continue;
    out.push_back(s);
    if (out.size() > r.alternates) break;
  }
  return out;
}

Orientations parse_orientations(std::string_view v, const std::string& what) {
  if (v == "own") return Orientations::own;
  if (v == "both") return Orientations::both;
  throw Error(what + ": '" + std::string(v) + "' is not own or both");
}

bool swap_eligible(const SelectorOptions& o, const Problem& p) {
  if (o.swap_tall_min_m > 0 && p.m > o.swap_tall_min_m && p.n <= o.swap_tall_max_n) return true;
  if (o.swap_tall_max_k > 0 && p.m > o.swap_max_m && p.n <= o.swap_tall_max_n && p.k <= o.swap_tall_max_k) return true;
  return (o.swap_max_m <= 0 || p.m <= o.swap_max_m) && (o.swap_layouts >> static_cast<unsigned>(p.layout) & 1u);
}

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

// Per-layout state built once: the feature computer and the static classes (the prefilter and
// the static fallback), with the model prior for a two-stage model ranking.
struct LayoutState {
  FeatureComputer features;
  selector_detail::StaticIndex index;
  // The model's evidence groups of this layout (SelectorOptions::evidence_groups): log2 of the
  // problem's M, N, K and the leaders found in this catalogue (candidate indices, fastest first).
  struct EvidenceGroup {
    std::array<double, 3> log2_mnk;
    std::vector<uint32_t> leaders;
  };
  std::vector<EvidenceGroup> evidence;
};

// The model's evidence groups of a layout, leaders resolved to catalogue candidate indices (a
// leader the catalogue lacks, e.g. from another catalogue version, is dropped).
std::vector<LayoutState::EvidenceGroup> resolve_evidence(const Evidence& ev, const Catalogue& cat) {
  std::vector<LayoutState::EvidenceGroup> out;
  std::map<std::pair<uint32_t, std::string>, uint32_t> wanted;  // (kernel index, knobs) -> candidate index
  for (const EvidenceGroup& g : ev.groups) {
    if (g.problem.layout != cat.layout()) continue;
    for (const auto& [id, knobs] : g.leaders)
      if (const auto kernel = cat.find(id)) wanted.emplace(std::pair{*kernel, knobs}, UINT32_MAX);
  }
  if (wanted.empty()) return out;
  std::vector<bool> kernel_wanted(cat.kernels().size(), false);
  for (const auto& [key, unused] : wanted) kernel_wanted[key.first] = true;
  const std::vector<Candidate>& cands = cat.candidates();
  for (uint32_t i = 0; i < cands.size(); ++i)
    if (kernel_wanted[cands[i].kernel])
      if (auto it = wanted.find({cands[i].kernel, cands[i].knobs.canonical()}); it != wanted.end()) it->second = i;
  for (const EvidenceGroup& g : ev.groups) {
    if (g.problem.layout != cat.layout()) continue;
    LayoutState::EvidenceGroup r{{std::log2(static_cast<double>(g.problem.m)), std::log2(static_cast<double>(g.problem.n)),
                                  std::log2(static_cast<double>(g.problem.k))},
                                 {}};
    for (const auto& [id, knobs] : g.leaders)
      if (const auto kernel = cat.find(id))
        if (const uint32_t c = wanted.at({*kernel, knobs}); c != UINT32_MAX) r.leaders.push_back(c);
    out.push_back(std::move(r));
  }
  return out;
}

// Reused buffers of one thread's rankings (no allocation per cold select): phi of the
// prefiltered rows and of the cascade's kept rows, one matrix per block of rows (a task).
struct Scratch {
  std::vector<Candidate> candidates;
  std::vector<FeatureMatrix> x, x2;
  std::vector<float> scores;
  std::vector<uint32_t> positions;
  std::vector<std::vector<float>> leaves;  // the second stage's per-term values, per task
};
Scratch& scratch() {
  thread_local Scratch s;
  return s;
}

// The persistent workers of one selector's cold selects (SelectorOptions::select_threads).
// run() publishes tasks 0..n-1 and claims them together with the workers; a task is claimed by a
// compare-and-swap on one word holding (generation, task count, next task), so a worker that
// wakes late claims nothing of a finished call, and the calling thread alone finishes a call
// whose workers never woke (e.g. after fork()). After a generation a worker spins for kSpin (a
// select's second stage follows its first within microseconds), then parks (std::atomic wait,
// a futex): waking a parked thread took ~0.1 ms on the 2-core VM, so a select calls wake() before
// its prefilter and the workers are spinning when its first stage comes. One run() at a time
// (the selector's pool mutex).
class WorkerPool {
 public:
  explicit WorkerPool(int workers) {
    for (int i = 0; i < workers; ++i) threads_.emplace_back([this] { loop(); });
  }
  ~WorkerPool() {
    stop_.store(true);
    state_.fetch_add(uint64_t{1} << 32);  // a new generation wakes every worker
    state_.notify_all();
    for (auto& t : threads_) t.join();
  }
  WorkerPool(const WorkerPool&) = delete;
  WorkerPool& operator=(const WorkerPool&) = delete;

  // Wakes the workers (an empty generation) so that they spin for the next run().
  void wake() { publish(0); }

  // Runs fn(0) .. fn(tasks - 1) (tasks < 2^16) on the workers and the calling thread; returns
  // when all are done, rethrowing the first task's exception.
  template <class F>
  void run(size_t tasks, F& fn) {
    fn_ = [](void* f, size_t t) { (*static_cast<F*>(f))(t); };
    ctx_ = &fn;
    error_ = nullptr;
    done_.store(0, std::memory_order_relaxed);
    const uint64_t generation = publish(tasks);
    work(generation);
    for (uint32_t d; (d = done_.load(std::memory_order_acquire)) < tasks;) done_.wait(d, std::memory_order_acquire);
    if (error_) std::rethrow_exception(error_);
  }

 private:
  // Claims and runs tasks of `generation` until none is left.
  void work(uint64_t generation) {
    uint64_t s = state_.load(std::memory_order_acquire);
    for (;;) {
      const uint64_t tasks = (s >> 16) & 0xffff, next = s & 0xffff;
      if ((s >> 32) != generation || next >= tasks) return;
      if (!state_.compare_exchange_weak(s, s + 1, std::memory_order_acq_rel, std::memory_order_acquire)) continue;
      try {
        fn_(ctx_, next);
      } catch (...) {
        std::lock_guard lock(error_mutex_);
        if (!error_) error_ = std::current_exception();
      }
      if (done_.fetch_add(1, std::memory_order_acq_rel) + 1 == tasks) done_.notify_all();
    }
  }
  uint64_t publish(size_t tasks) {
    const uint64_t generation = (state_.load(std::memory_order_relaxed) >> 32) + 1;
    state_.store(generation << 32 | uint64_t(tasks) << 16, std::memory_order_release);
    state_.notify_all();
    return generation;
  }
  void loop() {
    uint64_t seen = 0;  // the last generation worked on
    for (;;) {
      uint64_t s = state_.load(std::memory_order_acquire);
      // Spin (yielding now and then, for an oversubscribed machine), then park.
      const auto until = std::chrono::steady_clock::now() + kSpin;
      for (int i = 1; (s >> 32) == seen; ++i, s = state_.load(std::memory_order_acquire)) {
#if defined(__x86_64__) || defined(__i386__)
        __builtin_ia32_pause();
#endif
        if (i % 64 == 0) {
          if (std::chrono::steady_clock::now() > until) break;
          std::this_thread::yield();
        }
      }
      for (; (s >> 32) == seen; s = state_.load(std::memory_order_acquire)) state_.wait(s, std::memory_order_acquire);
      if (stop_.load()) return;
      seen = s >> 32;
      work(seen);
    }
  }

  static constexpr std::chrono::microseconds kSpin{300};
  std::vector<std::thread> threads_;
  std::atomic<uint64_t> state_{0};  // generation << 32 | tasks << 16 | next task
  std::atomic<uint32_t> done_{0};   // tasks finished in this generation
  std::atomic<bool> stop_{false};
  void (*fn_)(void*, size_t) = nullptr;
  void* ctx_ = nullptr;
  std::mutex error_mutex_;
  std::exception_ptr error_;
};

// Rows of the cascade shared out: blocks of whole 16-row lanes (the tree walk's), at least
// kMinTaskRows rows and kMinTaskWork row-trees (~30 us of walk) per task, so that a small
// cascade does not pay the workers' wake-up.
constexpr size_t kTaskRowAlign = 16, kMinTaskRows = 16, kMinTaskWork = 4096;

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

  // The workers of select_threads (created on first use); a select holds a pool's mutex while it
  // uses its workers, and one that finds them busy scores on its own thread. Two pools when the
  // two orientations are ranked at once (concurrent_orientations()), one per ranking; else one.
  static constexpr size_t kPools = 2;
  mutable std::array<std::mutex, kPools> pool_mutex;
  mutable std::array<std::once_flag, kPools> pool_once;
  mutable std::array<std::unique_ptr<WorkerPool>, kPools> pool;

  mutable std::mutex cache_mutex;
  // A cached list shorter than the depth it was ranked for holds the whole catalogue.
  struct Cached {
    std::shared_ptr<const std::vector<Selection>> list;
    size_t depth = 0;
  };
  mutable std::unordered_map<ProblemKey, Cached, ProblemKeyHash> cache;
  mutable std::deque<ProblemKey> cache_order;  // insertion order, for eviction

  bool two_stage() const { return model && options.prefilter > 0; }
  bool cascade() const {
    return two_stage() && model->terms() > 0 && options.cascade_terms > 0 && options.cascade_terms < model->terms();
  }

  std::shared_ptr<const LayoutState> layout_state(Layout layout) const {
    std::lock_guard lock(layouts_mutex);
    auto& slot = layouts[layout];
    if (!slot) {
      const Catalogue& cat = Catalogue::get(layout);
      auto st = std::make_shared<LayoutState>(LayoutState{FeatureComputer(cat.kernels(), hw), {cat, hw}, {}});
      if (two_stage() && options.prior_weight != 0) st->index.set_priors(priors(cat, st->features), options.prior_weight);
      if (two_stage() && options.evidence_groups > 0) st->evidence = resolve_evidence(model->info().evidence, cat);
      slot = std::move(st);
    }
    return slot;
  }

  // Scores by the model's first `terms` terms (all terms when 0, not fewer, or not additive).
  void score_terms(const FeatureMatrix& x, std::span<float> out, size_t terms) const {
    if (model->terms() > 0 && terms > 0 && terms < model->terms()) {
      std::fill(out.begin(), out.end(), model->terms_base());
      model->add_terms(x, out, 0, terms);
    } else {
      model->predict(x, out);
    }
  }

  // The priors of model_priors() through the set-up cache (selector/setup_cache.hpp): read back
  // when the model came from a file (source_hash) and an entry for it, this catalogue and these
  // prior options exists whose sample scores this build reproduces bit for bit; else computed
  // and written.
  std::vector<std::vector<float>> priors(const Catalogue& cat, const FeatureComputer& fc) const {
    using namespace selector_detail;
    const uint64_t source = model->info().source_hash;
    const std::string dir = source ? cache_dir() : std::string();
    if (dir.empty()) return model_priors(cat, fc);
    const uint64_t key = prior_setup_key(source, cat, hw, options);
    const std::string path = prior_setup_path(dir, key);
    if (auto cached = read_prior_setup(path, key, cat.candidates().size(), options.prior_problems.size()))
      if (cached->sample_scores == sample_scores(cat, fc, cached->sample)) return std::move(cached->priors);
    PriorSetup setup;
    setup.sample = prior_sample(cat.candidates().size());
    setup.priors = model_priors(cat, fc, &setup);
    write_prior_setup(path, key, setup);
    return std::move(setup.priors);
  }

  // The raw prior scores (the first prior_terms terms) of a few candidates on each reference problem.
  std::vector<std::vector<float>> sample_scores(const Catalogue& cat, const FeatureComputer& fc,
                                                const std::vector<uint32_t>& sample) const {
    std::vector<Candidate> rows;
    for (uint32_t i : sample) rows.push_back(cat.candidates()[i]);
    std::vector<std::vector<float>> out;
    FeatureMatrix x;
    for (const auto& [m, n, k] : options.prior_problems) {
      fc.compute(Problem{m, n, k, cat.layout()}, rows, x);
      score_terms(x, out.emplace_back(rows.size()), options.prior_terms);
    }
    return out;
  }

  // The prefilter's priors, one per view of the static index. prior(c) is c's standardised
  // score ((s - mean) / sd over the catalogue) scored with the model's first prior_terms terms:
  // PriorMode::mean, one prior, its mean over the reference problems; PriorMode::nearest, one
  // per reference problem (prior_view() picks the view). `setup` (optional): its sample's raw
  // scores are recorded per reference problem.
  std::vector<std::vector<float>> model_priors(const Catalogue& cat, const FeatureComputer& fc,
                                               selector_detail::PriorSetup* setup = nullptr) const {
    const std::vector<Candidate>& cands = cat.candidates();
    if (options.prior_problems.empty()) throw Error("selector: a prior needs reference problems");
    std::vector<std::vector<float>> per_problem;
    std::vector<double> sum(cands.size(), 0.0);
    std::vector<float> score(cands.size());
    const int threads = options.setup_threads > 0
                            ? options.setup_threads
                            : std::max(1, static_cast<int>(std::thread::hardware_concurrency()));
    for (const auto& [m, n, k] : options.prior_problems) {
      const Problem p{m, n, k, cat.layout()};
      // Blocks of the catalogue, shared out to the set-up threads (deterministic: a block's
      // scores do not depend on the thread).
      std::atomic<size_t> next{0};
      auto work = [&] {
        FeatureMatrix x;
        for (size_t begin; (begin = next.fetch_add(options.block_rows)) < cands.size();) {
          const size_t end = std::min(cands.size(), begin + options.block_rows);
          fc.compute(p, std::span<const Candidate>(cands).subspan(begin, end - begin), x);
          score_terms(x, std::span<float>(score).subspan(begin, end - begin), options.prior_terms);
        }
      };
      std::vector<std::thread> pool;
      for (int t = 1; t < threads; ++t) pool.emplace_back(work);
      work();
      for (auto& t : pool) t.join();
      if (setup) {
        auto& sampled = setup->sample_scores.emplace_back();
        for (uint32_t i : setup->sample) sampled.push_back(score[i]);
      }
      double mean = 0, sq = 0;
      for (float v : score) mean += v;
      mean /= static_cast<double>(score.size());
      for (float v : score) sq += (v - mean) * (v - mean);
      const double sd = std::sqrt(sq / static_cast<double>(score.size()));
      auto& own = per_problem.emplace_back(cands.size(), 0.0f);
      if (sd > 0)
        for (size_t i = 0; i < score.size(); ++i) {
          sum[i] += (score[i] - mean) / sd;
          own[i] = static_cast<float>((score[i] - mean) / sd);
        }
    }
    if (options.prior_mode == PriorMode::nearest) return per_problem;
    std::vector<float> prior(cands.size());
    for (size_t i = 0; i < prior.size(); ++i) prior[i] = static_cast<float>(sum[i] / static_cast<double>(options.prior_problems.size()));
    return {prior};
  }

  // The static index's prior view for a problem: 0, or with PriorMode::nearest the reference
  // problem nearest in (log2 M, log2 N, log2 K) (the first of equally near ones).
  size_t prior_view(const Problem& p) const {
    if (options.prior_mode != PriorMode::nearest) return 0;
    size_t best = 0;
    double best_d = std::numeric_limits<double>::infinity();
    for (size_t i = 0; i < options.prior_problems.size(); ++i) {
      double d = 0;
      for (const auto& [a, b] : {std::pair{p.m, options.prior_problems[i][0]}, std::pair{p.n, options.prior_problems[i][1]},
                                 std::pair{p.k, options.prior_problems[i][2]}}) {
        const double diff = std::log2(static_cast<double>(a)) - std::log2(static_cast<double>(b));
        d += diff * diff;
      }
      if (d < best_d) best_d = d, best = i;
    }
    return best;
  }

  // The prefilter's candidates (catalogue indices, ascending): the `depth` (at least
  // options.prefilter) best by the prefilter key, joined by the first evidence_top leaders of the
  // evidence_groups training groups nearest to the problem (squared distance of log2 M, N, K;
  // ties by the model file's order).
  // best_static: the best static score of the whole catalogue (StaticIndex::top_prefilter).
  std::vector<uint32_t> prefilter_candidates(const Problem& p, size_t depth, const LayoutState& state,
                                             double* best_static = nullptr) const {
    std::vector<uint32_t> kept =
        state.index.top_prefilter(p, std::max(options.prefilter, depth), prior_view(p), best_static);
    const size_t groups = std::min(options.evidence_groups, state.evidence.size());
    if (groups == 0 || options.evidence_top == 0) return kept;
    const std::array<double, 3> q{std::log2(static_cast<double>(p.m)), std::log2(static_cast<double>(p.n)),
                                  std::log2(static_cast<double>(p.k))};
    thread_local std::vector<std::pair<double, uint32_t>> near;  // reused: no allocation per cold select
    near.resize(state.evidence.size());
    for (uint32_t g = 0; g < near.size(); ++g) {
      double d = 0;
      for (int i = 0; i < 3; ++i) d += (q[i] - state.evidence[g].log2_mnk[i]) * (q[i] - state.evidence[g].log2_mnk[i]);
      near[g] = {d, g};
    }
    std::partial_sort(near.begin(), near.begin() + static_cast<std::ptrdiff_t>(groups), near.end());
    const size_t before = kept.size();
    for (size_t i = 0; i < groups; ++i) {
      const auto& leaders = state.evidence[near[i].second].leaders;
      kept.insert(kept.end(), leaders.begin(), leaders.begin() + static_cast<std::ptrdiff_t>(std::min(options.evidence_top, leaders.size())));
    }
    std::sort(kept.begin() + static_cast<std::ptrdiff_t>(before), kept.end());
    std::inplace_merge(kept.begin(), kept.begin() + static_cast<std::ptrdiff_t>(before), kept.end());
    kept.erase(std::unique(kept.begin(), kept.end()), kept.end());
    return kept;
  }

  int select_threads() const {
    if (options.select_threads > 0) return options.select_threads;
    return static_cast<int>(std::clamp(std::thread::hardware_concurrency(), 1u, 4u));
  }

  // Tasks and rows per task for `rows` rows given `terms` terms each: 1 task (rows rows) unless
  // the model is additive (every row scored on its own) and the work fills two tasks.
  std::pair<size_t, size_t> split_rows(size_t rows, size_t terms, size_t threads) const {
    if (threads <= 1 || model->terms() == 0 || rows == 0) return {1, rows};
    size_t tasks = std::min({threads, rows / kMinTaskRows, rows * terms / kMinTaskWork, size_t{0xffff}});
    if (tasks <= 1) return {1, rows};
    const size_t per = ((rows + tasks - 1) / tasks + kTaskRowAlign - 1) / kTaskRowAlign * kTaskRowAlign;
    return {(rows + per - 1) / per, per};
  }

  // Whether both orientations' rankings run at once, each on select_threads() threads (with
  // its own workers), or one after the other on all of them: at once on any machine with two
  // hardware threads (on the 2-core VM, 2 threads each: the same mean as one after the other and
  // a lower p95, docs/models.md "Both orientations").
  bool concurrent_orientations() const {
    if (options.concurrent_orientations >= 0) return options.concurrent_orientations > 0;
    return std::thread::hardware_concurrency() >= 2u;
  }

  // Runs fn(0) .. fn(tasks - 1): on the calling thread, or shared with `workers` (held) if any.
  template <class F>
  void run_tasks(size_t tasks, WorkerPool* workers, F&& fn) const {
    if (tasks > 1 && workers) {
      workers->run(tasks, fn);
    } else {
      for (size_t t = 0; t < tasks; ++t) fn(t);
    }
  }

  // Two-stage ranking: the finalists (catalogue indices, ascending) and their full-model scores.
  // With select_threads > 1, phi and the first terms (stage 1) are computed in blocks of rows on
  // the workers, then the remaining terms of the kept rows (stage 2) in ranges of terms, added in
  // term order by the calling thread; a row's phi and scores do not depend on its block or on the
  // ranges, so the result is the single thread's bit for bit.
  // lead_bar (both orientations: the transposed ranking; rank()): once it holds the bar (> 0),
  // returns false, scoring no further, where this orientation cannot lead: at the end of the
  // prefilter, where the best static score of the whole catalogue is not above the bar; at the
  // end of the first stage, where neither is the best static score of the candidates the cascade
  // keeps (a superset of the ranking's head). (Each score as rank()'s estimate computes it: the
  // same function; the relative 1e-9 spares a rounding argument.)
  bool two_stage_scores(const Problem& p, size_t depth, const LayoutState& state, std::vector<uint32_t>& finalists,
                        std::vector<float>& scores, const std::atomic<double>* lead_bar = nullptr) const {
    const Catalogue& cat = Catalogue::get(p.layout);
    Scratch& s = scratch();
    // The workers, when this select may use them (not held by another thread's select): woken
    // now, so that they are running by the end of the prefilter.
    const size_t threads = static_cast<size_t>(select_threads());
    std::unique_lock<std::mutex> pool_lock;
    WorkerPool* workers = nullptr;
    if (threads > 1 && model->terms() > 0) {
      const size_t pools = options.orientations == Orientations::both && concurrent_orientations() ? kPools : 1;
      for (size_t i = 0; i < pools && !workers; ++i) {
        pool_lock = std::unique_lock(pool_mutex[i], std::try_to_lock);
        if (!pool_lock.owns_lock()) continue;
        std::call_once(pool_once[i], [&] { pool[i] = std::make_unique<WorkerPool>(static_cast<int>(threads) - 1); });
        workers = pool[i].get();
        workers->wake();
      }
    }
    const size_t usable = workers ? threads : 1;
    // Catalogue order (ascending): one kernel's rows together for phi.
    double catalogue_best = 0;
    finalists = prefilter_candidates(p, depth, state, lead_bar ? &catalogue_best : nullptr);
    const auto cannot_lead = [&](double best) {
      const double bar = lead_bar ? lead_bar->load(std::memory_order_acquire) : 0.0;
      return bar > 0 && !(best * (1.0 + 1e-9) > bar);
    };
    if (cannot_lead(catalogue_best)) return false;
    s.candidates.clear();
    for (uint32_t i : finalists) s.candidates.push_back(cat.candidates()[i]);
    const size_t keep = std::max(options.cascade_keep, depth);
    const bool cascading = cascade() && keep < finalists.size();
    const size_t rows = finalists.size();
    // Stage 1: phi and the first terms (all of them without a cascade) of every row.
    const size_t first_terms = cascading ? options.cascade_terms : model->terms();
    const auto [tasks, per] = split_rows(rows, first_terms, usable);
    if (s.x.size() < tasks) s.x.resize(tasks);
    std::vector<float>& first = cascading ? s.scores : scores;
    first.resize(rows);
    run_tasks(tasks, workers, [&](size_t t) {
      const size_t begin = t * per, end = std::min(rows, begin + per);
      state.features.compute(p, std::span<const Candidate>(s.candidates).subspan(begin, end - begin), s.x[t]);
      const std::span<float> out = std::span<float>(first).subspan(begin, end - begin);
      if (cascading) {
        score_terms(s.x[t], out, options.cascade_terms);
      } else {
        model->predict(s.x[t], out);
      }
    });
    if (!cascading) return true;
    // Cascade: the rest of the terms for the `keep` best.
    s.positions.resize(rows);
    std::iota(s.positions.begin(), s.positions.end(), 0u);
    std::nth_element(s.positions.begin(), s.positions.begin() + static_cast<std::ptrdiff_t>(keep - 1), s.positions.end(),
                     [&](uint32_t a, uint32_t b) { return s.scores[a] > s.scores[b] || (s.scores[a] == s.scores[b] && a < b); });
    s.positions.resize(keep);
    std::sort(s.positions.begin(), s.positions.end());
    if (cannot_lead(catalogue_best)) return false;
    if (lead_bar && lead_bar->load(std::memory_order_acquire) > 0) {
      const GemmShape shape{p.m, p.n, p.k};
      double best = 0;
      for (const uint32_t pos : s.positions) {
        const Candidate& c = s.candidates[pos];
        best = std::max(best, cks::static_score(shape, cat.kernels()[c.kernel], c.knobs, hw));
      }
      if (cannot_lead(best)) return false;
    }
    // Stage 2: few rows, most of the terms. Several tasks split the terms, not the rows: split by
    // rows, every task walks every tree for its block of rows, and the model's nodes (3.5 MB for
    // the shipped one, beyond a core's cache) stream through each core in full; split by terms,
    // each core streams its share. Each task writes its terms' values per row, and the calling
    // thread adds them to the row's score in term order: add_terms' sum, bit for bit.
    const size_t rest = model->terms() - options.cascade_terms;
    auto [tasks2, per2] = split_rows(keep, rest, usable);
    const size_t term_tasks = tasks2 > 1 ? std::min(usable, rest) : 1;
    if (term_tasks > 1) tasks2 = 1, per2 = keep;
    if (s.x2.size() < tasks2) s.x2.resize(tasks2);
    const size_t cols = s.x[0].cols;
    for (size_t t = 0; t < tasks2; ++t) s.x2[t].resize(std::min(keep, (t + 1) * per2) - t * per2, cols);
    scores.resize(keep);
    for (size_t j = 0; j < keep; ++j) {
      const uint32_t pos = s.positions[j];
      const FeatureMatrix& from = s.x[pos / per];
      std::copy(from.row(pos % per), from.row(pos % per) + cols, s.x2[j / per2].row(j % per2));
      scores[j] = s.scores[pos];
      finalists[j] = finalists[pos];
    }
    finalists.resize(keep);
    if (term_tasks > 1) {
      if (s.leaves.size() < term_tasks) s.leaves.resize(term_tasks);
      const auto range = [&](size_t t) { return options.cascade_terms + rest * t / term_tasks; };
      std::atomic<bool> available{true};
      run_tasks(term_tasks, workers, [&](size_t t) {
        std::vector<float>& v = s.leaves[t];
        v.resize(keep * (range(t + 1) - range(t)));
        if (!model->term_values(s.x2[0], v, range(t), range(t + 1))) available.store(false, std::memory_order_relaxed);
      });
      if (available.load(std::memory_order_relaxed)) {
        for (size_t j = 0; j < keep; ++j) {
          float acc = scores[j];
          for (size_t t = 0; t < term_tasks; ++t) {
            const size_t n = range(t + 1) - range(t);
            const float* v = s.leaves[t].data() + j * n;
            for (size_t i = 0; i < n; ++i) acc += v[i];
          }
          scores[j] = acc;
        }
        return true;
      }
    }
    run_tasks(tasks2, workers, [&](size_t t) {
      const size_t begin = t * per2;
      model->add_terms(s.x2[t], std::span<float>(scores).subspan(begin, s.x2[t].rows), options.cascade_terms,
                       model->terms());
    });
    return true;
  }

  // The ranking of SelectorOptions::orientations: the problem's own (rank_one); with `both`, for
  // a problem swap_eligible() admits, its transposed problem's too when that orientation leads:
  // then the two are interleaved, the swapped first. Both rankings go at least orientation_depth
  // deep, so that which leads does not depend on depth (a --top 1 pick stays the first of a
  // --top 256 list). Where the own orientation leads the ranking is the own one alone.
  // The ranking: rank_orientations(), led by the sliced-K rule's picks where it applies
  // (SlicedRule): its first slice count first, then the ranking with the rule's further slice
  // counts after its first entry, one each, in order.
  std::shared_ptr<const std::vector<Selection>> rank(const Problem& p, size_t depth) const {
    const std::vector<int> slices = sliced_rule_slices(options.sliced, p);
    auto ranked = rank_orientations(p, depth);
    if (slices.empty() || !ranked) return ranked;
    const Catalogue& cat = Catalogue::get(p.layout);
    const KernelDesc base = sliced_rule_base(p.layout);
    const std::optional<uint32_t> index = cat.find(base.id());
    if (!index) return ranked;  // not in this catalogue: no rule
    const KernelDesc sk = base.sliced_variant();
    auto out = std::make_shared<std::vector<Selection>>();
    const auto pick = [&](int s, double score) {
      const RuntimeKnobs knobs{RasterOrder::along_m, 1, Decomposition::split_k, s};
      Selection sel{*index, knobs, score, sk.id(), knobs.canonical(), sk.canonical()};
      sel.sliced = true;
      return sel;
    };
    const double lead = ranked->empty() ? 0.0 : (*ranked)[0].score;
    out->push_back(pick(slices[0], lead));
    for (size_t i = 0; out->size() < depth && i < ranked->size(); ++i) {
      out->push_back((*ranked)[i]);
      if (i + 1 < slices.size() && out->size() < depth) out->push_back(pick(slices[i + 1], (*ranked)[i].score));
    }
    return out;
  }

  std::shared_ptr<const std::vector<Selection>> rank_orientations(const Problem& p, size_t depth) const {
    if (options.orientations == Orientations::own || !swap_eligible(options, p)) return rank_one(p, depth);
    const size_t d = std::max(depth, options.orientation_depth);
    const Problem q{p.n, p.m, p.k, swap_layout(p.layout)};
    // An orientation's estimate: the best static score (absolute efficiency, padding and waves
    // included) among its first orientation_depth candidates, on its own problem.
    const auto estimate = [&](const Problem& pr, const std::vector<Selection>& list) {
      const Catalogue& cat = Catalogue::get(pr.layout);
      const GemmShape shape{pr.m, pr.n, pr.k};
      double best = 0;
      for (size_t i = 0; i < std::min(list.size(), options.orientation_depth); ++i)
        best = std::max(best, cks::static_score(shape, cat.kernels()[list[i].kernel], list[i].knobs, hw));
      return best;
    };
    // The transposed orientation's estimate is at most the best static score of its whole
    // catalogue, and of the candidates its cascade keeps: where these are not above the bar, the
    // own ranking is the answer whatever the model ranks first, and the transposed ranking stops
    // there (two_stage_scores's lead_bar; the result is the same either way). Of the problems of
    // cks bench select, 42 % stop at the catalogue and 12 % more at the cascade.
    std::shared_ptr<const std::vector<Selection>> own, theirs;
    std::atomic<double> lead_bar{0};
    double bar = 0;
    if (concurrent_orientations()) {
      // The two rankings at once, each with its own workers: the cold latency of one (the 1 ms
      // budget), not of two. (Concurrent rankings are safe: rank_one is const.) The bar reaches
      // the transposed ranking when the own one ends, for its next check.
      auto transposed = std::async(std::launch::async, [this, &q, d, &lead_bar] { return rank_one(q, d, &lead_bar); });
      own = rank_one(p, d);
      bar = (1.0 + options.swap_margin) * estimate(p, *own);
      lead_bar.store(bar, std::memory_order_release);
      theirs = transposed.get();
    } else {
      // One after the other, each on every select thread, the transposed ranking only where the
      // best static score of its catalogue is above the bar.
      own = rank_one(p, d);
      bar = (1.0 + options.swap_margin) * estimate(p, *own);
      if (!(layout_state(q.layout)->index.best_static(q) * (1.0 + 1e-9) > bar)) return own;
      lead_bar.store(bar, std::memory_order_release);
      theirs = rank_one(q, d, &lead_bar);
    }
    if (!theirs || !(estimate(q, *theirs) > bar)) return own;
    auto swapped = std::make_shared<std::vector<Selection>>(*theirs);
    const Catalogue& qcat = Catalogue::get(q.layout);
    for (auto& s : *swapped) {
      const KernelDesc t = qcat.kernels()[s.kernel].swapped_twin();
      s.kernel_id = t.id();
      s.canonical = t.canonical();
      s.swapped = true;
    }
    auto out = std::make_shared<std::vector<Selection>>();
    for (size_t i = 0; out->size() < depth && (i < swapped->size() || i < own->size()); ++i) {
      if (i < swapped->size()) out->push_back((*swapped)[i]);
      if (i < own->size() && out->size() < depth) out->push_back((*own)[i]);
    }
    return out;
  }

  // One orientation: the problem's own layout catalogue. With lead_bar, null where this
  // orientation cannot lead (two_stage_scores).
  std::shared_ptr<const std::vector<Selection>> rank_one(const Problem& p, size_t depth,
                                                         const std::atomic<double>* lead_bar = nullptr) const {
    const Catalogue& cat = Catalogue::get(p.layout);
    const std::vector<Candidate>& cands = cat.candidates();
    const auto state = layout_state(p.layout);
    std::vector<Entry> ranked;  // (score, candidate), best first
    if (!model) {
      ranked = state->index.top_static(p, depth);
    } else {
      std::priority_queue<Entry, std::vector<Entry>, WorseFirst> best;
      auto offer = [&](double score, uint32_t index) {
        if (best.size() < depth) {
          best.emplace(score, index);
        } else if (WorseFirst{}(Entry{score, index}, best.top())) {
          best.pop();
          best.emplace(score, index);
        }
      };
      if (two_stage()) {
        // The ranking is the same list whatever depth is asked for: the head is what the default
        // prefilter and cascade keep (a cks select --top 1 pick is the first of a --top 256 list),
        // and a deeper request appends the best of a wider prefilter and cascade after it. (A
        // wider cascade alone would let a candidate the default cascade cuts become the first.)
        std::vector<uint32_t> finalists;
        std::vector<float> scores;
        if (!two_stage_scores(p, 0, *state, finalists, scores, lead_bar)) return nullptr;
        for (size_t i = 0; i < finalists.size(); ++i) offer(scores[i], finalists[i]);
        if (depth > best.size()) {
          std::vector<Entry> head(best.size());
          for (size_t r = best.size(); r-- > 0; best.pop()) head[r] = best.top();
          const std::set<uint32_t> in_head(finalists.begin(), finalists.end());
          const size_t tail_depth = depth - head.size();
          two_stage_scores(p, depth, *state, finalists, scores);
          std::priority_queue<Entry, std::vector<Entry>, WorseFirst> tail;
          for (size_t i = 0; i < finalists.size(); ++i) {
            if (in_head.count(finalists[i])) continue;
            if (tail.size() < tail_depth) tail.emplace(scores[i], finalists[i]);
            else if (WorseFirst{}(Entry{scores[i], finalists[i]}, tail.top())) { tail.pop(); tail.emplace(scores[i], finalists[i]); }
          }
          std::vector<Entry> rest(tail.size());
          for (size_t r = tail.size(); r-- > 0; tail.pop()) rest[r] = tail.top();
          head.insert(head.end(), rest.begin(), rest.end());
          ranked = std::move(head);
        }
      } else {
        FeatureMatrix x;
        std::vector<float> scores;
        for (size_t begin = 0; begin < cands.size(); begin += options.block_rows) {
          const size_t end = std::min(cands.size(), begin + options.block_rows);
          state->features.compute(p, std::span<const Candidate>(cands).subspan(begin, end - begin), x);
          scores.resize(end - begin);
          model->predict(x, scores);
          for (size_t i = begin; i < end; ++i) offer(scores[i - begin], static_cast<uint32_t>(i));
        }
      }
      if (ranked.empty()) {
        ranked.resize(best.size());
        for (size_t r = best.size(); r-- > 0; best.pop()) ranked[r] = best.top();
      }
    }
    auto out = std::make_shared<std::vector<Selection>>(ranked.size());
    for (size_t r = 0; r < ranked.size(); ++r) {
      const auto [score, index] = ranked[r];
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
  // $CKS_DATA_DIR/models, the installed share/cks/models, the source tree (common/data_files.hpp);
  // the source tree's path when none exists, so that the caller's message names it.
  if (std::string p = find_data_file("models/default.json"); !p.empty()) return p;
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

void Selector::prepare(Layout layout) const {
  impl_->layout_state(layout);
  // both orientations: the transposed problems' layout too, so that no first select pays its set-up.
  if (impl_->options.orientations == Orientations::both) impl_->layout_state(swap_layout(layout));
}

std::vector<uint32_t> Selector::prefiltered(const Problem& p, size_t top_k) const {
  validate(p, top_k);
  std::vector<uint32_t> out;
  if (!impl_->two_stage()) {
    out.resize(Catalogue::get(p.layout).candidates().size());
    std::iota(out.begin(), out.end(), 0u);
    return out;
  }
  return impl_->prefilter_candidates(p, top_k, *impl_->layout_state(p.layout));
}

std::optional<size_t> Selector::training_groups(Layout layout) const {
  if (!impl_->model) return std::nullopt;
  const auto& by_layout = impl_->model->info().provenance.value("groups_by_layout", nlohmann::json::object());
  const auto it = by_layout.find(std::string(to_string(layout)));
  if (it == by_layout.end() || !it->is_number_unsigned()) return std::nullopt;
  return it->get<size_t>();
}

const HardwareDesc& Selector::hw() const { return impl_->hw; }
const SelectorOptions& Selector::options() const { return impl_->options; }
std::string Selector::description() const { return impl_->origin; }
// "; both orientations" and the problems whose transposed problem is ranked (swap_eligible), e.g.
// "; both orientations (M <= 256; tn, nn, tt; or M > 4096 with N <= 512; or M > 256 with N <= 512
// and K <= 4096)"; nothing for the own
// orientation.
static std::string sliced_text(const SlicedRule& r) {
  if (r.max_tiles <= 0) return "";
  return "; sliced-K rule (<= " + std::to_string(r.max_tiles) + " 64x64 tiles" +
         (r.max_m > 0 ? ", M <= " + std::to_string(r.max_m) : std::string()) + ", K >= " + std::to_string(r.min_k) +
         "; tiles x slices <= " + std::to_string(r.max_ctas) + ", K / slices >= " + std::to_string(r.min_slice_k) + ")";
}

static std::string orientation_text(const SelectorOptions& o) {
  if (o.orientations != Orientations::both) return sliced_text(o.sliced);
  std::vector<std::string> limits;
  if (o.swap_max_m > 0) limits.push_back("M <= " + std::to_string(o.swap_max_m));
  if ((o.swap_layouts & 0xFu) != 0xFu) {
    std::string ls;
    for (Layout l : {Layout::tn, Layout::nt, Layout::nn, Layout::tt})
      if (o.swap_layouts & (1u << static_cast<int>(l))) ls += (ls.empty() ? "" : ", ") + std::string(to_string(l));
    limits.push_back(ls.empty() ? "no layout" : ls);
  }
  std::string t = "; both orientations";
  if (limits.empty()) return t + sliced_text(o.sliced);  // every problem (the tall ones too)
  for (size_t i = 0; i < limits.size(); ++i) t += (i == 0 ? " (" : "; ") + limits[i];
  if (o.swap_tall_min_m > 0)
    t += "; or M > " + std::to_string(o.swap_tall_min_m) + " with N <= " + std::to_string(o.swap_tall_max_n);
  if (o.swap_tall_max_k > 0)
    t += "; or M > " + std::to_string(o.swap_max_m) + " with N <= " + std::to_string(o.swap_tall_max_n) +
         " and K <= " + std::to_string(o.swap_tall_max_k);
  return t + ")" + sliced_text(o.sliced);
}

std::string Selector::mode() const {
  if (!impl_->model) return "static score" + orientation_text(impl_->options);
  if (!impl_->two_stage()) return "exhaustive" + orientation_text(impl_->options);
  std::string m = "prefilter " + std::to_string(impl_->options.prefilter);
  if (impl_->options.prior_weight == 0) m += " (static score only)";
  else if (impl_->options.prior_mode == PriorMode::nearest)
    m += " (prior of the nearest of " + std::to_string(impl_->options.prior_problems.size()) + " reference problems)";
  if (impl_->options.evidence_groups > 0 && impl_->options.evidence_top > 0)
    m += impl_->model->info().evidence.empty()
             ? " + no evidence (the model file has none)"
             : " + evidence " + std::to_string(impl_->options.evidence_top) + " of the " +
                   std::to_string(impl_->options.evidence_groups) + " nearest groups";
  if (impl_->cascade())
    m += ", cascade " + std::to_string(impl_->options.cascade_terms) + " trees -> " + std::to_string(impl_->options.cascade_keep);
  return m + orientation_text(impl_->options);
}
bool Selector::concurrent_orientations() const { return impl_->concurrent_orientations(); }
size_t Selector::cached_problems() const {
  std::lock_guard lock(impl_->cache_mutex);
  return impl_->cache.size();
}

}  // namespace cks
