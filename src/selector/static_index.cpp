// Static classes of a layout catalogue and the best-first selections over them
// (static_index.hpp).
#include "selector/static_index.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <map>
#include <span>
#include <tuple>

#include "cks/common.hpp"
#include "cks/sampling.hpp"

namespace cks::selector_detail {

namespace {

long ceil_div(long a, long b) { return (a + b - 1) / b; }

int split_factor(const RuntimeKnobs& k) {
  return k.decomposition == Decomposition::split_k ? std::max(1, k.splits) : 1;
}

}  // namespace

StaticIndex::StaticIndex(const Catalogue& cat, const HardwareDesc& hw) : hw_(hw) {
  const auto& kernels = cat.kernels();
  const auto& cands = cat.candidates();
  std::vector<std::pair<int, bool>> res(kernels.size());
  for (size_t i = 0; i < kernels.size(); ++i) {
    const KernelResources r = resources(kernels[i], hw);
    res[i] = {std::min(r.stages, kPipelineRefStages), r.spills_expected};
  }
  // Class key: (T_M, T_N, c_M, c_N, split factor, T_K, stage bucket, spills). Sorted so that
  // consecutive classes share the per-geometry and per-(geometry, splits, T_K) terms.
  using Key = std::tuple<int, int, int, int, int, int, int, bool>;
  std::map<Key, std::vector<uint32_t>> groups;
  // A kernel's candidates are consecutive and differ in their key only by the split factor: one
  // map lookup per (kernel, split factor), not per candidate (start-up cost).
  std::vector<std::pair<int, std::vector<uint32_t>*>> of_kernel;  // (split factor, its class)
  for (uint32_t i = 0; i < cands.size(); ++i) {
    if (i == 0 || cands[i].kernel != cands[i - 1].kernel) of_kernel.clear();
    const int splits = split_factor(cands[i].knobs);
    auto it = std::find_if(of_kernel.begin(), of_kernel.end(), [&](const auto& e) { return e.first == splits; });
    if (it == of_kernel.end()) {
      const KernelDesc& k = kernels[cands[i].kernel];
      const auto [stages, spills] = res[cands[i].kernel];
      of_kernel.emplace_back(splits, &groups[Key{k.tm, k.tn, k.cm, k.cn, splits, k.tk, stages, spills}]);
      it = of_kernel.end() - 1;
    }
    it->second->push_back(i);
  }
  class_of_.resize(cands.size());
  members_.reserve(cands.size());
  for (const auto& [key, members] : groups) {
    const auto [tm, tn, cm, cn, splits, tk, stages, spills] = key;
    if (geometries_.empty() || geometries_.back().tm != tm || geometries_.back().tn != tn ||
        geometries_.back().cm != cm || geometries_.back().cn != cn)
      geometries_.push_back({tm, tn, cm, cn});
    Class c;
    c.geometry = static_cast<uint32_t>(geometries_.size() - 1);
    c.tk = tk;
    c.stages = stages;
    c.splits = splits;
    c.spills = spills;
    c.begin = static_cast<uint32_t>(members_.size());
    for (uint32_t m : members) class_of_[m] = static_cast<uint32_t>(classes_.size());
    members_.insert(members_.end(), members.begin(), members.end());
    c.end = static_cast<uint32_t>(members_.size());
    classes_.push_back(c);
  }
  // class_scores()'s plan: runs of (geometry, splits, T_K), the distinct T_K and split factors.
  auto index_of = [](std::vector<int>& values, int v) {
    auto it = std::find(values.begin(), values.end(), v);
    if (it == values.end()) it = values.insert(values.end(), v);
    return static_cast<uint16_t>(it - values.begin());
  };
  run_of_.resize(classes_.size());
  class_stages_.resize(classes_.size());
  class_spills_.resize(classes_.size());
  for (size_t ci = 0; ci < classes_.size(); ++ci) {
    const Class& c = classes_[ci];
    if (ci == 0 || c.geometry != classes_[ci - 1].geometry || c.splits != classes_[ci - 1].splits ||
        c.tk != classes_[ci - 1].tk)
      runs_.push_back({c.geometry, index_of(tk_values_, c.tk), index_of(split_values_, c.splits)});
    run_of_[ci] = static_cast<uint32_t>(runs_.size() - 1);
    class_stages_[ci] = static_cast<uint8_t>(std::clamp(c.stages, 0, kPipelineRefStages));
    class_spills_[ci] = c.spills;
  }
  class_sample_.resize(classes_.size());
  for (size_t ci = 0; ci < classes_.size(); ++ci)
    class_sample_[ci] = static_cast<uint8_t>(std::min<size_t>(classes_[ci].size(), kSample));
}

void StaticIndex::set_prior(const std::vector<float>& prior, double weight) {
  set_priors(prior.empty() ? std::vector<std::vector<float>>{} : std::vector<std::vector<float>>{prior}, weight);
}

void StaticIndex::set_priors(const std::vector<std::vector<float>>& priors, double weight) {
  views_.clear();
  if (weight == 0) return;
  for (const auto& prior : priors) {
    if (prior.size() != members_.size()) throw Error("static index: prior size differs from the catalogue");
    View v;
    v.members = members_;
    for (const Class& c : classes_)
      std::sort(v.members.begin() + c.begin, v.members.begin() + c.end,
                [&](uint32_t a, uint32_t b) { return prior[a] > prior[b] || (prior[a] == prior[b] && a < b); });
    v.member_factor.resize(members_.size());
    for (size_t m = 0; m < members_.size(); ++m)
      v.member_factor[m] = std::exp(weight * static_cast<double>(prior[v.members[m]]));
    v.head_factor.resize(classes_.size());
    for (size_t c = 0; c < classes_.size(); ++c) v.head_factor[c] = v.member_factor[classes_[c].begin];
    v.sample_members.assign(classes_.size() * kSample, 0);
    v.sample_factor.assign(classes_.size() * kSample, 0.0);
    for (size_t c = 0; c < classes_.size(); ++c)
      for (uint32_t j = 0; j < class_sample_[c]; ++j) {
        v.sample_members[c * kSample + j] = v.members[classes_[c].begin + j];
        v.sample_factor[c * kSample + j] = v.member_factor[classes_[c].begin + j];
      }
    views_.push_back(std::move(v));
  }
}

void StaticIndex::class_scores(const Problem& p, std::vector<double>& out) const { scores(p, out, nullptr, nullptr); }

double StaticIndex::best_static(const Problem& p) const {
  thread_local std::vector<double> score;
  scores(p, score, nullptr, nullptr);
  return score.empty() ? 0.0 : *std::max_element(score.begin(), score.end());
}

double StaticIndex::scores(const Problem& p, std::vector<double>& out, const std::vector<double>* head_factor,
                           std::vector<double>* head) const {
  // The operations of static_score_terms(), factored: per geometry (tile grid, cluster
  // packing, tile reuse), per T_K and split factor (k tiles, k iterations, useful splits, split
  // overhead), per run of (geometry, splits, T_K) (waves, fill), per class (pipeline). Each
  // value takes the operations of the unfactored formula in its order (a run's fill *
  // cluster_use is the product's first step), so the scores are the same bits.
  out.resize(classes_.size());
  const double reuse_needed = hw_.bf16_flops_per_sm_per_s() / hw_.tma_bw_per_sm_bytes_per_s();
  const double ridge = hw_.ridge_flops_per_byte();
  double pipeline_pow[kPipelineRefStages + 1];
  for (int q = 0; q <= kPipelineRefStages; ++q)
    pipeline_pow[q] = std::pow(static_cast<double>(q) / kPipelineRefStages, kPipelineExponent);
  const double zero_tile_pow = std::pow(0.0, kTileExponent);

  // Per-thread buffers: no allocation per call once grown.
  thread_local std::vector<long> n_k, k_iters;  // per T_K; per (T_K, splits)
  thread_local std::vector<double> useful_splits, split_overhead;  // per (T_K, splits); per splits
  thread_local std::vector<double> run_product, run_tile;  // per run: fill * cluster_use, tile^e
  thread_local std::vector<uint8_t> run_q;                 // per run: min(k iterations, reference stages)
  const size_t n_splits = split_values_.size();
  n_k.resize(tk_values_.size());
  k_iters.resize(tk_values_.size() * n_splits);
  useful_splits.resize(tk_values_.size() * n_splits);
  split_overhead.resize(n_splits);
  for (size_t j = 0; j < n_splits; ++j)
    split_overhead[j] = 4.0 * static_cast<double>(split_values_[j] - 1) * ridge / static_cast<double>(p.k);
  for (size_t i = 0; i < tk_values_.size(); ++i) {
    n_k[i] = ceil_div(p.k, tk_values_[i]);
    for (size_t j = 0; j < n_splits; ++j) {
      useful_splits[i * n_splits + j] = static_cast<double>(std::min<long>(split_values_[j], n_k[i]));
      k_iters[i * n_splits + j] = ceil_div(n_k[i], split_values_[j]);
    }
  }
  run_product.resize(runs_.size());
  run_tile.resize(runs_.size());
  run_q.resize(runs_.size());
  // Geometries come sorted by (T_M, T_N, c_M, c_N) and runs by (geometry, splits, T_K): a term
  // whose inputs equal the previous run's is reused, not recomputed (most T_K of one split
  // factor have the same useful splits, hence the same fill).
  uint32_t geometry = UINT32_MAX;
  int last_tm = 0, last_tn = 0, tile_tm = 0, tile_tn = 0;
  long n_m = 0, n_n = 0, c1 = 0, slots = 1;
  double cluster_use = 0, tile_pow = 0;
  int fill_splits = -1;
  double fill_useful = -1, product = 0;
  for (size_t r = 0; r < runs_.size(); ++r) {
    const Run& run = runs_[r];
    const Geometry& g = geometries_[run.geometry];
    if (run.geometry != geometry) {
      geometry = run.geometry;
      if (g.tm != last_tm) last_tm = g.tm, n_m = ceil_div(p.m, g.tm);
      if (g.tn != last_tn) last_tn = g.tn, n_n = ceil_div(p.n, g.tn);
      c1 = ceil_div(n_m, g.cm) * ceil_div(n_n, g.cn);
      slots = std::max(1L, hw_.sm_count / (static_cast<long>(g.cm) * g.cn));
      cluster_use =
          static_cast<double>(n_m * n_n) / static_cast<double>(ceil_div(n_m, g.cm) * g.cm * ceil_div(n_n, g.cn) * g.cn);
      if (g.tm != tile_tm || g.tn != tile_tn) {
        tile_tm = g.tm;
        tile_tn = g.tn;
        const double tm = static_cast<double>(std::min<long>(g.tm, p.m)),
                     tn = static_cast<double>(std::min<long>(g.tn, p.n));
        const double reuse = tm * tn / (tm + tn);
        tile_pow = std::pow(std::min(1.0, reuse / reuse_needed), kTileExponent);
      }
      fill_splits = -1;
    }
    const int splits = split_values_[run.splits];
    const size_t ts = run.tk * n_splits + run.splits;
    if (splits != fill_splits || useful_splits[ts] != fill_useful) {
      fill_splits = splits;
      fill_useful = useful_splits[ts];
      const long waves = ceil_div(c1 * splits, slots);
      const double fill = static_cast<double>(p.m) * static_cast<double>(p.n) * useful_splits[ts] /
                          (static_cast<double>(waves) * hw_.sm_count * g.tm * g.tn) / (1.0 + split_overhead[run.splits]);
      product = fill * cluster_use;
    }
    run_product[r] = product;
    run_tile[r] = tile_pow;
    run_q[r] = static_cast<uint8_t>(std::min<long>(k_iters[ts], kPipelineRefStages));
  }
  // Per class, branch-free: q = min(stages, k iterations, reference stages).
  const size_t n = classes_.size();
  const uint32_t* run_of = run_of_.data();
  const uint8_t* stages = class_stages_.data();
  const uint8_t* spills = class_spills_.data();
  double* score = out.data();
  for (size_t c = 0; c < n; ++c) {
    const uint32_t r = run_of[c];
    const uint8_t q = std::min(stages[c], run_q[r]);
    score[c] = run_product[r] * pipeline_pow[q] * (spills[c] ? zero_tile_pow : run_tile[r]);
  }
  if (!head_factor) return 0;
  head->resize(n);
  double max = 0;
  const double* hf = head_factor->data();
  double* h = head->data();
  for (size_t c = 0; c < n; ++c) {
    h[c] = score[c] * hf[c];
    max = std::max(max, h[c]);
  }
  return max;
}

namespace {

// (key, id) ordered best first: higher key, then lower id.
using Keyed = std::pair<double, uint32_t>;
bool better(const Keyed& a, const Keyed& b) { return a.first > b.first || (a.first == b.first && a.second < b.second); }

// Keeps the n best of v (unordered).
void keep_best(std::vector<Keyed>& v, size_t n) {
  if (v.size() <= n) return;
  std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(n - 1), v.end(), better);
  v.resize(n);
}

}  // namespace

