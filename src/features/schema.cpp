// The frozen feature schema, built from the ordered list in feature_list.hpp.
#include <cmath>

#include "cks/features.hpp"
#include "features/feature_list.hpp"

namespace cks {

using namespace features_detail;

std::string_view to_string(FeatureKind k) { return k == FeatureKind::numeric ? "numeric" : "categorical"; }

FeatureSchema::FeatureSchema() {
#define CKS_SPEC_NUM(name, group, def) specs_.push_back({#name, FeatureKind::numeric, {}, group, def});
#define CKS_SPEC_CAT(name, levels, group, def) specs_.push_back({#name, FeatureKind::categorical, levels, group, def});
  CKS_FEATURE_LIST(CKS_SPEC_NUM, CKS_SPEC_CAT)
#undef CKS_SPEC_NUM
#undef CKS_SPEC_CAT
  // Hash the parts a model depends on: version, then per feature "name|kind|l1,l2,...\n".
  std::string text(kFeatureSchemaVersion);
  text += '\n';
  for (const auto& s : specs_) {
    text += s.name;
    text += '|';
    text += to_string(s.kind);
    text += '|';
    for (size_t i = 0; i < s.levels.size(); ++i) {
      if (i) text += ',';
      text += s.levels[i];
    }
    text += '\n';
  }
  hash_ = fnv1a64(text);
}

const FeatureSchema& FeatureSchema::get() {
  static const FeatureSchema schema;
  return schema;
}

std::string_view FeatureSchema::version() const { return kFeatureSchemaVersion; }

std::optional<size_t> FeatureSchema::find(std::string_view name) const {
  for (size_t i = 0; i < specs_.size(); ++i)
    if (specs_[i].name == name) return i;
  return std::nullopt;
}

size_t FeatureSchema::index(std::string_view name) const {
  if (auto i = find(name)) return *i;
  throw Error("unknown feature '" + std::string(name) + "'");
}

std::string_view FeatureSchema::level_name(size_t feature, float code) const {
  const auto& levels = specs_.at(feature).levels;
  if (!(code >= 0.0f) || code >= static_cast<float>(levels.size()) || code != std::floor(code)) return {};
  return levels[static_cast<size_t>(code)];
}

}  // namespace cks
