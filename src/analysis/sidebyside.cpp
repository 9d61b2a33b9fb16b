// The side-by-side study: the real picks' regret from candidates re-measured together in one
// stretch (definitions in include/cks/analysis.hpp; plans from cks plan sidebyside).
#include <algorithm>
#include <cmath>
#include <functional>
#include <map>
#include <random>
#include <set>

#include "analysis/internal.hpp"
#include "cks/analysis.hpp"
#include "cks/selector.hpp"

namespace cks {

namespace {

using analysis_detail::num;

double median(std::vector<double> v) { return quantile(std::move(v), 0.5); }

// floor_median (include/cks/analysis.hpp): c*'s median of n repetitions against itself, by
// bootstrap; seeded by the group's key, so a study is reproducible.
double median_floor(const std::vector<double>& own, const std::string& key) {
  if (own.size() < 2) return NAN;
  constexpr int kPairs = 400;
  std::mt19937_64 rng(std::hash<std::string>{}(key));
  std::uniform_int_distribution<size_t> pick(0, own.size() - 1);
  std::vector<double> x(own.size()), y(own.size());
  double sum = 0;
  for (int p = 0; p < kPairs; ++p) {
    for (size_t i = 0; i < own.size(); ++i) x[i] = own[pick(rng)], y[i] = own[pick(rng)];
    const double my = median(y);
    if (my > 0) sum += std::max(0.0, 1.0 - median(x) / my);
  }
  return sum / kPairs;
}

struct Rep {
  double tflops = 0, clock = 0;
};
struct Base {
  std::string set;
  Problem problem;
  std::set<std::string> rep_keys;
  std::map<CandidateRef, std::vector<Rep>> cands;  // kernel_id "cublas" for cuBLAS
  std::vector<CandidateRef> order;                  // first-seen order (the plan's rep 1 order)
};

}  // namespace

SideBySideStudy sidebyside_study(const Registry& reg, const std::vector<PickMethod>& methods,
                                 const SideBySideOptions& o, const AnalysisProgress& progress) {
  if (!(o.clock_tolerance_mhz >= 0)) throw Error("--clock-tolerance must be >= 0");
  if (o.min_reps < 1) throw Error("--min-reps must be >= 1");
  if (o.clock_reference != "candidate" && o.clock_reference != "group")
    throw Error("--clock-reference must be 'candidate' or 'group' (got '" + o.clock_reference + "')");
  const bool per_candidate = o.clock_reference == "candidate";
  std::map<std::string, Base> bases;
  std::map<std::string, std::string> base_sets;  // from the groups' tags
  std::vector<std::string> sbs_keys;
  for (const GroupInfo& g : reg.groups()) {
    if (g.set != "sbs") continue;
    sbs_keys.push_back(g.key);
    const auto tags = nlohmann::json::parse(g.tags_json, nullptr, false);
    if (tags.is_object() && tags.contains("base_set") && tags["base_set"].is_string())
      base_sets[sidebyside_base_key(g.key)] = tags["base_set"].get<std::string>();
  }
  // The round read per base group (SideBySideOptions::round): the latest with a measurement (a
  // lease cut by its time budget leaves the groups of its round planned but unmeasured).
  std::map<std::string, size_t> latest;
  for (const std::string& gk : sbs_keys) {
    size_t& r = latest[sidebyside_base_key(gk)];
    const size_t round = sidebyside_round(gk);
    if (round > r && !reg.final_items(gk, 1).empty()) r = round;
  }
  auto wanted = [&](const std::string& gk) {
    if (!o.base_set.empty()) {
      const auto it = base_sets.find(sidebyside_base_key(gk));
      if (it == base_sets.end() || it->second != o.base_set) return false;
    }
    if (o.round == 0) return true;
    const size_t r = sidebyside_round(gk);
    return o.round < 0 ? r == latest[sidebyside_base_key(gk)] : r == static_cast<size_t>(o.round);
  };
  // Group by group (indexed): a filter on the set alone scans every row of a merged corpus.
  MeasurementFilter f;
  f.set = "sbs";
  size_t seen = 0;
  for (const std::string& gk : sbs_keys) {
    if (!wanted(gk)) continue;
    f.group_key = gk;
    scan_ok_measurements(reg, f, [&](const Observation& ob) {
      if (progress && ++seen % 20000 == 0) progress("reading side-by-side rows", seen, 0);
      if (!o.layouts.empty() && std::find(o.layouts.begin(), o.layouts.end(), ob.layout) == o.layouts.end()) return;
      const std::string key = sidebyside_base_key(ob.group_key);
      Base& b = bases[key];
      b.problem = Problem{ob.m, ob.n, ob.k, ob.layout};
      b.set = base_sets.count(key) ? base_sets[key] : "";
      b.rep_keys.insert(ob.group_key);
      const CandidateRef c{ob.kernel_id, ob.knobs};
      auto [it, fresh] = b.cands.try_emplace(c);
      if (fresh) b.order.push_back(c);
      it->second.push_back({ob.tflops, ob.sm_clock_mhz});
    });
  }
  if (bases.empty())
    throw Error("no side-by-side group (set sbs) with ok rows" +
                (o.round > 0 ? " of round " + std::to_string(o.round) : std::string()) +
                (o.base_set.empty() ? std::string() : " of base set '" + o.base_set + "'") + " in " + reg.path() +
                " (cks plan sidebyside)");

  SideBySideStudy s;
  for (const auto& m : methods) s.methods.push_back(m.name);
  s.outcomes.resize(methods.size());
  for (auto& [key, b] : bases) {
    SideBySideGroup g;
    g.base_key = key;
    g.base_set = b.set;
    g.problem = b.problem;
    g.reps = b.rep_keys.size();
    std::vector<double> clocks;
    for (const auto& [c, reps] : b.cands)
      for (const Rep& r : reps) {
        ++g.rows;
        if (r.clock > 0) clocks.push_back(r.clock);
      }
    g.clock_ref_mhz = clocks.empty() ? 0 : median(clocks);
    auto clean = [&](const Rep& r, double ref) {
      return ref <= 0 || r.clock <= 0 || std::abs(r.clock - ref) <= o.clock_tolerance_mhz;
    };
    double lo = INFINITY, hi = -INFINITY;
    std::vector<std::vector<double>> kept_reps;  // per kept candidate: its unflagged throughputs
    std::vector<double> cublas;
    for (const CandidateRef& c : b.order) {
      double ref = g.clock_ref_mhz;
      if (per_candidate) {
        std::vector<double> own;
        for (const Rep& r : b.cands.at(c))
          if (r.clock > 0) own.push_back(r.clock);
        ref = own.empty() ? 0 : median(own);
      }
      std::vector<double> t, all;
      size_t flagged = 0;
      for (const Rep& r : b.cands.at(c)) {
        all.push_back(r.tflops);
        if (!clean(r, ref)) {
          ++flagged;
          continue;
        }
        t.push_back(r.tflops);
        if (r.clock > 0) lo = std::min(lo, r.clock), hi = std::max(hi, r.clock);
      }
      const size_t need = std::min(o.min_reps, g.reps);
      if (t.size() < need && all.size() >= need && !o.drop_unsteady) {
        // Unsteady: its clock wandered in most repetitions (the power limit of large problems).
        // Its median over every repetition is the best estimate there is; dropping it would leave
        // the group uncovered when it is a pick.
        ++g.unsteady;
        t = std::move(all);
        flagged = 0;
      }
      g.flagged += flagged;
      if (c.first == "cublas") {
        cublas = t;
        continue;
      }
      if (t.size() < need) {
        ++g.dropped;
        continue;
      }
      g.candidates.push_back(c);
      g.tflops.push_back(median(t));
      kept_reps.push_back(std::move(t));
    }
    g.clock_spread_mhz = hi >= lo ? hi - lo : 0;
    g.compared = g.candidates.size();
    g.cublas_tflops = cublas.empty() ? NAN : median(cublas);
    s.rows += g.rows;
    s.flagged_rows += g.flagged;
    if (g.candidates.empty()) continue;
    const size_t best = static_cast<size_t>(std::max_element(g.tflops.begin(), g.tflops.end()) - g.tflops.begin());
    g.best_kernel = g.candidates[best].first;
    g.best_knobs = g.candidates[best].second;
    g.best_tflops = g.tflops[best];
    double floor_sum = 0;
    size_t pairs = 0;
    const auto& own = kept_reps[best];
    for (size_t i = 0; i < own.size(); ++i)
      for (size_t j = 0; j < own.size(); ++j)
        if (i != j && own[j] > 0) floor_sum += std::max(0.0, 1.0 - own[i] / own[j]), ++pairs;
    g.floor = pairs ? floor_sum / static_cast<double>(pairs) : NAN;
    g.floor_median = median_floor(own, key);
    std::map<CandidateRef, uint32_t> position;
    for (uint32_t i = 0; i < g.candidates.size(); ++i) position.emplace(g.candidates[i], i);
    for (size_t mi = 0; mi < methods.size(); ++mi) {
      const Ranking r = methods[mi].selector->select(g.problem, std::max<size_t>(4, methods[mi].top));
      std::vector<uint32_t> order;
      bool first = false;
      for (size_t i = 0; i < r.size(); ++i) {
        const auto it = position.find({r[i].kernel_id, r[i].knobs_text});
        if (it == position.end()) continue;
        if (i == 0) first = true;
        order.push_back(it->second);
      }
      GroupOutcome out;
      if (first) out = outcome_of_order(g.tflops, order, std::isfinite(g.cublas_tflops) ? g.cublas_tflops : 0.0);
      s.outcomes[mi].push_back(out);
    }
    s.groups.push_back(std::move(g));
  }
  if (s.groups.empty()) throw Error("no side-by-side group has a candidate with enough unflagged repetitions");
  return s;
}

Table sidebyside_group_table(const SideBySideStudy& s) {
  std::vector<std::string> cols{"base_key", "base_set", "layout", "m", "n", "k", "reps", "compared", "rows", "flagged",
                                "dropped", "unsteady", "clock_ref_mhz", "clock_spread_mhz", "best_kernel", "best_knobs",
                                "best_tflops", "cublas_tflops", "floor", "floor_median"};
  for (const auto& m : s.methods)
    for (const char* what : {"_regret", "_top4_regret", "_vs_cublas"}) cols.push_back(m + what);
  Table t(cols);
  for (size_t gi = 0; gi < s.groups.size(); ++gi) {
    const SideBySideGroup& g = s.groups[gi];
    std::vector<Cell> row{g.base_key,
                          g.base_set,
                          std::string(to_string(g.problem.layout)),
                          g.problem.m,
                          g.problem.n,
                          g.problem.k,
                          static_cast<int64_t>(g.reps),
                          static_cast<int64_t>(g.compared),
                          static_cast<int64_t>(g.rows),
                          static_cast<int64_t>(g.flagged),
                          static_cast<int64_t>(g.dropped), static_cast<int64_t>(g.unsteady),
                          num(g.clock_ref_mhz, 1),
                          num(g.clock_spread_mhz, 1),
                          g.best_kernel,
                          g.best_knobs,
                          num(g.best_tflops, 3),
                          num(g.cublas_tflops, 3),
                          num(g.floor, 6),
                          num(g.floor_median, 6)};
    for (size_t mi = 0; mi < s.methods.size(); ++mi) {
      const GroupOutcome& o = s.outcomes[mi][gi];
      row.push_back(o.covered ? num(o.regret, 6) : Cell{});
      row.push_back(o.covered ? num(o.topk_regret[2], 6) : Cell{});
      row.push_back(o.covered ? num(o.vs_cublas, 5) : Cell{});
    }
    t.add_row(std::move(row));
  }
  return t;
}

}  // namespace cks
