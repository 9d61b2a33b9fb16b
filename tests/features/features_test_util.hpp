// Helpers for the feature tests: one row by feature name, relative float comparison.
#pragma once
#include <gtest/gtest.h>

#include <cmath>
#include <string_view>
#include <vector>

#include "cks/features.hpp"

namespace cks::test {

struct Row {
  std::vector<float> v;
  float operator[](std::string_view name) const { return v.at(FeatureSchema::get().index(name)); }
};

inline Row feature_row(const Problem& p, const KernelDesc& k, const RuntimeKnobs& knobs = {},
                       const HardwareDesc& hw = hw_preset("h200-sxm")) {
  Row r;
  r.v.resize(FeatureSchema::get().size());
  compute_features(p, k, knobs, hw, r.v.data());
  return r;
}

inline KernelDesc kernel(int tm, int tn, int tk, int cm, int cn, int stages, MainloopSchedule ml,
                         EpilogueSchedule epi, TileSchedulerKind sched, Layout layout = Layout::tn) {
  KernelDesc k;
  k.layout = layout;
  k.tm = tm, k.tn = tn, k.tk = tk, k.cm = cm, k.cn = cn, k.stages = stages;
  k.mainloop = ml, k.epilogue = epi, k.scheduler = sched;
  return k;
}

// Features are stored as float: compare to the double reference with a relative tolerance.
#define EXPECT_FEAT(row, name, expected)                                                               \
  do {                                                                                                \
    const double e_ = (expected);                                                                     \
    EXPECT_NEAR((row)[name], e_, 2e-6 * std::max(1.0, std::fabs(e_))) << "feature " << (name);        \
  } while (0)

}  // namespace cks::test
