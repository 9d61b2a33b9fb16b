// The sampling-policy study (the paper's "Figs. 3-4" and its alpha ablation): on exhaustively
// measured groups, how sparse the near-optimal tail is, and how the sampling regret and the
// probability of observing a near-optimal kernel grow with the budget for each policy
// (definitions in include/cks/analysis.hpp).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <unordered_map>

#include "analysis/internal.hpp"
#include "cks/analysis.hpp"
#include "cks/models.hpp"
#include "cks/sampling.hpp"

namespace cks {

namespace {

using analysis_detail::candidate_code;
using analysis_detail::num;
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// One curve point to evaluate: a policy at a budget.
struct Spec {
  std::string study;
  Policy policy;
  double alpha;  // biased-diverse only
  int budget;
  int reps;
};

std::vector<Spec> curve_specs(const SamplingStudyOptions& o) {
  std::vector<Spec> specs;
  for (int b : o.budgets) {
    specs.push_back({"budget", Policy::uniform, kNaN, b, o.reps});
    specs.push_back({"budget", Policy::top, kNaN, b, 1});  // deterministic: one draw is the answer
    specs.push_back({"budget", Policy::biased_diverse, o.alpha, b, o.reps});
  }
  for (int b : o.alpha_budgets)
    for (double a : o.alphas) specs.push_back({"alpha", Policy::biased_diverse, a, b, o.reps});
  return specs;
}

// What one group contributes to one curve point.
struct GroupResult {
  double regret = 0;            // mean over the repetitions
  std::vector<double> p_within;  // per eps: share of repetitions with a candidate within eps
  double budget_fraction = 0;
};

}  // namespace

std::string eps_label(double eps) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%gpct", eps * 100.0);
  return buf;
}

void validate(const SamplingStudyOptions& o) {
  if (o.budgets.empty()) throw Error("--budgets lists no budget");
  for (int b : o.budgets)
    if (b < 1) throw Error("--budgets must be positive (got " + std::to_string(b) + ")");
  if (o.eps.empty()) throw Error("--eps lists no tolerance");
  for (double e : o.eps)
    if (!(e > 0 && e < 1)) throw Error("--eps must lie in (0, 1) (got " + format_double(e) + ")");
  if (o.reps < 1) throw Error("--reps must be at least 1 (got " + std::to_string(o.reps) + ")");
  for (double a : o.alphas)
    if (!(a >= 0 && a <= 1)) throw Error("--alphas must lie in [0, 1] (got " + format_double(a) + ")");
  if (!(o.alpha >= 0 && o.alpha <= 1)) throw Error("--alpha must be in [0, 1] (got " + format_double(o.alpha) + ")");
  for (int b : o.alpha_budgets)
    if (b < 1) throw Error("--alpha-budgets must be positive (got " + std::to_string(b) + ")");
}

SamplingStudy sampling_study(const AnalysisData& data, const HardwareDesc& hw, const SamplingStudyOptions& options,
                             const AnalysisProgress& progress) {
  validate(options);
  SamplingStudy study;
  study.options = options;
  const std::vector<Spec> specs = curve_specs(options);
  const size_t n_eps = options.eps.size();
  std::vector<std::vector<GroupResult>> results(specs.size());

  for (size_t gi = 0; gi < data.groups.size(); ++gi) {
    const AnalysisGroup& g = data.groups[gi];
    const size_t n = g.size();
    const Catalogue& cat = Catalogue::get(g.problem.layout);
    const GemmShape shape{g.problem.m, g.problem.n, g.problem.k};

    // y and the within-eps flags of the universe; a cut candidate is never within eps.
    std::vector<double> y(n);
    std::vector<std::vector<char>> within(n_eps, std::vector<char>(n, 0));
    std::unordered_map<uint64_t, uint32_t> index;
    index.reserve(n);
    for (size_t i = 0; i < n; ++i) {
      y[i] = g.tflops[i] / g.oracle;
      for (size_t e = 0; e < n_eps; ++e) within[e][i] = !g.cut[i] && y[i] >= 1.0 - options.eps[e];
      index.emplace(candidate_code(g.candidates[i]), static_cast<uint32_t>(i));
    }

    GroupTail tail;
    tail.key = g.key;
    tail.tags = g.tags;
    tail.candidates = n;
    tail.cut = g.cut_count();
    tail.oracle_tflops = g.oracle;
    for (size_t e = 0; e < n_eps; ++e)
      tail.within.push_back(static_cast<double>(std::count(within[e].begin(), within[e].end(), 1)) /
                            static_cast<double>(n));
    // Static ranks: the oracle's, and the first within-eps candidate's (what top-B must reach).
    const auto ranked = rank_candidates(shape, cat.kernels(), g.candidates, hw);
    tail.first_static_rank.assign(n_eps, 0);
    for (size_t r = 0; r < ranked.size(); ++r) {
      const uint32_t i = ranked[r].pool_index;
      const long rank = static_cast<long>(r) + 1;
      if (!g.cut[i] && g.tflops[i] == g.oracle && tail.oracle_static_rank == 0) tail.oracle_static_rank = rank;
      for (size_t e = 0; e < n_eps; ++e)
        if (within[e][i] && tail.first_static_rank[e] == 0) tail.first_static_rank[e] = rank;
    }
    study.tails.push_back(std::move(tail));

    for (size_t s = 0; s < specs.size(); ++s) {
      const Spec& spec = specs[s];
      GroupResult res;
      res.p_within.assign(n_eps, 0.0);
      for (int rep = 0; rep < spec.reps; ++rep) {
        SampleOptions so;
        so.policy = spec.policy;
        if (spec.policy == Policy::biased_diverse) so.alpha = spec.alpha;
        so.budget = spec.budget;
        so.seed = options.seed + static_cast<uint64_t>(rep);
        const Sample sample = sample_candidates(shape, g.problem.layout, cat.kernels(), g.candidates, so, hw);
        double best = 0;
        std::vector<char> hit(n_eps, 0);
        for (const SampledCandidate& sc : sample.rows) {
          const auto it = index.find(candidate_code(sc.candidate));
          if (it == index.end()) throw std::logic_error("sampling_study: sampled candidate outside the pool");
          best = std::max(best, y[it->second]);
          for (size_t e = 0; e < n_eps; ++e) hit[e] |= within[e][it->second];
        }
        res.regret += 1.0 - best;
        for (size_t e = 0; e < n_eps; ++e) res.p_within[e] += hit[e];
        res.budget_fraction = static_cast<double>(sample.budget) / static_cast<double>(n);
      }
      res.regret /= spec.reps;
      for (double& p : res.p_within) p /= spec.reps;
      results[s].push_back(std::move(res));
    }
    if (progress) progress("sampling", gi + 1, data.groups.size());
  }

  for (size_t s = 0; s < specs.size(); ++s) {
    const Spec& spec = specs[s];
    SamplingPoint pt;
    pt.study = spec.study;
    pt.policy = spec.policy;
    pt.alpha = spec.alpha;
    pt.budget = spec.budget;
    pt.reps = spec.reps;
    pt.groups = results[s].size();
    pt.p_within.assign(n_eps, kNaN);
    if (!results[s].empty()) {
      std::vector<double> regrets;
      double fraction = 0;
      std::vector<double> p(n_eps, 0.0);
      for (const GroupResult& r : results[s]) {
        regrets.push_back(r.regret);
        fraction += r.budget_fraction;
        for (size_t e = 0; e < n_eps; ++e) p[e] += r.p_within[e];
      }
      const double groups = static_cast<double>(results[s].size());
      double sum = 0;
      for (double r : regrets) sum += r;
      pt.regret_mean = sum / groups;
      pt.regret_median = quantile(regrets, 0.5);
      pt.regret_p95 = quantile(regrets, 0.95);
      pt.regret_max = *std::max_element(regrets.begin(), regrets.end());
      pt.budget_fraction = fraction / groups;
      for (size_t e = 0; e < n_eps; ++e) pt.p_within[e] = p[e] / groups;
    } else {
      pt.regret_mean = pt.regret_median = pt.regret_p95 = pt.regret_max = pt.budget_fraction = kNaN;
    }
    study.points.push_back(std::move(pt));
  }
  return study;
}

