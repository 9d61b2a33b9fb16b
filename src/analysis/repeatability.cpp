// The repeatability study: candidates measured status-ok in two runs (definitions in
// include/cks/analysis.hpp, results in data/README.md).
#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <set>

#include "cks/analysis.hpp"
#include "cks/models.hpp"
#include "cks/registry.hpp"

namespace cks {

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

struct Pair {
  std::string group_key;
  Layout layout = Layout::tn;
  bool cublas = false;
  double t_a = 0, t_b = 0, clock_a = 0, clock_b = 0;
  bool same_worker = false;
  double d() const { return std::abs(t_b - t_a) / t_a; }
};

// The runs' order (their start, then uuid), for naming a pair (earlier, later).
struct RunKey {
  std::string started_at, uuid;
  auto operator<=>(const RunKey&) const = default;
};

double pct(double x) { return std::isnan(x) ? kNaN : 100.0 * x; }

RepeatabilityRow summarise(const std::string& run_a, const std::string& run_b, const std::vector<const Pair*>& pairs,
                           const RepeatabilityOptions& o) {
  RepeatabilityRow r;
  r.run_a = run_a;
  r.run_b = run_b;
  std::vector<double> d, signed_d, small, large, cublas, same, other;
  std::set<Layout> layouts;
  std::map<std::string, std::pair<std::vector<double>, std::vector<double>>> groups;
  std::vector<std::pair<double, bool>> by_d;  // (d, clocks differ) of kernel pairs
  for (const Pair* p : pairs) {
    layouts.insert(p->layout);
    if (p->cublas) {
      cublas.push_back(p->d());
      continue;
    }
    d.push_back(p->d());
    signed_d.push_back((p->t_b - p->t_a) / p->t_a);
    (p->t_a < o.small_us ? small : large).push_back(p->d());
    (p->same_worker ? same : other).push_back(p->d());
    auto& g = groups[p->group_key];
    g.first.push_back(p->t_a);
    g.second.push_back(p->t_b);
    by_d.emplace_back(p->d(), std::abs(p->clock_a - p->clock_b) > o.clock_tolerance_mhz);
  }
  for (Layout l : layouts) r.layouts += (r.layouts.empty() ? "" : ",") + std::string(to_string(l));
  r.kernel_pairs = d.size();
  r.cublas_pairs = cublas.size();
  r.groups = groups.size();
  r.median_pct = pct(quantile(d, 0.5));
  r.p90_pct = pct(quantile(d, 0.9));
  r.p99_pct = pct(quantile(d, 0.99));
  r.max_pct = d.empty() ? kNaN : pct(*std::max_element(d.begin(), d.end()));
  r.signed_median_pct = pct(quantile(signed_d, 0.5));
  r.small_pairs = small.size();
  r.median_small_pct = pct(quantile(small, 0.5));
  r.median_large_pct = pct(quantile(large, 0.5));
  r.cublas_median_pct = pct(quantile(cublas, 0.5));
  r.same_worker_pairs = same.size();
  r.median_same_worker_pct = pct(quantile(same, 0.5));
  r.median_other_worker_pct = pct(quantile(other, 0.5));
  std::vector<double> rhos;
  for (const auto& [key, g] : groups) {
    if (g.first.size() < o.min_group_pairs) continue;
    const double rho = spearman(g.first, g.second);
    if (!std::isnan(rho)) rhos.push_back(rho);
  }
  r.rho_groups = rhos.size();
  r.rho_median = quantile(rhos, 0.5);
  if (by_d.empty()) {
    r.clock_differs_all = r.clock_differs_top = kNaN;
  } else {
    std::sort(by_d.begin(), by_d.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
    const size_t top = std::max<size_t>(1, static_cast<size_t>(std::ceil(o.top_share * static_cast<double>(by_d.size()))));
    size_t all_differ = 0, top_differ = 0;
    for (size_t i = 0; i < by_d.size(); ++i) {
      all_differ += by_d[i].second;
      if (i < top) top_differ += by_d[i].second;
    }
    r.clock_differs_all = static_cast<double>(all_differ) / static_cast<double>(by_d.size());
    r.clock_differs_top = static_cast<double>(top_differ) / static_cast<double>(top);
  }
  return r;
}

}  // namespace

void validate(const RepeatabilityOptions& o) {
  if (!(o.small_us > 0)) throw Error("--small-us must be positive");
  if (o.min_group_pairs < 2) throw Error("--min-group-pairs must be at least 2 (a rank correlation needs two pairs)");
  if (!(o.clock_tolerance_mhz >= 0)) throw Error("--clock-tolerance must not be negative");
  if (!(o.top_share > 0 && o.top_share <= 1)) throw Error("--top-share must be in (0, 1]");
}

std::vector<RepeatabilityRow> repeatability_study(const Registry& reg, const RepeatabilityOptions& o,
                                                  const AnalysisProgress& progress) {
  validate(o);
  // Pair each candidate's first row of its earliest run with its first row of the next run.
  std::vector<Pair> pairs;
  std::vector<std::pair<RunKey, RunKey>> pair_runs;
  std::string cand;
  RepeatedObservation first;
  bool have_first = false, paired = false;
  size_t seen = 0;
  MeasurementFilter filter;  // every set, cuBLAS included
  scan_repeated_measurements(reg, filter, [&](const RepeatedObservation& r) {
    if (progress && ++seen % 100000 == 0) progress("reading re-measured rows", seen, 0);
    if (!o.layouts.empty() && std::find(o.layouts.begin(), o.layouts.end(), r.layout) == o.layouts.end()) return;
    std::string key = r.group_key;
    key.append("\x1f").append(r.kernel_id).append("\x1f").append(r.knobs);
    if (key != cand) {
      cand = std::move(key);
      first = r;
      have_first = true;
      paired = false;
      return;
    }
    if (!have_first || paired || r.run_uuid == first.run_uuid || !(first.mean_us > 0) || !(r.mean_us > 0)) return;
    Pair p;
    p.group_key = r.group_key;
    p.layout = r.layout;
    p.cublas = r.kernel_id == "cublas";
    p.t_a = first.mean_us;
    p.t_b = r.mean_us;
    p.clock_a = first.sm_clock_mhz;
    p.clock_b = r.sm_clock_mhz;
    p.same_worker = !r.worker.empty() && r.worker == first.worker;
    pairs.push_back(std::move(p));
    pair_runs.emplace_back(RunKey{first.run_started_at, first.run_uuid}, RunKey{r.run_started_at, r.run_uuid});
    paired = true;
  });
  std::map<std::pair<RunKey, RunKey>, std::vector<const Pair*>> by_runs;
  std::vector<const Pair*> all;
  for (size_t i = 0; i < pairs.size(); ++i) {
    by_runs[pair_runs[i]].push_back(&pairs[i]);
    all.push_back(&pairs[i]);
  }
  std::vector<RepeatabilityRow> out;
  for (const auto& [runs, ps] : by_runs) {
    RepeatabilityRow r = summarise(runs.first.uuid.substr(0, 8), runs.second.uuid.substr(0, 8), ps, o);
    if (r.kernel_pairs > 0) out.push_back(std::move(r));
  }
  if (out.empty()) {
    std::string which;
    for (Layout l : o.layouts) which += (which.empty() ? " of layout " : ", ") + std::string(to_string(l));
    throw Error("no candidate" + which + " was measured status-ok in two runs in " + reg.path() +
                " (collect a `cks plan remeasure` sample first)");
  }
  if (out.size() > 1) out.push_back(summarise("all", "all", all, o));
  return out;
}

Table repeatability_table(std::span<const RepeatabilityRow> rows) {
  Table t({"run_a", "run_b", "layouts", "kernel_pairs", "groups", "median_pct", "p90_pct", "p99_pct", "max_pct",
           "signed_median_pct", "small_pairs", "median_small_pct", "median_large_pct", "cublas_pairs",
           "cublas_median_pct", "same_worker_pairs", "median_same_worker_pct", "median_other_worker_pct",
           "rho_groups", "rho_median", "clock_differs_all", "clock_differs_top"});
  auto num = [](double x, double scale = 1e3) -> Cell {
    return std::isnan(x) ? Cell{} : Cell{std::round(x * scale) / scale};
  };
  auto count = [](size_t n) -> Cell { return static_cast<int64_t>(n); };
  for (const auto& r : rows)
    t.add_row({r.run_a, r.run_b, r.layouts, count(r.kernel_pairs), count(r.groups), num(r.median_pct),
               num(r.p90_pct), num(r.p99_pct), num(r.max_pct), num(r.signed_median_pct), count(r.small_pairs),
               num(r.median_small_pct), num(r.median_large_pct), count(r.cublas_pairs), num(r.cublas_median_pct),
               count(r.same_worker_pairs), num(r.median_same_worker_pct), num(r.median_other_worker_pct),
               count(r.rho_groups), num(r.rho_median, 1e4), num(r.clock_differs_all, 1e4),
               num(r.clock_differs_top, 1e4)});
  return t;
}

}  // namespace cks
