// The training / evaluation data set: status-ok measurements of a registry, grouped per
// shape-layout group, with phi(p, c, h) and the labels of cks/models.hpp.
#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <tuple>

#include "cks/models.hpp"
#include "cks/registry.hpp"

namespace cks {

namespace {

// One candidate's measurements in one group: (run index, throughput, sigma^2) per row.
struct MergedRow {
  Candidate candidate;
  std::vector<std::tuple<size_t, double, double>> rows;
};

// Rows of the group being read, in scan order (kernel id, knobs).
struct PendingGroup {
  std::string key, set;
  Problem problem;
  std::vector<MergedRow> rows;
  std::string last_kernel, last_knobs;  // identity of rows.back(), to merge repeats
  std::vector<std::string> runs;        // run uuids, in order of first appearance
  std::vector<double> cublas_sum;       // per run index
  std::vector<int> cublas_count;

  size_t run_index(const std::string& uuid) {
    for (size_t i = 0; i < runs.size(); ++i)
      if (runs[i] == uuid) return i;
    runs.push_back(uuid);
    cublas_sum.push_back(0);
    cublas_count.push_back(0);
    return runs.size() - 1;
  }
};

class DatasetBuilder {
 public:
  DatasetBuilder(Dataset& out, const HardwareDesc& hw, const DatasetOptions& options,
                 std::map<std::string, double> run_offsets = {})
      : out_(out), hw_(hw), options_(options), offsets_(std::move(run_offsets)) {
    out_.hw_preset = hw.preset;
  }

  void add(const Observation& o) {
    if (!pending_ || pending_->key != o.group_key) {
      flush();
      pending_ = PendingGroup{o.group_key, o.set, Problem{o.m, o.n, o.k, o.layout}, {}, {}, {}, {}, {}, {}};
    }
    PendingGroup& g = *pending_;
    // A key measured under several sets counts as evaluation data if any of them is 'eval'.
    if (o.set == "eval") g.set = "eval";
    if (!(o.tflops > 0) || !std::isfinite(o.tflops)) return;
    const size_t run = g.run_index(o.run_uuid);
    if (o.kernel_id == "cublas") {
      g.cublas_sum[run] += o.tflops;
      ++g.cublas_count[run];
      return;
    }
    const double sigma = throughput_sigma(o.tflops, o.mean_us, o.std_us);
    if (!g.rows.empty() && g.last_kernel == o.kernel_id && g.last_knobs == o.knobs) {
      g.rows.back().rows.emplace_back(run, o.tflops, sigma * sigma);
      return;
    }
    const auto candidate = Catalogue::get(o.layout).find_candidate(o.kernel_id, o.knobs);
    // A nondeterministic reduction is measured (KnobScope::measurable) but no feature describes
    // it: its rows would share the deterministic setting's features with another label.
    if (!candidate || candidate->knobs.reduction != Reduction::deterministic) {
      ++out_.skipped_unknown;
      return;
    }
    g.rows.push_back(MergedRow{*candidate, {{run, o.tflops, sigma * sigma}}});
    g.last_kernel = o.kernel_id;
    g.last_knobs = o.knobs;
  }

  // Per run index: the factor of DatasetOptions (1 without normalization), and the group's
  // cuBLAS throughput in the reference run (0 if none).
  std::pair<std::vector<double>, double> run_factors(const PendingGroup& g) const {
    const size_t runs = g.runs.size();
    std::vector<double> factor(runs, 1.0);
    std::vector<size_t> rows(runs, 0);
    for (const MergedRow& r : g.rows)
      for (const auto& [run, t, v] : r.rows) ++rows[run];
    auto cublas = [&](size_t i) { return g.cublas_count[i] ? g.cublas_sum[i] / g.cublas_count[i] : 0.0; };
    // Reference: the run with a cuBLAS row and the most rows (ties: first seen).
    std::optional<size_t> ref;
    for (size_t i = 0; i < runs; ++i)
      if (g.cublas_count[i] && (!ref || rows[i] > rows[*ref])) ref = i;
    if (!ref || !options_.run_normalize || options_.run_offset) {
      // Without normalization, or without a run-matched reference: the mean over every cuBLAS row.
      double sum = 0;
      int n = 0;
      for (size_t i = 0; i < runs; ++i) sum += g.cublas_sum[i], n += g.cublas_count[i];
      return {factor, n ? sum / n : 0.0};
    }
    const double ref_tflops = cublas(*ref);
    for (size_t i = 0; i < runs; ++i) {
      if (!g.cublas_count[i]) continue;
      const double f = ref_tflops / cublas(i);
      if (std::abs(f - 1) < options_.dead_band) continue;
      factor[i] = std::clamp(f, 1 / options_.max_factor, options_.max_factor);
    }
    return {factor, ref_tflops};
  }

