// Reading the measured candidate universe of each group for the analysis studies
// (definitions in include/cks/analysis.hpp).
#include <algorithm>
#include <array>
#include <cmath>
#include <map>
#include <numeric>
#include <unordered_map>

#include "analysis/internal.hpp"
#include "cks/analysis.hpp"
#include "cks/registry.hpp"

namespace cks {

namespace {

using analysis_detail::candidate_code;

constexpr std::array<std::string_view, 3> kSelectionNames{"eval", "train", "all"};

// One candidate of a group while reading: status-ok throughputs summed, or a cut row's.
struct PendingCandidate {
  Candidate candidate;
  double ok_sum = 0;
  int ok_count = 0;
  bool has_cut = false;
  double cut_tflops = 0;  // the warm-up round's throughput of a cut row
};

struct PendingGroup {
  std::string key, set;
  Problem problem;
  std::vector<PendingCandidate> rows;
  std::unordered_map<uint64_t, uint32_t> index;  // candidate_code -> rows index
};

// Position of each candidate in its catalogue's candidates() order (kernel, then knob_settings()).
class CataloguePositions {
 public:
  explicit CataloguePositions(const Catalogue& cat) : cat_(cat), first_(cat.kernels().size(), 0) {
    const auto& cands = cat.candidates();
    for (size_t i = cands.size(); i-- > 0;) first_[cands[i].kernel] = static_cast<uint32_t>(i);
  }
  size_t position(const Candidate& c) const {
    const auto& cands = cat_.candidates();
    for (size_t i = first_[c.kernel]; i < cands.size() && cands[i].kernel == c.kernel; ++i)
      if (cands[i].knobs == c.knobs) return i;
    return cands.size();  // a knob setting the kernel does not admit: after every catalogue candidate
  }

 private:
  const Catalogue& cat_;
  std::vector<uint32_t> first_;
};

class Loader {
 public:
  Loader(const HardwareDesc& hw, std::map<std::string, std::string> selected)
      : hw_(hw), selected_(std::move(selected)) {}

  void add(const Observation& o, bool cut) {
    const auto sel = selected_.find(o.group_key);
    if (sel == selected_.end() || o.kernel_id == "cublas") return;
    auto [it, fresh] = groups_.try_emplace(o.group_key);
    PendingGroup& g = it->second;
    if (fresh) {
      g.key = o.group_key;
      g.set = sel->second;
      g.problem = Problem{o.m, o.n, o.k, o.layout};
    }
    const auto candidate = Catalogue::get(o.layout).find_candidate(o.kernel_id, o.knobs);
    if (!candidate || candidate->knobs.reduction != Reduction::deterministic) {  // as load_dataset
      ++skipped_unknown_;
      return;
    }
    const uint64_t code = candidate_code(*candidate);
    auto [pos, inserted] = g.index.try_emplace(code, static_cast<uint32_t>(g.rows.size()));
    if (inserted) g.rows.push_back(PendingCandidate{*candidate});
    PendingCandidate& r = g.rows[pos->second];
    const double t = std::isfinite(o.tflops) && o.tflops > 0 ? o.tflops : 0.0;
    if (cut) {
      r.has_cut = true;
      r.cut_tflops = std::max(r.cut_tflops, t);
    } else if (t > 0) {
      r.ok_sum += t;
      ++r.ok_count;
    }
  }

  AnalysisData finish(bool include_cut) {
    AnalysisData out;
    out.hw_preset = hw_.preset;
    out.skipped_unknown = skipped_unknown_;
    for (auto& [key, g] : groups_) {
      AnalysisGroup ag;
      ag.key = g.key;
      ag.set = g.set;
      ag.problem = g.problem;
      ag.tags = tags_for(g.problem.m, g.problem.n, g.problem.k, hw_);
      const CataloguePositions& positions = positions_for(g.problem.layout);
      std::vector<std::pair<size_t, uint32_t>> order;  // (catalogue position, rows index)
      for (uint32_t i = 0; i < g.rows.size(); ++i) {
        const PendingCandidate& r = g.rows[i];
        // A status-ok row wins over a cut row of the same candidate (a later attempt finished).
        if (r.ok_count == 0 && !(include_cut && r.has_cut)) continue;
        order.emplace_back(positions.position(r.candidate), i);
      }
      std::sort(order.begin(), order.end());
      for (const auto& [position, i] : order) {
        const PendingCandidate& r = g.rows[i];
        const bool is_cut = r.ok_count == 0;
        ag.candidates.push_back(r.candidate);
        ag.tflops.push_back(is_cut ? r.cut_tflops : r.ok_sum / r.ok_count);
        ag.cut.push_back(is_cut ? 1 : 0);
        if (!is_cut) ag.oracle = std::max(ag.oracle, ag.tflops.back());
      }
      if (!(ag.oracle > 0)) {
        ++out.skipped_groups;
        continue;
      }
      out.groups.push_back(std::move(ag));
    }
    return out;
  }

