#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <map>
#include <set>

#include "cks/common.hpp"
#include "cks/shapes.hpp"
#include "shapes/cli_run.hpp"

using namespace cks;

namespace {

const std::vector<BaseShape>& base0() {
  static const auto b = paper_base_shapes(0, default_hw());
  return b;
}

bool in_interior_band(long d) { return d >= 128 && d <= 8192; }
bool interior(const GemmShape& s) { return in_interior_band(s.m) && in_interior_band(s.n) && in_interior_band(s.k); }

}  // namespace

TEST(ShapesPaper, CountsPerConstructionClassAndRegion) {
  std::map<std::pair<ShapeClass, bool>, int> counts;  // (class, interior region)
  for (const auto& b : base0()) ++counts[std::make_pair(b.construction, interior(b.shape))];
  auto count = [&](ShapeClass c, bool in) { return counts[std::make_pair(c, in)]; };
  EXPECT_EQ(base0().size(), 593u);
  EXPECT_EQ(count(ShapeClass::interior, true), 297);
  EXPECT_EQ(count(ShapeClass::interior, false), 0);
  EXPECT_EQ(count(ShapeClass::boundary, false), 172);
  EXPECT_EQ(count(ShapeClass::boundary, true), 0);
  EXPECT_EQ(count(ShapeClass::anchor, true), 47);
  EXPECT_EQ(count(ShapeClass::anchor, false), 45);
  EXPECT_EQ(count(ShapeClass::transition, true), 14);
  EXPECT_EQ(count(ShapeClass::transition, false), 18);
}

TEST(ShapesPaper, SetIsBaseShapesTimesFourLayoutsWithDistinctKeys) {
  const auto groups = make_shape_set("paper", 0, default_hw());
  ASSERT_EQ(groups.size(), 2372u);
  std::set<std::string> keys;
  std::map<Layout, int> per_layout;
  for (const auto& g : groups) {
    keys.insert(g.key());
    ++per_layout[g.layout];
    EXPECT_EQ(g.seed, 0u);
    EXPECT_EQ(g.budget, auto_budget(g.tags));
  }
  EXPECT_EQ(keys.size(), 2372u);
  for (Layout l : kLayouts) EXPECT_EQ(per_layout[l], 593);
  EXPECT_EQ(groups[0].key(), group_key(base0()[0].shape, Layout::tn));
}

TEST(ShapesPaper, DimensionsInDomainAlignedAndDistinct) {
  std::set<GemmShape> seen;
  for (const auto& b : base0()) {
    for (long d : {b.shape.m, b.shape.n, b.shape.k}) {
      EXPECT_GE(d, 32);
      EXPECT_LE(d, 16384);
      EXPECT_EQ(d % 32, 0);
    }
    EXPECT_TRUE(seen.insert(b.shape).second) << "duplicate " << group_key(b.shape, Layout::tn);
  }
}

TEST(ShapesPaper, DeterministicPerSeedAndDifferentAcrossSeeds) {
  const auto again = paper_base_shapes(0, default_hw());
  const auto other = paper_base_shapes(1, default_hw());
  ASSERT_EQ(again.size(), base0().size());
  int same_as_other = 0;
  for (size_t i = 0; i < again.size(); ++i) {
    EXPECT_EQ(again[i].shape, base0()[i].shape);
    EXPECT_EQ(again[i].detail, base0()[i].detail);
    same_as_other += other[i].shape == base0()[i].shape;
  }
  // Only the 8 pinned corners coincide between seeds.
  EXPECT_EQ(same_as_other, 8);
}

TEST(ShapesPaper, BoundaryFamiliesReachTheHull) {
  std::map<std::string, int> families;
  bool full_corner = false;
  for (const auto& b : base0()) {
    if (b.construction != ShapeClass::boundary) continue;
    ++families[b.detail];
    const auto& s = b.shape;
    full_corner |= s.m == 16384 && s.n == 16384 && s.k == 16384;
    if (b.detail == "tall") {
      EXPECT_GE(s.m, 64 * s.n);
    }
    if (b.detail == "wide") {
      EXPECT_GE(s.n, 64 * s.m);
    }
    if (b.detail == "skinny_k") {
      EXPECT_GE(std::min(s.m, s.n), 10 * s.k);
    }
    if (b.detail == "deep_k") {
      EXPECT_GE(s.k, 8 * std::max(s.m, s.n));
    }
  }
  EXPECT_TRUE(full_corner);
  EXPECT_EQ(families["corner"], 8);
  EXPECT_EQ(families["tall"], 30);
  EXPECT_EQ(families["wide"], 30);
  EXPECT_EQ(families["skinny_k"], 30);
  EXPECT_EQ(families["deep_k"], 30);
}