  void flush() {
    if (!pending_) return;
    PendingGroup g = std::move(*pending_);
    pending_.reset();
    if (g.rows.empty()) {
      ++out_.skipped_groups;
      return;
    }
    const size_t n = g.rows.size();
    if (options_.run_normalize && options_.run_offset) apply_offsets(g);
    const auto [factor, cublas_tflops] = run_factors(g);
    std::vector<uint32_t> per_run(g.runs.size(), 0);  // candidates each run measured in this group
    for (const MergedRow& r : g.rows) for_each_run(r, [&](size_t run) { ++per_run[run]; });
    if (std::any_of(factor.begin(), factor.end(), [](double f) { return f != 1.0; })) ++out_.run_normalized_groups;
    std::vector<double> tflops(n), sigma(n);
    std::vector<Candidate> candidates(n);
    std::vector<uint32_t> run_rows(n, 0);
    for (size_t i = 0; i < n; ++i) {
      double sum = 0, var = 0;
      for_each_run(g.rows[i], [&](size_t run) { run_rows[i] = run_rows[i] ? std::min(run_rows[i], per_run[run]) : per_run[run]; });
      for (const auto& [run, t, v] : g.rows[i].rows) {
        sum += t * factor[run];
        var += v * factor[run] * factor[run];
        if (factor[run] != 1.0) ++out_.run_normalized_rows;
      }
      const double count = static_cast<double>(g.rows[i].rows.size());
      tflops[i] = sum / count;
      sigma[i] = std::sqrt(var / count);
      candidates[i] = g.rows[i].candidate;
    }
    const GroupLabels labels = label_group(tflops, sigma);
    FeatureMatrix x;
    computer(g.problem.layout).compute(g.problem, candidates, x);

    DataGroup dg;
    dg.key = g.key;
    dg.set = g.set;
    dg.problem = g.problem;
    dg.begin = out_.rows();
    dg.end = dg.begin + n;
    if (cublas_tflops > 0) dg.cublas_tflops = cublas_tflops;
    out_.groups.push_back(std::move(dg));
    out_.x.data.insert(out_.x.data.end(), x.data.begin(), x.data.end());
    out_.x.cols = x.cols;
    out_.x.rows += n;
    out_.candidates.insert(out_.candidates.end(), candidates.begin(), candidates.end());
    out_.tflops.insert(out_.tflops.end(), tflops.begin(), tflops.end());
    out_.sigma.insert(out_.sigma.end(), sigma.begin(), sigma.end());
    out_.y.insert(out_.y.end(), labels.y.begin(), labels.y.end());
    out_.relevance.insert(out_.relevance.end(), labels.relevance.begin(), labels.relevance.end());
    out_.grade.insert(out_.grade.end(), labels.grade.begin(), labels.grade.end());
    out_.run_rows.insert(out_.run_rows.end(), run_rows.begin(), run_rows.end());
  }

 private:
  // --run-normalize offset: every row of run r is read as taking t + delta_r microseconds (its
  // throughput and sigma scaled by t / (t + delta_r)); the cuBLAS rows likewise, after which
  // run_factors takes their mean over every run.
  void apply_offsets(PendingGroup& g) {
    const double flops = 2.0 * static_cast<double>(g.problem.m) * static_cast<double>(g.problem.n) *
                         static_cast<double>(g.problem.k);
    std::vector<double> delta(g.runs.size(), 0.0);
    bool any = false;
    for (size_t i = 0; i < g.runs.size(); ++i)
      if (auto it = offsets_.find(g.runs[i]); it != offsets_.end() && it->second != 0) delta[i] = it->second, any = true;
    if (!any) return;
    // scale = t / (t + delta) for a row of `tflops` (t in us), bounded to [0.5, 2]: an offset of a
    // few tenths of a microsecond never halves or doubles a throughput unless the row is corrupt.
    auto scale = [&](double tflops, size_t run) {
      const double t = flops / (tflops * 1e6);
      return std::clamp(t / std::max(t + delta[run], 1e-9), 0.5, 2.0);
    };
    bool scaled = false;
    for (MergedRow& r : g.rows)
      for (auto& [run, t, v] : r.rows)
        if (delta[run] != 0) {
          const double f = scale(t, run);
          t *= f;
          v *= f * f;
          scaled = true;
          ++out_.run_normalized_rows;
        }
    for (size_t i = 0; i < g.runs.size(); ++i)
      if (delta[i] != 0 && g.cublas_count[i]) {
        const double mean = g.cublas_sum[i] / g.cublas_count[i];
        g.cublas_sum[i] = mean * scale(mean, i) * g.cublas_count[i];
      }
    if (scaled) ++out_.run_normalized_groups;
  }

