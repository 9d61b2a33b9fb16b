// The failure study: CUTLASS attempts by status and catalogue axis (definitions in
// include/cks/analysis.hpp, results in docs/analysis.md).
#include <algorithm>
#include <cctype>
#include <map>
#include <optional>
#include <set>

#include "analysis/internal.hpp"
#include "cks/analysis.hpp"
#include "cks/registry.hpp"

namespace cks {

namespace {

using analysis_detail::num;

// The layout index of the pooled rows (after every Layout).
constexpr int kAllLayouts = static_cast<int>(kLayouts.size());

// Text order with runs of digits compared as numbers: "8" < "16" < "auto", "64x8" < "64x16".
bool natural_less(std::string_view a, std::string_view b) {
  auto digit = [](char c) { return std::isdigit(static_cast<unsigned char>(c)) != 0; };
  size_t i = 0, j = 0;
  while (i < a.size() && j < b.size()) {
    if (digit(a[i]) && digit(b[j])) {
      size_t ie = i, je = j;
      while (ie < a.size() && digit(a[ie])) ++ie;
      while (je < b.size() && digit(b[je])) ++je;
      const auto x = a.substr(i, ie - i), y = b.substr(j, je - j);
      if (x.size() != y.size()) return x.size() < y.size();
      if (x != y) return x < y;
      i = ie;
      j = je;
    } else {
      if (a[i] != b[j]) return a[i] < b[j];
      ++i;
      ++j;
    }
  }
  return i == a.size() && j < b.size();
}

// Rows in layout order, then kFailureAxes order, then natural value order.
struct Key {
  int layout;
  size_t axis;
  std::string value;
  bool operator<(const Key& o) const {
    if (layout != o.layout) return layout < o.layout;
    if (axis != o.axis) return axis < o.axis;
    return natural_less(value, o.value);
  }
};

struct Tally {
  std::set<std::string> kernels, ok_kernels;
  std::array<size_t, std::size(kStatuses)> by_status{};
};

const size_t kOk = status_index("ok"), kCut = status_index("cut"), kLaunchError = status_index("launch_error"),
             kQuarantined = status_index("quarantined");

// The kernel's descriptor: its registry canonical, else the catalogue's entry for the ID.
std::optional<KernelDesc> describe(const KernelAttempts& a) {
  if (!a.canonical.empty()) return KernelDesc::from_canonical(a.canonical);
  const Catalogue& cat = Catalogue::get(a.layout);
  if (const auto i = cat.find(a.kernel_id)) return cat.kernels()[*i];
  return std::nullopt;
}

std::string axis_value(std::string_view axis, const KernelDesc& k, const KernelAttempts& a) {
  if (axis == "all") return "all";
  if (axis == "tile_mn") return kernel_axis_value(k, "tile_m") + "x" + kernel_axis_value(k, "tile_n");
  if (axis == "mainloop_tile_m") return kernel_axis_value(k, "mainloop") + "/" + kernel_axis_value(k, "tile_m");
  if (axis == "spills") {
    if (a.spill_store_bytes > 0 || a.spill_load_bytes > 0) return "yes";
    return a.spill_store_bytes == 0 && a.spill_load_bytes == 0 ? "no" : "unknown";
  }
  return kernel_axis_value(k, axis);
}

FailureRow summarise(const Key& key, const Tally& t) {
  FailureRow r;
  r.layout = key.layout == kAllLayouts ? "all" : std::string(to_string(kLayouts[static_cast<size_t>(key.layout)]));
  r.axis = kFailureAxes[key.axis];
  r.value = key.value;
  r.kernels = t.kernels.size();
  r.never_ok_kernels = t.kernels.size() - t.ok_kernels.size();
  for (size_t s = 0; s < t.by_status.size(); ++s) {
    const size_t n = t.by_status[s];
    r.attempts += n;
    if (s == kOk) r.ok = n;
    else if (s == kCut) r.cut = n;
    else if (s == kLaunchError) r.launch_error = n;
    else if (s == kQuarantined) r.quarantined = n;
    else r.other_fail += n;
  }
  const double attempts = static_cast<double>(r.attempts);
  r.cut_pct = 100.0 * static_cast<double>(r.cut) / attempts;
  r.fail_pct = 100.0 * static_cast<double>(r.launch_error + r.quarantined + r.other_fail) / attempts;
  return r;
}

}  // namespace

void validate(const FailureOptions& o) {
  if (o.min_attempts < 1) throw Error("--min-attempts must be at least 1");
}

FailureStudy failure_study(const Registry& reg, const FailureOptions& o, const AnalysisProgress& progress) {
  validate(o);
  MeasurementFilter filter;
  filter.set = o.set;
  FailureStudy out;
  std::map<Key, Tally> tallies;
  std::set<Layout> layouts;
  size_t seen = 0;
  scan_kernel_attempts(reg, filter, [&](const KernelAttempts& a) {
    if (progress && ++seen % 1000 == 0) progress("reading kernel attempts", seen, 0);
    if (!o.layouts.empty() && std::find(o.layouts.begin(), o.layouts.end(), a.layout) == o.layouts.end()) return;
    const std::optional<KernelDesc> k = describe(a);
    if (!k) {
      ++out.skipped_unknown;
      return;
    }
    layouts.insert(a.layout);
    if (a.by_status[kOk] == 0) {
      out.never_ok.push_back(a);
      out.never_ok.back().canonical = k->canonical();
    }
    for (size_t axis = 0; axis < std::size(kFailureAxes); ++axis) {
      const std::string value = axis_value(kFailureAxes[axis], *k, a);
      for (int layout : {static_cast<int>(a.layout), kAllLayouts}) {
        Tally& t = tallies[Key{layout, axis, value}];
        t.kernels.insert(a.kernel_id);
        if (a.by_status[kOk] > 0) t.ok_kernels.insert(a.kernel_id);
        for (size_t s = 0; s < t.by_status.size(); ++s) t.by_status[s] += a.by_status[s];
      }
    }
  });
  if (tallies.empty()) {
    std::string which;
    for (Layout l : o.layouts) which += (which.empty() ? " of layout " : ", ") + std::string(to_string(l));
    if (!o.set.empty()) which += " in set '" + o.set + "'";
    throw Error("no CUTLASS candidate" + which + " was measured in " + reg.path());
  }
  const Key total{kAllLayouts, 0, "all"};
  out.total = summarise(total, tallies[total]);
  for (const auto& [key, t] : tallies) {
    if (key.layout == kAllLayouts && layouts.size() < 2) continue;  // the pooled rows would repeat the layout's
    FailureRow r = summarise(key, t);
    if (r.attempts >= o.min_attempts) out.rows.push_back(std::move(r));
  }
  auto order = [](const KernelAttempts& a) { return std::pair(a.attempts() - a.by_status[kCut], a.attempts()); };
  std::stable_sort(out.never_ok.begin(), out.never_ok.end(),
                   [&](const KernelAttempts& a, const KernelAttempts& b) { return order(a) > order(b); });
  return out;
}

Table failure_table(std::span<const FailureRow> rows) {
  Table t({"layout", "axis", "value", "kernels", "attempts", "ok", "cut", "launch_error", "quarantined", "other_fail",
           "cut_pct", "fail_pct", "never_ok_kernels"});
  auto count = [](size_t n) -> Cell { return static_cast<int64_t>(n); };
  for (const auto& r : rows)
    t.add_row({r.layout, r.axis, r.value, count(r.kernels), count(r.attempts), count(r.ok), count(r.cut),
               count(r.launch_error), count(r.quarantined), count(r.other_fail), num(r.cut_pct, 3),
               num(r.fail_pct, 3), count(r.never_ok_kernels)});
  return t;
}

Table never_ok_table(std::span<const KernelAttempts> kernels) {
  std::vector<std::string> columns{"kernel_id", "canonical", "layout", "attempts"};
  for (size_t s = 0; s < std::size(kStatuses); ++s)
    if (s != kOk) columns.emplace_back(kStatuses[s]);
  columns.emplace_back("first_error");
  Table t(std::move(columns));
  for (const auto& k : kernels) {
    std::vector<Cell> row{k.kernel_id, k.canonical, std::string(to_string(k.layout)),
                          static_cast<int64_t>(k.attempts())};
    for (size_t s = 0; s < k.by_status.size(); ++s)
      if (s != kOk) row.emplace_back(static_cast<int64_t>(k.by_status[s]));
    row.emplace_back(k.first_error);
    t.add_row(std::move(row));
  }
  return t;
}

}  // namespace cks
