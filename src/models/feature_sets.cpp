// Feature families and feature sets (the feature-set ablation of issue 6, docs/hpo.md): every
// schema column belongs to one family, mapped from the schema's `group` strings
// (src/features/feature_list.hpp) onto the paper's structural core, architecture descriptors and
// derived groups. A feature set is "full" or families joined by '+'.
#include <algorithm>

#include "cks/models.hpp"

namespace cks {

namespace {

constexpr std::array<std::string_view, 8> kFamilies{"core",    "arch", "waves", "intensity",
                                                    "smem",    "balance", "fill", "estimate"};

std::string_view family_of(const FeatureSpec& f) {
  const std::string_view g = f.group, n = f.name;
  if (g == "problem" || g == "kernel") return "core";
  if (g == "knobs") {
    // The knob settings identify the candidate (structural); their resolution by the scheduler
    // depends on the problem (derived, like decomposition_resolved in "waves").
    return n == "raster_along_m" || n == "swizzle_eff" ? "waves" : "core";
  }
  if (g == "hardware") return "arch";
  if (g == "grid" || g == "waves") return "waves";
  if (g == "cluster") return n == "multicast_load_ratio" ? "intensity" : "waves";
  if (g == "intensity" || g == "cache") return "intensity";
  if (g == "smem" || g == "residency" || g == "registers") return "smem";
  if (g == "pipeline") return n == "pipeline_fill" || n == "pipeline_amortization" ? "fill" : "balance";
  if (g == "estimate") return "estimate";
  throw Error("feature '" + std::string(n) + "' has group '" + std::string(g) + "', which no feature family covers");
}

std::string families_text() {
  std::string s;
  for (auto f : kFamilies) s += (s.empty() ? "" : ", ") + std::string(f);
  return s;
}

}  // namespace

std::vector<std::string_view> feature_families() { return {kFamilies.begin(), kFamilies.end()}; }

std::string_view feature_family(size_t column) { return family_of(FeatureSchema::get()[column]); }

std::string canonical_feature_set(std::string_view set) {
  if (set == "full" || set.empty()) return "full";
  std::array<bool, kFamilies.size()> on{};
  size_t pos = 0;
  while (pos <= set.size()) {
    size_t end = set.find('+', pos);
    if (end == std::string_view::npos) end = set.size();
    const std::string_view part = set.substr(pos, end - pos);
    const auto it = std::find(kFamilies.begin(), kFamilies.end(), part);
    if (it == kFamilies.end())
      throw Error("unknown feature family '" + std::string(part) + "' in feature set '" + std::string(set) +
                  "' (expected full, or families joined by '+': " + families_text() + ")");
    on[static_cast<size_t>(it - kFamilies.begin())] = true;
    pos = end + 1;
  }
  if (std::all_of(on.begin(), on.end(), [](bool b) { return b; })) return "full";
  std::string out;
  for (size_t i = 0; i < kFamilies.size(); ++i)
    if (on[i]) out += (out.empty() ? "" : "+") + std::string(kFamilies[i]);
  return out;
}

std::vector<bool> feature_mask(std::string_view set) {
  const std::string canonical = canonical_feature_set(set);
  const FeatureSchema& schema = FeatureSchema::get();
  std::vector<bool> kept(schema.size(), true);
  if (canonical == "full") return kept;
  std::vector<std::string> parts;
  for (size_t pos = 0; pos <= canonical.size();) {
    size_t end = canonical.find('+', pos);
    if (end == std::string::npos) end = canonical.size();
    parts.push_back(canonical.substr(pos, end - pos));
    pos = end + 1;
  }
  for (size_t c = 0; c < schema.size(); ++c)
    kept[c] = std::find(parts.begin(), parts.end(), family_of(schema[c])) != parts.end();
  return kept;
}

}  // namespace cks