TEST(ShapesPaper, AnchorsVaryOneDimensionOfAPrimaryShape) {
  std::set<GemmShape> primaries;
  for (const auto& b : base0())
    if (b.construction == ShapeClass::interior || b.construction == ShapeClass::boundary) primaries.insert(b.shape);
  for (const auto& b : base0()) {
    if (b.construction != ShapeClass::anchor) continue;
    bool found = false;
    const GemmShape s = b.shape;
    for (const GemmShape& p :
         {GemmShape{s.m * 2, s.n, s.k}, GemmShape{s.m / 2, s.n, s.k}, GemmShape{s.m, s.n * 2, s.k},
          GemmShape{s.m, s.n / 2, s.k}, GemmShape{s.m, s.n, s.k * 2}, GemmShape{s.m, s.n, s.k / 2}})
      found |= primaries.count(p) > 0 && interior(p) == interior(s);
    EXPECT_TRUE(found) << b.detail;
  }
}

TEST(ShapesPaper, TransitionShapesSitAtTheRidgeOrTheLlcBoundary) {
  for (const char* preset : {"h200-sxm", "gh200"}) {
    const HardwareDesc hw = hw_preset(preset);
    int ridge = 0, llc = 0;
    for (const auto& b : paper_base_shapes(7, hw)) {
      if (b.construction != ShapeClass::transition) continue;
      const double M = b.shape.m, N = b.shape.n, K = b.shape.k;
      const double bytes = 2 * (M * K + K * N + M * N);  // bf16 A, B read and D written
      const double intensity = 2 * M * N * K / bytes;
      if (b.detail == "ridge") {
        ++ridge;
        EXPECT_NEAR(intensity / hw.ridge_flops_per_byte(), 1.0, 0.05) << preset;
      } else {
        ++llc;
        EXPECT_EQ(b.detail, "llc");
        EXPECT_NEAR(bytes / hw.l2_bytes, 1.0, 0.05) << preset;
      }
    }
    EXPECT_EQ(ridge, 16);
    EXPECT_EQ(llc, 16);
  }
}

TEST(ShapesTags, HandExamples) {
  const HardwareDesc& hw = default_hw();  // ridge 989.4/4.8 = 206.1 flop/byte, LLC 50 MiB
  auto t = tags_for(4096, 4096, 4096, hw);
  EXPECT_EQ(t.region, Region::interior);
  EXPECT_EQ(t.geometry, Geometry::square);
  EXPECT_EQ(t.size, SizeClass::large);
  EXPECT_EQ(t.regime, Regime::compute_bound);  // I = 4096/3 = 1365
  EXPECT_NEAR(t.intensity, 4096.0 / 3, 1e-9);
  EXPECT_DOUBLE_EQ(t.bytes, 6.0 * 4096 * 4096);
  EXPECT_EQ(auto_budget(t), 2000);

  t = tags_for(16384, 256, 4096, hw);
  EXPECT_EQ(t.region, Region::boundary);
  EXPECT_EQ(t.geometry, Geometry::tall);
  EXPECT_EQ(tags_for(256, 16384, 4096, hw).geometry, Geometry::wide);
  EXPECT_EQ(tags_for(4096, 4096, 64, hw).geometry, Geometry::skinny_k);
  EXPECT_EQ(tags_for(4096, 1024, 4096, hw).geometry, Geometry::tall);    // M = 4N exactly
  EXPECT_EQ(tags_for(4096, 1056, 4096, hw).geometry, Geometry::square);  // just under 4

  // Decode-like GEMM: I = 16*4096*4096 / (16*4096 + 4096^2 + 16*4096) = 15.9 flop/byte.
  t = tags_for(16, 4096, 4096, hw);
  EXPECT_EQ(t.regime, Regime::memory_bound);
  EXPECT_EQ(t.size, SizeClass::small);
  EXPECT_TRUE(t.atypical);
  EXPECT_EQ(auto_budget(t), 3000);

  // Cube of side 3R: I = R exactly at the ridge.
  t = tags_for(618, 618, 618, hw);
  EXPECT_EQ(t.regime, Regime::balanced);
  EXPECT_TRUE(t.near_ridge);
  EXPECT_EQ(budget_reason(t), "atypical");

  // Working set 2(MK + KN + MN) = 50 MiB for a cube of side sqrt(50 MiB / 6) ~ 2956.
  t = tags_for(2944, 2944, 2976, hw);
  EXPECT_TRUE(t.near_llc);
  EXPECT_FALSE(tags_for(2048, 2048, 1024, hw).near_llc);

  t = tags_for(8192, 8192, 8192, hw);
  EXPECT_TRUE(t.largest);
  EXPECT_EQ(auto_budget(t), 1000);
  EXPECT_EQ(tags_for(1536, 1536, 1536, hw).size, SizeClass::medium);
  EXPECT_EQ(tags_for(2048, 2048, 2048, hw).size, SizeClass::large);
  EXPECT_EQ(tags_for(1024, 1024, 992, hw).size, SizeClass::small);
  EXPECT_FALSE(tags_for(8192, 8192, 160, hw).atypical);  // aspect 51
  EXPECT_TRUE(tags_for(8192, 8192, 128, hw).atypical);   // aspect 64
}