// Both selections: every class has a member, so the n best classes (by their best member's
// key) hold at least n candidates and bound the n-th best key from below by theta; the
// candidates with key >= theta (a prefix of each class's members) contain the n best, which
// are then selected from that pool.
std::vector<std::pair<double, uint32_t>> StaticIndex::top_static(const Problem& p, size_t n) const {
  std::vector<Keyed> out;
  n = std::min(n, members_.size());
  if (n == 0) return out;
  std::vector<double> score;
  class_scores(p, score);
  std::vector<Keyed> heads(classes_.size());
  for (size_t c = 0; c < classes_.size(); ++c) heads[c] = {score[c], static_cast<uint32_t>(c)};
  keep_best(heads, n);
  std::sort(heads.begin(), heads.end(), better);
  // Members share their class's score: theta = the score of the head class at which the heads
  // cover n candidates; every class scoring >= theta is taken whole (classes outside the n
  // heads can tie with theta).
  size_t covered = 0, used = 0;
  while (used < heads.size() && covered < n) covered += classes_[heads[used++].second].size();
  const double theta = heads[used - 1].first;
  for (size_t c = 0; c < classes_.size(); ++c)
    if (score[c] >= theta)
      for (uint32_t m = classes_[c].begin; m < classes_[c].end; ++m) out.emplace_back(score[c], members_[m]);
  keep_best(out, n);
  std::sort(out.begin(), out.end(), better);
  return out;
}

