// Static efficiency score, static ranking and the sampling policies (definitions in
// include/cks/sampling.hpp and docs/shapes-and-sampling.md).
#include "cks/sampling.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <fstream>
#include <numeric>

#include "cks/common.hpp"
#include "common/json_limits.hpp"
#include "shapes/rng.hpp"

namespace cks {

namespace {

long ceil_div(long a, long b) { return (a + b - 1) / b; }

// ceil(alpha * B) without floating-point overshoot (0.7 * 10 = 7.000000000000001).
int top_count(double alpha, int budget) { return std::min(budget, static_cast<int>(std::ceil(alpha * budget - 1e-9))); }

constexpr std::array<std::string_view, 3> kPolicyNames{"uniform", "top", "biased-diverse"};

}  // namespace

ScoreTerms static_score_terms(const GemmShape& p, const KernelDesc& k, const RuntimeKnobs& knobs,
                              const HardwareDesc& hw, int stages, bool spills) {
  ScoreTerms t;
  const long n_m = ceil_div(p.m, k.tm), n_n = ceil_div(p.n, k.tn), n_k = ceil_div(p.k, k.tk);
  const long splits = knobs.decomposition == Decomposition::split_k ? std::max(1, knobs.splits) : 1;
  const long cluster = static_cast<long>(k.cm) * k.cn;
  t.clusters = ceil_div(n_m, k.cm) * ceil_div(n_n, k.cn) * splits;
  const long slots = std::max(1L, hw.sm_count / cluster);  // S_c: clusters resident at once
  t.waves = ceil_div(t.clusters, slots);
  // Splits beyond the K iterations get no work: only min(s, n_K) of the s slices are useful.
  const double useful_splits = static_cast<double>(std::min(splits, n_k));
  const double split_overhead =
      4.0 * static_cast<double>(splits - 1) * hw.ridge_flops_per_byte() / static_cast<double>(p.k);
  t.fill = static_cast<double>(p.m) * static_cast<double>(p.n) * useful_splits /
           (static_cast<double>(t.waves) * hw.sm_count * k.tm * k.tn) / (1.0 + split_overhead);
  // Oversized clusters: CTAs of the cluster grid beyond the tile grid own no tile.
  t.cluster_use =
      static_cast<double>(n_m * n_n) / static_cast<double>(ceil_div(n_m, k.cm) * k.cm * ceil_div(n_n, k.cn) * k.cn);
  const long k_iters_per_split = ceil_div(n_k, splits);
  t.pipeline =
      static_cast<double>(std::min<long>({stages, k_iters_per_split, kPipelineRefStages})) / kPipelineRefStages;
  const double tm = static_cast<double>(std::min<long>(k.tm, p.m)), tn = static_cast<double>(std::min<long>(k.tn, p.n));
  const double reuse = tm * tn / (tm + tn);  // flop per operand byte of the tile (bf16, T_K cancels)
  const double reuse_needed = hw.bf16_flops_per_sm_per_s() / hw.tma_bw_per_sm_bytes_per_s();
  t.tile = spills ? 0.0 : std::min(1.0, reuse / reuse_needed);
  t.score = t.fill * t.cluster_use * std::pow(t.pipeline, kPipelineExponent) * std::pow(t.tile, kTileExponent);
  return t;
}

double static_score(const GemmShape& p, const KernelDesc& k, const RuntimeKnobs& knobs, const HardwareDesc& hw) {
  const KernelResources r = resources(k, hw);
  return static_score_terms(p, k, knobs, hw, r.stages, r.spills_expected).score;
}

std::string_view to_string(Policy p) { return kPolicyNames[static_cast<int>(p)]; }

Policy parse_policy(std::string_view s) {
  for (size_t i = 0; i < kPolicyNames.size(); ++i)
    if (kPolicyNames[i] == s) return static_cast<Policy>(i);
  throw Error("unknown sampling policy '" + std::string(s) + "' (expected uniform, top or biased-diverse)");
}

namespace {

// Static scores of every pool candidate. Only the split-K factor of the knobs enters the
// score, so resources and the knob-independent score are computed once per kernel.
std::vector<double> score_pool(const GemmShape& p, const std::vector<KernelDesc>& kernels,
                               const std::vector<Candidate>& pool, const HardwareDesc& hw) {
  struct KernelInfo {
    bool known = false;
    int stages = 0;
    bool spills = false;
    double unsplit_score = 0;
  };
  std::vector<KernelInfo> info(kernels.size());
  std::vector<double> scores(pool.size());
  for (size_t i = 0; i < pool.size(); ++i) {
    const Candidate& c = pool[i];
    if (c.kernel >= kernels.size()) throw std::logic_error("score_pool: candidate kernel index out of range");
    KernelInfo& ki = info[c.kernel];
    if (!ki.known) {
      const KernelResources r = resources(kernels[c.kernel], hw);
      ki = {true, r.stages, r.spills_expected,
            static_score_terms(p, kernels[c.kernel], RuntimeKnobs{}, hw, r.stages, r.spills_expected).score};
    }
    const bool split = c.knobs.decomposition == Decomposition::split_k && c.knobs.splits > 1;
    scores[i] =
        split ? static_score_terms(p, kernels[c.kernel], c.knobs, hw, ki.stages, ki.spills).score : ki.unsplit_score;
  }
  return scores;
}

// The ranking's strict total order on pool indices: higher score first, ties by pool position.
struct RanksBefore {
  const std::vector<double>& scores;
  bool operator()(uint32_t a, uint32_t b) const { return scores[a] != scores[b] ? scores[a] > scores[b] : a < b; }
};

}  // namespace

std::vector<RankedCandidate> rank_candidates(const GemmShape& p, const std::vector<KernelDesc>& kernels,
                                             const std::vector<Candidate>& pool, const HardwareDesc& hw) {
  const auto scores = score_pool(p, kernels, pool, hw);
  std::vector<uint32_t> order(pool.size());
  std::iota(order.begin(), order.end(), 0u);
  std::sort(order.begin(), order.end(), RanksBefore{scores});
  std::vector<RankedCandidate> out(order.size());
  for (size_t i = 0; i < order.size(); ++i) out[i] = {order[i], scores[order[i]]};
  return out;
}

void validate(const SampleOptions& o) {
  if (!(o.alpha >= 0.0 && o.alpha <= 1.0))
    throw Error("--alpha must be in [0, 1] (got " + format_double(o.alpha) + ")");
  if (o.budget && *o.budget < 1) throw Error("--budget must be at least 1 (got " + std::to_string(*o.budget) + ")");
}

uint64_t sample_stream_seed(uint64_t seed, const GemmShape& p, Layout layout) {
  return detail::mix64(seed ^ detail::mix64(fnv1a64(group_key(p, layout))));
}

Sample sample_candidates(const GemmShape& p, Layout layout, const std::vector<KernelDesc>& kernels,
                         const std::vector<Candidate>& pool, const SampleOptions& o, const HardwareDesc& hw) {
  validate(o);
  Sample s;
  s.pool_size = static_cast<long>(pool.size());
  if (o.budget) {
    s.requested_budget = *o.budget;
    s.budget_reason = "explicit";
  } else {
    const ShapeTags tags = tags_for(p, hw);
    s.requested_budget = auto_budget(tags);
    s.budget_reason = budget_reason(tags);
  }
  s.budget = static_cast<int>(std::min<long>(s.requested_budget, s.pool_size));
  switch (o.policy) {
    case Policy::top:
      s.n_top = s.budget;
      break;
    case Policy::uniform:
      s.n_top = 0;
      break;
    case Policy::biased_diverse:
      s.n_top = top_count(o.alpha, s.budget);
      break;
  }
  s.n_explore = s.budget - s.n_top;

  // Selection without sorting the whole pool: the top n_top by partial selection, exploration
  // drawn from the remaining candidates in pool order (portable: no dependence on how the
  // standard library arranges a partition).
  const auto scores = score_pool(p, kernels, pool, hw);
  const RanksBefore before{scores};
  const auto n = static_cast<uint32_t>(pool.size()), n_top = static_cast<uint32_t>(s.n_top);
  std::vector<uint32_t> order(n);
  std::iota(order.begin(), order.end(), 0u);
  std::nth_element(order.begin(), order.begin() + n_top, order.end(), before);
  std::sort(order.begin(), order.begin() + n_top, before);
  std::vector<char> in_top(n, 0);
  for (uint32_t i = 0; i < n_top; ++i) in_top[order[i]] = 1;
  std::vector<uint32_t> rest;
  rest.reserve(n - n_top);
  for (uint32_t i = 0; i < n; ++i)
    if (!in_top[i]) rest.push_back(i);
  detail::Rng rng(sample_stream_seed(o.seed, p, layout));
  std::vector<uint32_t> explore;
  for (uint32_t r : rng.choose(static_cast<uint32_t>(rest.size()), static_cast<uint32_t>(s.n_explore)))
    explore.push_back(rest[r]);
  std::sort(explore.begin(), explore.end(), before);

  // Static rank of an explored candidate = n_top + 1 + (candidates outside the top ranked
  // before it): each such candidate counts towards every explored candidate it precedes.
  std::vector<long> ahead(explore.size() + 1, 0);
  for (uint32_t x : rest) {
    const auto first_behind = std::upper_bound(explore.begin(), explore.end(), x, before) - explore.begin();
    ++ahead[first_behind];
  }

  s.rows.reserve(static_cast<size_t>(s.budget));
  for (uint32_t i = 0; i < n_top; ++i)
    s.rows.push_back({pool[order[i]], scores[order[i]], static_cast<long>(i) + 1, true});
  long preceding = 0;
  for (size_t i = 0; i < explore.size(); ++i) {
    preceding += ahead[i];
    s.rows.push_back({pool[explore[i]], scores[explore[i]], static_cast<long>(n_top) + 1 + preceding, false});
  }
  return s;
}

std::vector<Candidate> read_pool_file(const std::string& path, const Catalogue& cat) {
  check_input_file(path, "pool file");
  std::ifstream in(path);
  if (!in) throw Error("cannot read pool file " + path);
  std::vector<char> wanted(cat.kernels().size(), 0);
  std::string line;
  size_t any = 0;
  for (int lineno = 1; std::getline(in, line); ++lineno) {
    if (auto hash = line.find('#'); hash != std::string::npos) line.erase(hash);
    const auto b = line.find_first_not_of(" \t\r"), e = line.find_last_not_of(" \t\r");
    if (b == std::string::npos) continue;
    const std::string id = line.substr(b, e - b + 1);
    const auto idx = cat.find(id);
    if (!idx)
      throw Error(path + ":" + std::to_string(lineno) + ": kernel '" + id + "' is not in the " +
                  std::string(to_string(cat.layout())) + " catalogue");
    wanted[*idx] = 1;
    ++any;
  }
  if (any == 0) throw Error("pool file " + path + " lists no kernels");
  std::vector<Candidate> pool;
  for (const auto& c : cat.candidates())
    if (wanted[c.kernel]) pool.push_back(c);
  return pool;
}

}  // namespace cks
