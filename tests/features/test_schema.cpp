// The frozen schema: names, kinds, level sets, hash.
#include <gtest/gtest.h>

#include <cmath>
#include <set>

#include "cks/features.hpp"

using namespace cks;

TEST(FeaturesSchema, NamesUniqueAndEnough) {
  const auto& s = FeatureSchema::get();
  EXPECT_GE(s.size(), 60u);
  std::set<std::string_view> names;
  for (const auto& f : s.features()) {
    EXPECT_TRUE(names.insert(f.name).second) << "duplicate " << f.name;
    EXPECT_FALSE(f.definition.empty()) << f.name;
    EXPECT_FALSE(f.group.empty()) << f.name;
    EXPECT_EQ(f.kind == FeatureKind::categorical, !f.levels.empty()) << f.name;
    // "kernel_id" and "knobs" identify rows in the CLI output; no feature may shadow them.
    EXPECT_NE(f.name, "kernel_id");
    EXPECT_NE(f.name, "knobs");
  }
}

TEST(FeaturesSchema, HashIsGolden) {
  // Changing a name, kind, level list, order or the version changes this value: bump
  // kFeatureSchemaVersion, update docs/features.md and retrain the models, then update it here.
  const auto& s = FeatureSchema::get();
  EXPECT_EQ(s.version(), "cks-features-1");
  EXPECT_EQ(s.size(), 105u);
  EXPECT_EQ(s.hash_hex(), "813978575b28e164");
}

TEST(FeaturesSchema, CategoricalLevelsFollowTheEnums) {
  const auto& s = FeatureSchema::get();
  auto levels = [&](std::string_view name) { return s[s.index(name)].levels; };
  for (Layout l : kLayouts) EXPECT_EQ(levels("layout")[static_cast<int>(l)], to_string(l));
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(levels("mainloop")[i], to_string(static_cast<MainloopSchedule>(i)));
    EXPECT_EQ(levels("epilogue")[i], to_string(static_cast<EpilogueSchedule>(i)));
    EXPECT_EQ(levels("raster")[i], to_string(static_cast<RasterOrder>(i)));
  }
  for (int i = 0; i < 2; ++i) EXPECT_EQ(levels("tile_scheduler")[i], to_string(static_cast<TileSchedulerKind>(i)));
  for (int i = 0; i < 4; ++i) EXPECT_EQ(levels("decomposition")[i], to_string(static_cast<Decomposition>(i)));
  // The resolved decomposition never stays "heuristic": the other three levels, same order.
  ASSERT_EQ(levels("decomposition_resolved").size(), 3u);
  for (int i = 0; i < 3; ++i)
    EXPECT_EQ(levels("decomposition_resolved")[i], to_string(static_cast<Decomposition>(i + 1)));
  EXPECT_EQ(levels("compute_engine")[0], "sm90_wgmma_bf16_f32");
  EXPECT_EQ(levels("elem_a")[0], "bf16");
  EXPECT_EQ(levels("elem_c")[0], "void");
}

TEST(FeaturesSchema, LookupAndLevelNames) {
  const auto& s = FeatureSchema::get();
  EXPECT_EQ(s.index("m"), 0u);
  EXPECT_FALSE(s.find("no_such_feature").has_value());
  EXPECT_THROW(s.index("no_such_feature"), Error);
  const size_t layout = s.index("layout");
  EXPECT_EQ(s.level_name(layout, 3.0f), "tt");
  EXPECT_EQ(s.level_name(layout, 4.0f), "");   // out of range
  EXPECT_EQ(s.level_name(layout, 0.5f), "");   // not a level index
  EXPECT_EQ(s.level_name(layout, -1.0f), "");
  EXPECT_EQ(s.level_name(layout, std::nanf("")), "");
}