TEST(ShapesTags, JsonCarriesTheTags) {
  const auto groups = make_shape_set("paper", 0, default_hw());
  const std::string j = tags_json(groups[0]);
  EXPECT_NE(j.find("\"class\":\"interior\""), std::string::npos);
  EXPECT_NE(j.find("\"geometry\":"), std::string::npos);
  EXPECT_NE(j.find("\"regime\":"), std::string::npos);
}

TEST(ShapesLlm, HeldOutFamiliesShareNoShapeWithTheLlmOrTrainingFamilySets) {
  // The held-out families (set "family", issue 16's second evaluation set) use token counts that
  // no other set uses, so none of their groups is an evaluation-set or training-set shape.
  std::set<std::string> llm, train;
  for (const auto& g : make_shape_set("llm", 0, default_hw())) llm.insert(g.key());
  for (const auto& g : make_shape_set("llm-train", 0, default_hw())) train.insert(g.key());
  const auto family = make_shape_set("family", 0, default_hw());
  ASSERT_GT(family.size(), 500u);
  for (const auto& g : family) {
    EXPECT_EQ(llm.count(g.key()), 0u) << g.key();
    EXPECT_EQ(train.count(g.key()), 0u) << g.key();
    EXPECT_EQ(g.construction, ShapeClass::llm);
    for (long d : {g.shape.m, g.shape.n, g.shape.k}) EXPECT_EQ(d % 8, 0);
  }
  auto has = [&](long m, long n, long k, Layout l) {
    return std::any_of(family.begin(), family.end(), [&](const ShapeGroup& g) { return g.key() == group_key({m, n, k}, l); });
  };
  EXPECT_TRUE(has(24, 5120, 17920, Layout::tn)) << "phi3-medium down_proj, decode";
  EXPECT_TRUE(has(1000, 5760, 2880, Layout::tn)) << "gpt-oss-120b expert gate_up";
  EXPECT_GT(train.size(), 3000u);
}