 private:
  const CataloguePositions& positions_for(Layout layout) {
    auto it = positions_.find(layout);
    if (it == positions_.end()) it = positions_.emplace(layout, CataloguePositions(Catalogue::get(layout))).first;
    return it->second;
  }

  const HardwareDesc& hw_;
  std::map<std::string, std::string> selected_;  // group key -> set reported for it
  std::map<std::string, PendingGroup> groups_;   // key order
  std::map<Layout, CataloguePositions> positions_;
  size_t skipped_unknown_ = 0;
};

}  // namespace

std::string_view to_string(GroupSelection s) { return kSelectionNames[static_cast<int>(s)]; }

GroupSelection parse_group_selection(std::string_view s) {
  for (size_t i = 0; i < kSelectionNames.size(); ++i)
    if (kSelectionNames[i] == s) return static_cast<GroupSelection>(i);
  throw Error("unknown --groups '" + std::string(s) + "' (expected eval, train or all)");
}

size_t AnalysisGroup::cut_count() const { return static_cast<size_t>(std::count(cut.begin(), cut.end(), 1)); }

AnalysisData load_analysis_data(const Registry& reg, const HardwareDesc& hw, const AnalysisLoadOptions& options,
                                const AnalysisProgress& progress) {
  // The groups to read. A key registered under several sets is an evaluation group if any of
  // them is 'eval' (as in the models' data set), so 'train' never includes an evaluation shape.
  std::map<std::string, std::string> sets;
  std::map<std::string, Layout> layouts;
  for (const GroupInfo& g : reg.groups()) {
    auto [it, fresh] = sets.try_emplace(g.key, g.set);
    if (g.set == "eval") it->second = "eval";
    layouts[g.key] = g.layout;
  }
  std::map<std::string, std::string> selected;
  for (const auto& [key, set] : sets) {
    if (!options.layouts.empty() &&
        std::find(options.layouts.begin(), options.layouts.end(), layouts.at(key)) == options.layouts.end())
      continue;
    const bool take = options.groups == GroupSelection::all ||
                      (options.groups == GroupSelection::eval && set == "eval") ||
                      (options.groups == GroupSelection::train && set == "train");
    if (take) selected.emplace(key, set);
  }
  if (selected.empty()) {
    std::string which;
    for (Layout l : options.layouts) which += (which.empty() ? " of layout " : ", ") + std::string(to_string(l));
    throw Error(options.groups == GroupSelection::all
                    ? "no groups" + which + " in " + reg.path()
                    : "no groups of set '" + std::string(to_string(options.groups)) + "'" + which + " in " + reg.path());
  }

  Loader loader(hw, std::move(selected));
  MeasurementFilter filter;
  filter.include_cublas = false;
  if (options.groups != GroupSelection::all) filter.set = std::string(to_string(options.groups));
  size_t seen = 0;
  auto visit = [&](bool cut) {
    return [&, cut](const Observation& o) {
      loader.add(o, cut);
      if (progress && ++seen % 100000 == 0) progress("reading measurements", seen, 0);
    };
  };
  scan_ok_measurements(reg, filter, visit(false));
  if (options.include_cut) scan_measurements(reg, "cut", filter, visit(true));
  AnalysisData data = loader.finish(options.include_cut);
  if (data.groups.empty())
    throw Error("no usable measurements of the " + std::string(to_string(options.groups)) + " groups in " +
                reg.path() + " (no status-ok CUTLASS measurement of a catalogue candidate)");
  return data;
}

}  // namespace cks