  // f(run) for each run index among a merged row's measurements, once each (a row has a few: no allocation).
  template <class F>
  static void for_each_run(const MergedRow& r, F&& f) {
    for (size_t i = 0; i < r.rows.size(); ++i) {
      const size_t run = std::get<0>(r.rows[i]);
      bool seen = false;
      for (size_t j = 0; j < i && !seen; ++j) seen = std::get<0>(r.rows[j]) == run;
      if (!seen) f(run);
    }
  }

  // One feature computer per layout (its per-kernel terms are costly to build).
  const FeatureComputer& computer(Layout layout) {
    auto it = computers_.find(layout);
    if (it == computers_.end())
      it = computers_.emplace(layout, FeatureComputer(Catalogue::get(layout).kernels(), hw_)).first;
    return it->second;
  }

  Dataset& out_;
  const HardwareDesc& hw_;
  const DatasetOptions options_;
  std::optional<PendingGroup> pending_;
  std::map<Layout, FeatureComputer> computers_;
  std::map<std::string, double> offsets_;  // --run-normalize offset: delta per run uuid (us)
};

}  // namespace

Dataset load_dataset(const Registry& registry, const HardwareDesc& hw, const Progress& progress) {
  return load_dataset(registry, hw, DatasetOptions{}, progress);
}

std::map<std::string, double> estimate_run_offsets(std::span<const Observation> cublas_rows, double max_us,
                                                   size_t min_groups) {
  // Mean cuBLAS time per (group, run).
  std::map<std::string, std::map<std::string, std::pair<double, int>>> by_group;
  for (const Observation& o : cublas_rows) {
    if (o.kernel_id != "cublas" || !(o.mean_us > 0) || !std::isfinite(o.mean_us)) continue;
    auto& [sum, count] = by_group[o.group_key][o.run_uuid];
    sum += o.mean_us;
    ++count;
  }
  struct Cell {
    size_t group, run;
    double t;
  };
  std::vector<Cell> cells;
  std::vector<std::string> runs;
  std::map<std::string, size_t> run_index;
  size_t groups = 0;
  for (const auto& [key, per_run] : by_group) {
    if (per_run.size() < 2) continue;
    double fastest = std::numeric_limits<double>::infinity();
    for (const auto& [run, sc] : per_run) fastest = std::min(fastest, sc.first / sc.second);
    if (fastest > max_us) continue;
    for (const auto& [run, sc] : per_run) {
      auto [it, fresh] = run_index.emplace(run, runs.size());
      if (fresh) runs.push_back(run);
      cells.push_back({groups, it->second, sc.first / sc.second});
    }
    ++groups;
  }
  std::vector<size_t> count(runs.size(), 0);
  for (const Cell& c : cells) ++count[c.run];
  std::optional<size_t> anchor;
  for (size_t r = 0; r < runs.size(); ++r)
    if (!anchor || count[r] > count[*anchor] || (count[r] == count[*anchor] && runs[r] < runs[*anchor])) anchor = r;
  std::map<std::string, double> out;
  if (!anchor || count[*anchor] < min_groups) return out;
  auto median = [](std::vector<double>& v) {
    std::sort(v.begin(), v.end());
    const size_t h = v.size() / 2;
    return v.size() % 2 ? v[h] : 0.5 * (v[h - 1] + v[h]);
  };
  std::vector<double> delta(runs.size(), 0.0), tau(groups, 0.0);
  std::vector<std::vector<double>> per_group(groups), per_run(runs.size());
  for (int iter = 0; iter < 50; ++iter) {
    for (auto& v : per_group) v.clear();
    for (const Cell& c : cells) per_group[c.group].push_back(c.t + delta[c.run]);
    for (size_t g = 0; g < groups; ++g) tau[g] = median(per_group[g]);
    for (auto& v : per_run) v.clear();
    for (const Cell& c : cells) per_run[c.run].push_back(tau[c.group] - c.t);
    double moved = 0;
    std::vector<double> next(runs.size(), 0.0);
    for (size_t r = 0; r < runs.size(); ++r) next[r] = median(per_run[r]);
    const double shift = next[*anchor];
    for (size_t r = 0; r < runs.size(); ++r) {
      next[r] -= shift;
      moved = std::max(moved, std::abs(next[r] - delta[r]));
    }
    delta = std::move(next);
    if (moved < 1e-4) break;
  }
  for (size_t r = 0; r < runs.size(); ++r)
    if (count[r] >= min_groups) out[runs[r]] = delta[r];
  return out;
}

Dataset load_dataset(const Registry& registry, const HardwareDesc& hw, const DatasetOptions& options,
                     const Progress& progress) {
  Dataset out;
  out.x.cols = FeatureSchema::get().size();
  std::map<std::string, double> offsets;
  if (options.run_normalize && options.run_offset) {
    MeasurementFilter cublas;
    cublas.only_cublas = true;
    offsets = estimate_run_offsets(load_ok_measurements(registry, cublas));
    out.run_offsets = offsets;
  }
  DatasetBuilder builder(out, hw, options, offsets);
  size_t seen = 0;
  scan_ok_measurements(registry, MeasurementFilter{}, [&](const Observation& o) {
    builder.add(o);
    if (progress && ++seen % 100000 == 0) progress("reading measurements", seen, 0);
  });
  builder.flush();
  if (out.groups.empty())
    throw Error("no usable measurements in " + registry.path() +
                " (no status-ok CUTLASS measurement of a catalogue candidate)");
  return out;
}

Dataset Dataset::subset(std::span<const size_t> group_indices) const {
  Dataset d;
  d.hw_preset = hw_preset;
  d.x.cols = x.cols;
  for (size_t gi : group_indices) {
    const DataGroup& g = groups.at(gi);
    DataGroup ng = g;
    ng.begin = d.rows();
    ng.end = ng.begin + g.size();
    d.groups.push_back(ng);
    d.x.data.insert(d.x.data.end(), x.data.begin() + g.begin * x.cols, x.data.begin() + g.end * x.cols);
    d.x.rows += g.size();
    auto copy = [&](auto& dst, const auto& src) { dst.insert(dst.end(), src.begin() + g.begin, src.begin() + g.end); };
    copy(d.candidates, candidates);
    copy(d.tflops, tflops);
    copy(d.sigma, sigma);
    copy(d.y, y);
    copy(d.relevance, relevance);
    copy(d.grade, grade);
    if (run_rows.size() == rows()) copy(d.run_rows, run_rows);  // data sets built by hand may have none
  }
  return d;
}

std::vector<size_t> Dataset::eval_groups() const {
  std::vector<size_t> idx;
  for (size_t g = 0; g < groups.size(); ++g)
    if (groups[g].is_eval()) idx.push_back(g);
  return idx;
}

// Every set but 'eval', 'family' (the held-out model families, a second evaluation set), 'llm'
// (the real-model shapes that score the real pick, leases 19-20: a third evaluation set; their
// training counterparts are the 'train' set's llm-train groups), 'proof' and 'sbs' (the
// side-by-side repetitions of evaluation groups, cks plan sidebyside, are evaluation data): the
// issue-3 proof groups were measured with binaries built
// without CUTE_SM90_EXTENDED_MMA_SHAPES_ENABLED (data/README.md), so their kernels are not
// quite the catalogue's; they stay in the data for the record but teach the models nothing.
std::vector<size_t> Dataset::train_groups() const {
  std::vector<size_t> idx;
  for (size_t g = 0; g < groups.size(); ++g)
    if (!groups[g].is_eval() && groups[g].set != "proof" && groups[g].set != "sbs" && groups[g].set != "family" &&
        groups[g].set != "llm")
      idx.push_back(g);
  return idx;
}

std::vector<size_t> Dataset::train_groups(std::span<const Layout> layouts) const {
  std::vector<size_t> idx = train_groups();
  if (layouts.empty()) return idx;
  std::erase_if(idx, [&](size_t g) {
    return std::find(layouts.begin(), layouts.end(), groups[g].problem.layout) == layouts.end();
  });
  return idx;
}


Dataset subsample_candidates(const Dataset& d, size_t max_candidates, size_t keep_top, uint64_t seed,
                             size_t keep_targeted) {
  if (max_candidates == 0) throw Error("the candidate cap must be >= 1");
  keep_top = std::min(keep_top, max_candidates);
  Dataset out;
  out.hw_preset = d.hw_preset;
  out.x.cols = d.x.cols;
  out.skipped_unknown = d.skipped_unknown;
  out.skipped_groups = d.skipped_groups;
  out.run_normalized_groups = d.run_normalized_groups;
  out.run_normalized_rows = d.run_normalized_rows;
  std::vector<size_t> rows;
  for (const DataGroup& g : d.groups) {
    const size_t n = g.size();
    std::vector<size_t> idx(n);
    for (size_t i = 0; i < n; ++i) idx[i] = g.begin + i;
    if (n > max_candidates) {
      // Top by throughput (ties: lower row), then a seeded partial Fisher-Yates over the rest.
      std::stable_sort(idx.begin(), idx.end(), [&](size_t a, size_t b) { return d.tflops[a] > d.tflops[b]; });
      // --keep-targeted: after the top, the targeted rows (in throughput order), then the draws.
      size_t fixed = keep_top;
      if (keep_targeted > 0) {
        if (d.run_rows.size() != d.rows()) throw Error("--keep-targeted needs the rows' run sizes (a data set from load_dataset)");
        const auto targeted = [&](size_t r) { return d.run_rows[r] > 0 && d.run_rows[r] <= keep_targeted; };
        fixed = static_cast<size_t>(std::stable_partition(idx.begin() + static_cast<std::ptrdiff_t>(keep_top), idx.end(), targeted) - idx.begin());
      }
      uint64_t state = fnv1a64(std::to_string(seed) + ":" + g.key);
      auto next = [&state] {  // splitmix64: the same draws on every platform
        uint64_t z = (state += 0x9e3779b97f4a7c15ull);
        z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
        z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
        return z ^ (z >> 31);
      };
      for (size_t i = fixed; i < max_candidates; ++i) std::swap(idx[i], idx[i + next() % (n - i)]);
      idx.resize(std::max(fixed, max_candidates));
      std::sort(idx.begin(), idx.end());
    }
    DataGroup ng = g;
    ng.begin = out.rows();
    ng.end = ng.begin + idx.size();
    out.groups.push_back(ng);
    for (size_t r : idx) {
      out.x.data.insert(out.x.data.end(), d.x.data.begin() + r * d.x.cols, d.x.data.begin() + (r + 1) * d.x.cols);
      out.candidates.push_back(d.candidates[r]);
      out.tflops.push_back(d.tflops[r]);
      out.sigma.push_back(d.sigma[r]);
      out.y.push_back(d.y[r]);
      out.relevance.push_back(d.relevance[r]);
      out.grade.push_back(d.grade[r]);
      if (d.run_rows.size() == d.rows()) out.run_rows.push_back(d.run_rows[r]);
    }
    out.x.rows += idx.size();
  }
  return out;
}

std::vector<size_t> subsample_groups(std::span<const DataGroup> groups, size_t max_groups, uint64_t seed) {
  // Shapes in hash order, each with its groups.
  std::map<std::string, std::vector<size_t>> by_shape;
  for (size_t g = 0; g < groups.size(); ++g) {
    const Problem& p = groups[g].problem;
    by_shape[std::to_string(p.m) + "x" + std::to_string(p.n) + "x" + std::to_string(p.k)].push_back(g);
  }
  std::vector<std::pair<uint64_t, std::string>> order;
  for (const auto& [shape, members] : by_shape)
    order.emplace_back(fnv1a64(std::to_string(seed) + ":sub:" + shape), shape);
  std::sort(order.begin(), order.end());
  std::vector<size_t> out;
  for (const auto& [hash, shape] : order) {
    const auto& members = by_shape[shape];
    if (out.size() + members.size() > max_groups) continue;
    out.insert(out.end(), members.begin(), members.end());
  }
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace cks