namespace {

// Histogram selection over non-negative keys without comparison sorting (a select over ~10^4
// keys by std::nth_element costs ~100 us in mispredicted branches): keys are bucketed by their
// exponent and top 8 mantissa bits (1/256 octave), relative to the largest key. For
// non-negative doubles the bit pattern orders like the value.
class Histogram {
 public:
  static constexpr size_t kBuckets = 4096;  // 16 octaves; smaller keys share the last bucket
  void build(std::span<const double> keys) {
    double max = 0;
    for (double k : keys) max = std::max(max, k);
    build(keys, max);
  }
  // `max`: the largest key (or 0). Many keys fall into few buckets (the catch-all one above
  // all), so a long input is counted into kCopies histograms in turn and summed: consecutive
  // increments of one counter would wait on each other.
  void build(std::span<const double> keys, double max) {
    top_ = std::bit_cast<uint64_t>(max) >> kShift;
    const size_t copies = keys.size() >= kCopiesFrom ? kCopies : 1;
    counts_.assign(copies * kBuckets, 0);
    uint32_t* counts = counts_.data();
    size_t i = 0;
    if (copies > 1)
      for (; i + kCopies <= keys.size(); i += kCopies)
        for (size_t c = 0; c < kCopies; ++c) ++counts[c * kBuckets + bucket(keys[i + c])];
    for (; i < keys.size(); ++i) ++counts[bucket(keys[i])];
    for (size_t c = 1; c < copies; ++c)
      for (size_t b = 0; b < kBuckets; ++b) counts[b] += counts[c * kBuckets + b];
  }
  size_t bucket(double k) const {
    return static_cast<size_t>(std::min<uint64_t>(top_ - (std::bit_cast<uint64_t>(k) >> kShift), kBuckets - 1));
  }
  // The first bucket b at which buckets [0, b] hold >= n keys (kBuckets - 1 if none), and the
  // count in [0, b).
  std::pair<size_t, size_t> nth(size_t n) const {
    size_t above = 0;
    for (size_t b = 0; b + 1 < kBuckets; ++b) {
      if (above + counts_[b] >= n) return {b, above};
      above += counts_[b];
    }
    return {kBuckets - 1, above};
  }
  // The smallest key of bucket b (0 for the last, catch-all bucket): every key of buckets
  // [0, b] is >= it.
  double lower_edge(size_t b) const { return b + 1 >= kBuckets ? 0.0 : std::bit_cast<double>((top_ - b) << kShift); }