TEST(ShapesLlm, ContainsTheModelsGemmsOnePerPass) {
  const auto groups = make_shape_set("llm", 3, default_hw());
  std::map<std::string, const ShapeGroup*> by_key;
  for (const auto& g : groups) {
    EXPECT_TRUE(by_key.emplace(g.key(), &g).second) << "duplicate " << g.key();
    EXPECT_EQ(g.construction, ShapeClass::llm);
    EXPECT_EQ(g.seed, 3u);
  }
  auto has = [&](long m, long n, long k, Layout l) { return by_key.count(group_key({m, n, k}, l)) > 0; };
  for (long t : {16L, 128L, 4096L, 16384L}) {
    EXPECT_TRUE(has(t, 4096, 14336, Layout::tn)) << "llama3-8b down_proj fwd, M=" << t;
    EXPECT_TRUE(has(t, 14336, 4096, Layout::nt)) << "llama3-8b down_proj dgrad";
    EXPECT_TRUE(has(14336, 4096, t, Layout::nn)) << "llama3-8b down_proj wgrad";
    EXPECT_TRUE(has(t, 6144, 4096, Layout::tn)) << "llama3-8b qkv: (32 + 2*8) * 128";
    EXPECT_TRUE(has(t, 1280, 8192, Layout::tn)) << "llama3-70b qkv at TP8: (8 + 2*1) * 128";
    EXPECT_TRUE(has(t, 16384, 6656, Layout::tn)) << "llama3-405b down_proj at TP8: 53248/8";
    EXPECT_TRUE(has(t, 576, 7168, Layout::tn)) << "deepseek-v3 kv_a_proj: 512 + 64";
    EXPECT_TRUE(has(t, 4096, 7168, Layout::tn)) << "deepseek-v3 expert gate_up: 2*2048";
    EXPECT_TRUE(has(t, 8, 4096, Layout::tn)) << "mixtral router";
  }
  // Mixtral's experts have Llama-3 8B's MLP dimensions: one group, both sources listed.
  const auto* down = by_key.at(group_key({4096, 4096, 14336}, Layout::tn));
  EXPECT_NE(down->detail.find("llama3-8b:down_proj:fwd:tp1"), std::string::npos);
  EXPECT_NE(down->detail.find("mixtral-8x7b:expert_down:fwd:tp1"), std::string::npos);
  // No layout other than the three passes', every dimension aligned.
  for (const auto& g : groups) {
    EXPECT_NE(g.layout, Layout::tt);
    for (long d : {g.shape.m, g.shape.n, g.shape.k}) EXPECT_EQ(d % 8, 0);
  }
}

TEST(ShapesLlm, BadModelFileIsAClearError) {
  char path[] = "/tmp/cks_llm_models_XXXXXX";
  const int fd = mkstemp(path);
  ASSERT_GE(fd, 0);
  close(fd);
  std::ofstream(path) << R"({"tokens":[16],"tp":[1],"models":[{"name":"x","attention":{"type":"gqa"},"mlp":[]}]})";
  try {
    make_llm_set(path, 0, default_hw());
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("model 'x': missing 'hidden'"), std::string::npos) << e.what();
  }
  std::ofstream(path) << R"({"tokens":[12],"tp":[1],"models":[]})";
  EXPECT_THROW(make_llm_set(path, 0, default_hw()), Error);  // 12 is not 16-byte aligned
  std::remove(path);
  EXPECT_THROW(make_llm_set("/nonexistent/models.json", 0, default_hw()), Error);
}

TEST(ShapesSet, UnknownSetIsAClearError) {
  try {
    make_shape_set("random", 0, default_hw());
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()), "unknown shape set 'random' (expected paper, heldout, llm, llm-train or family)");
  }
}

TEST(ShapesCli, PaperSetPrintsOneRowPerGroup) {
  const auto r = test::run_cks("shapes --set paper --seed 0 --format csv");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(test::count_lines(r.out), 2373u);  // header + 2,372 groups
  EXPECT_EQ(r.out.rfind("key,m,n,k,layout,class,", 0), 0u);
  const auto filtered = test::run_cks("shapes --set paper --layouts tn,nt --format csv");
  EXPECT_EQ(test::count_lines(filtered.out), 1 + 2 * 593u);
}

TEST(ShapesCli, BadInputIsOneErrorLine) {
  for (const char* args : {"shapes --set nope", "shapes --preset a100", "shapes --layouts tn,xx",
                           "shapes --set paper --models /tmp/x.json", "shapes --format xml"}) {
    const auto r = test::run_cks(args);
    EXPECT_NE(r.exit_code, 0) << args;
    EXPECT_EQ(r.err.rfind("cks: error: ", 0), 0u) << args << ": " << r.err;
    EXPECT_EQ(test::count_lines(r.err), 1u) << args << ": " << r.err;
  }
}