Table sampling_tail_table(const SamplingStudy& s) {
  const auto& eps = s.options.eps;
  std::vector<std::string> cols{"group", "geometry", "size", "regime", "candidates", "cut", "oracle_tflops"};
  for (double e : eps) cols.push_back("within_" + eps_label(e));
  cols.push_back("oracle_static_rank");
  for (double e : eps) cols.push_back("first_static_rank_" + eps_label(e));
  Table t(cols);
  for (const GroupTail& g : s.tails) {
    std::vector<Cell> row{g.key,
                          std::string(to_string(g.tags.geometry)),
                          std::string(to_string(g.tags.size)),
                          std::string(to_string(g.tags.regime)),
                          static_cast<int64_t>(g.candidates),
                          static_cast<int64_t>(g.cut),
                          num(g.oracle_tflops, 3)};
    for (double w : g.within) row.push_back(num(w, 6));
    row.push_back(static_cast<int64_t>(g.oracle_static_rank));
    for (long r : g.first_static_rank) {
      row.emplace_back();  // empty when no candidate is within eps (cannot happen: the oracle is)
      if (r > 0) row.back() = static_cast<int64_t>(r);
    }
    t.add_row(std::move(row));
  }
  // Summaries over the groups of the within-eps shares (other columns left empty).
  if (!s.tails.empty()) {
    constexpr size_t kFirstWithin = 7;  // column of within_<eps[0]>
    for (const std::string stat : {"mean", "median", "min", "max"}) {
      std::vector<Cell> row(t.columns().size());
      row[0] = stat;
      for (size_t e = 0; e < eps.size(); ++e) {
        std::vector<double> v;
        for (const GroupTail& g : s.tails) v.push_back(g.within[e]);
        double x = 0;
        if (stat == "mean") {
          for (double w : v) x += w;
          x /= static_cast<double>(v.size());
        } else if (stat == "median") {
          x = quantile(v, 0.5);
        } else if (stat == "min") {
          x = *std::min_element(v.begin(), v.end());
        } else {
          x = *std::max_element(v.begin(), v.end());
        }
        row[kFirstWithin + e] = num(x, 6);
      }
      t.add_row(std::move(row));
    }
  }
  return t;
}

Table sampling_curve_table(const SamplingStudy& s) {
  std::vector<std::string> cols{"study",         "policy",        "alpha",      "budget",     "budget_fraction",
                                "reps",          "groups",        "regret_mean", "regret_median", "regret_p95",
                                "regret_max"};
  for (double e : s.options.eps) cols.push_back("p_within_" + eps_label(e));
  Table t(cols);
  for (const SamplingPoint& p : s.points) {
    std::vector<Cell> row{p.study,
                          std::string(to_string(p.policy)),
                          num(p.alpha, 6),
                          static_cast<int64_t>(p.budget),
                          num(p.budget_fraction, 6),
                          static_cast<int64_t>(p.reps),
                          static_cast<int64_t>(p.groups),
                          num(p.regret_mean),
                          num(p.regret_median),
                          num(p.regret_p95),
                          num(p.regret_max)};
    for (double w : p.p_within) row.push_back(num(w));
    t.add_row(std::move(row));
  }
  return t;
}

}  // namespace cks