 private:
  static constexpr int kShift = 44;  // keeps sign, 11 exponent and 8 mantissa bits
  static constexpr size_t kCopies = 4, kCopiesFrom = 8192;
  std::vector<uint32_t> counts_;
  uint64_t top_ = 0;
};

}  // namespace

std::vector<uint32_t> StaticIndex::top_prefilter(const Problem& p, size_t n, size_t view, double* best_static) const {
  std::vector<uint32_t> out;
  n = std::min(n, members_.size());
  if (best_static) *best_static = 0;
  if (n == 0) return out;
  if (views_.empty()) {
    const auto top = top_static(p, n);
    if (best_static) *best_static = top.front().first;
    for (const auto& [score, index] : top) out.push_back(index);
    std::sort(out.begin(), out.end());
    return out;
  }
  // Per-thread buffers: a cold select allocates nothing here.
  thread_local std::vector<double> score, head, sample, pool_key;
  thread_local std::vector<uint32_t> pool, near;
  thread_local std::vector<std::pair<double, uint32_t>> boundary;
  thread_local std::vector<uint64_t> chosen;
  thread_local Histogram hist;
  if (view >= views_.size()) throw Error("static index: no prior view " + std::to_string(view));
  const View& v = views_[view];
  // key = static score * exp(w * prior): the order of ln(static) + w * prior without a logarithm
  // per candidate (member_factor = exp(w * prior); a class's members are sorted by it, so its
  // first member has the class's best key: head_factor).
  const double max_head = scores(p, score, &v.head_factor, &head);
  if (best_static) *best_static = *std::max_element(score.begin(), score.end());
  // theta, a lower bound on the n-th best key: >= n class heads (real candidates) reach the
  // heads' bound; the first few members of the classes reaching it give a tighter one, so that
  // the pool below holds little more than n candidates.
  hist.build(head, max_head);
  const double head_bound = hist.lower_edge(hist.nth(n).first);
  // The classes whose head reaches the bound (branch-free; a few percent of them): the sample
  // holds their heads, >= n keys, so theta >= head_bound and the pool's classes are among them.
  near.resize(classes_.size());
  size_t n_near = 0;
  for (size_t c = 0; c < classes_.size(); ++c) {
    near[n_near] = static_cast<uint32_t>(c);
    n_near += head[c] >= head_bound;
  }
  sample.clear();
  for (size_t i = 0; i < n_near; ++i) {
    const uint32_t c = near[i];
    const double* f = &v.sample_factor[c * kSample];
    for (uint32_t j = 0; j < class_sample_[c]; ++j) sample.push_back(score[c] * f[j]);
  }
  hist.build(sample);
  const double theta = hist.lower_edge(hist.nth(n).first);
  if (theta < head_bound) {  // only where a member's key exceeds its head's (a negative weight)
    for (size_t c = 0; c < classes_.size(); ++c) near[c] = static_cast<uint32_t>(c);
    n_near = classes_.size();
  }
  pool.clear();
  pool_key.clear();
  for (size_t i = 0; i < n_near; ++i) {
    const uint32_t c = near[i];
    if (head[c] < theta) continue;
    // The sampled members first (the same keys: the same factors), then the rest of the class.
    const double* f = &v.sample_factor[c * kSample];
    const uint32_t* members = &v.sample_members[c * kSample];
    uint32_t j = 0;
    for (; j < class_sample_[c]; ++j) {
      const double key = score[c] * f[j];
      if (key < theta) break;
      pool.push_back(members[j]);
      pool_key.push_back(key);
    }
    if (j < kSample) continue;
    for (uint32_t m = classes_[c].begin + kSample; m < classes_[c].end; ++m) {
      const double key = score[c] * v.member_factor[m];
      if (key < theta) break;
      pool.push_back(v.members[m]);
      pool_key.push_back(key);
    }
  }
  // The n best of the pool: buckets above the n-th's are in; the n-th's bucket is sorted
  // (key desc, candidate asc) to fill the rest.
  hist.build(pool_key);
  const auto [nth_bucket, above] = hist.nth(n);
  chosen.assign((members_.size() + 63) / 64, 0);
  boundary.clear();
  for (size_t i = 0; i < pool.size(); ++i) {
    const size_t b = hist.bucket(pool_key[i]);
    if (b < nth_bucket) {
      chosen[pool[i] / 64] |= uint64_t{1} << (pool[i] % 64);
    } else if (b == nth_bucket) {
      boundary.emplace_back(pool_key[i], pool[i]);
    }
  }
  std::sort(boundary.begin(), boundary.end(), better);
  for (size_t i = 0; i < std::min(boundary.size(), n - above); ++i)
    chosen[boundary[i].second / 64] |= uint64_t{1} << (boundary[i].second % 64);
  // Ascending candidate order from the bit set.
  out.reserve(n);
  for (size_t w = 0; w < chosen.size(); ++w)
    for (uint64_t bits = chosen[w]; bits; bits &= bits - 1)
      out.push_back(static_cast<uint32_t>(w * 64 + static_cast<size_t>(std::countr_zero(bits))));
  return out;
}

}  // namespace cks::selector_detail
