// The noise study: the coefficient of variation of each status-ok row's timed rounds
// (definitions in include/cks/analysis.hpp, results in data/README.md, Quality).
#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <set>
#include <tuple>

#include "cks/analysis.hpp"
#include "cks/models.hpp"
#include "cks/registry.hpp"

namespace cks {

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

struct CvSample {
  std::vector<double> cv, small, large;
};

NoiseRow summarise(std::string layout, std::string set, std::string kind, const CvSample& s, const NoiseOptions& o) {
  NoiseRow r;
  r.layout = std::move(layout);
  r.set = std::move(set);
  r.kind = std::move(kind);
  r.rows = s.cv.size();
  r.median_pct = quantile(s.cv, 0.5);
  r.p90_pct = quantile(s.cv, 0.9);
  r.p99_pct = quantile(s.cv, 0.99);
  r.max_pct = s.cv.empty() ? kNaN : *std::max_element(s.cv.begin(), s.cv.end());
  r.small_rows = s.small.size();
  r.median_small_pct = quantile(s.small, 0.5);
  r.median_large_pct = quantile(s.large, 0.5);
  const auto noisy = std::count_if(s.cv.begin(), s.cv.end(), [&](double x) { return x > o.high_pct; });
  r.noisy_share = s.cv.empty() ? kNaN : static_cast<double>(noisy) / static_cast<double>(s.cv.size());
  return r;
}

void append(CvSample& to, const CvSample& from) {
  to.cv.insert(to.cv.end(), from.cv.begin(), from.cv.end());
  to.small.insert(to.small.end(), from.small.begin(), from.small.end());
  to.large.insert(to.large.end(), from.large.begin(), from.large.end());
}

}  // namespace

void validate(const NoiseOptions& o) {
  if (!(o.small_us > 0)) throw Error("--small-us must be positive");
  if (!(o.high_pct > 0)) throw Error("--high-pct must be positive");
}

NoiseStudy noise_study(const Registry& reg, const NoiseOptions& o, const AnalysisProgress& progress) {
  validate(o);
  NoiseStudy study;
  // (layout, set, cublas) -> sample; std::map keeps layouts in enum order and sets by name.
  std::map<std::tuple<Layout, std::string, bool>, CvSample> by;
  MeasurementFilter filter;
  filter.set = o.set;
  size_t seen = 0;
  scan_ok_measurements(reg, filter, [&](const Observation& r) {
    if (progress && ++seen % 200000 == 0) progress("reading ok rows", seen, 0);
    if (!o.layouts.empty() && std::find(o.layouts.begin(), o.layouts.end(), r.layout) == o.layouts.end()) return;
    if (r.samples < 2 || !(r.mean_us > 0) || !std::isfinite(r.std_us) || r.std_us < 0) {
      ++study.skipped;
      return;
    }
    CvSample& s = by[{r.layout, r.set, r.kernel_id == "cublas"}];
    const double cv = 100.0 * r.std_us / r.mean_us;
    s.cv.push_back(cv);
    (r.mean_us < o.small_us ? s.small : s.large).push_back(cv);
  });
  if (by.empty()) {
    std::string which;
    for (Layout l : o.layouts) which += (which.empty() ? " of layout " : ", ") + std::string(to_string(l));
    if (!o.set.empty()) which += " in set " + o.set;
    throw Error("no status-ok row" + which + " with two or more timed rounds in " + reg.path());
  }
  auto kind = [](bool cublas) { return cublas ? "cublas" : "kernel"; };
  for (const auto& [key, s] : by) {
    const auto& [layout, set, cublas] = key;
    study.rows.push_back(summarise(std::string(to_string(layout)), set, kind(cublas), s, o));
  }
  // Pooled rows: each layout over its sets (when it has more than one), then every layout.
  std::map<std::pair<Layout, bool>, std::pair<CvSample, size_t>> by_layout;  // sample, sets pooled
  for (const auto& [key, s] : by) {
    auto& [sample, sets] = by_layout[{std::get<0>(key), std::get<2>(key)}];
    append(sample, s);
    ++sets;
  }
  CvSample all[2];
  std::set<Layout> layouts;
  for (const auto& [key, v] : by_layout) {
    if (v.second > 1) study.rows.push_back(summarise(std::string(to_string(key.first)), "all", kind(key.second), v.first, o));
    append(all[key.second], v.first);
    layouts.insert(key.first);
  }
  if (layouts.size() > 1)
    for (bool cublas : {false, true})
      if (!all[cublas].cv.empty()) study.rows.push_back(summarise("all", "all", kind(cublas), all[cublas], o));
  return study;
}

Table noise_table(std::span<const NoiseRow> rows) {
  Table t({"layout", "set", "kind", "rows", "median_pct", "p90_pct", "p99_pct", "max_pct", "small_rows",
           "median_small_pct", "median_large_pct", "noisy_share"});
  auto num = [](double x, double scale = 1e3) -> Cell {
    return std::isnan(x) ? Cell{} : Cell{std::round(x * scale) / scale};
  };
  auto count = [](size_t n) -> Cell { return static_cast<int64_t>(n); };
  for (const auto& r : rows)
    t.add_row({r.layout, r.set, r.kind, count(r.rows), num(r.median_pct), num(r.p90_pct), num(r.p99_pct),
               num(r.max_pct), count(r.small_rows), num(r.median_small_pct), num(r.median_large_pct),
               num(r.noisy_share, 1e4)});
  return t;
}

}  // namespace cks
