// Enumeration, identity and runtime knobs of the kernel catalogue.
#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <thread>

#include "catalogue/model.hpp"
#include "cks/catalogue.hpp"
#include "cks/common.hpp"

using namespace cks;

TEST(CatalogueEnumeration, EveryLayoutHasAtLeast3000KernelsAndABoundedCandidateSet) {
  for (Layout l : kLayouts) {
    const Catalogue& cat = Catalogue::get(l);
    EXPECT_EQ(cat.layout(), l);
    EXPECT_GE(cat.kernels().size(), 3000u) << to_string(l);
    EXPECT_GT(cat.candidates().size(), cat.kernels().size()) << to_string(l);
    // The selector scores every candidate of a layout: keep it to a few hundred thousand.
    EXPECT_LE(cat.candidates().size(), 500000u) << to_string(l);
  }
}

TEST(CatalogueEnumeration, KernelsAreValidSortedUniqueAndDeterministic) {
  const HardwareDesc& hw = default_hw();
  for (Layout l : kLayouts) {
    const Catalogue a = Catalogue::build(l, hw);
    const Catalogue b = Catalogue::build(l, hw);
    ASSERT_EQ(a.kernels(), b.kernels());
    ASSERT_EQ(a.candidates().size(), b.candidates().size());
    std::set<std::string> ids;
    for (size_t i = 0; i < a.kernels().size(); ++i) {
      const KernelDesc& k = a.kernels()[i];
      ASSERT_EQ(k.layout, l);
      ASSERT_EQ(invalid_reason(k, hw), "") << k.canonical();
      if (i > 0) {
        ASSERT_LT(a.kernels()[i - 1].canonical(), k.canonical());
      }
      ids.insert(k.id());
    }
    EXPECT_EQ(ids.size(), a.kernels().size()) << "kernel ID collision in " << to_string(l);
  }
}

TEST(CatalogueEnumeration, CandidatesAreEveryKernelTimesItsKnobSettingsInOrder) {
  const Catalogue& cat = Catalogue::get(Layout::tn);
  size_t c = 0;
  for (uint32_t i = 0; i < cat.kernels().size(); ++i)
    for (const auto& knobs : knob_settings(cat.kernels()[i])) {
      ASSERT_LT(c, cat.candidates().size());
      ASSERT_EQ(cat.candidates()[c].kernel, i);
      ASSERT_EQ(cat.candidates()[c].knobs, knobs);
      ++c;
    }
  EXPECT_EQ(c, cat.candidates().size());
}

TEST(CatalogueEnumeration, CoversEveryAxisValue) {
  std::set<int> tm, tn, tk, stages;
  std::set<std::pair<int, int>> clusters;
  std::set<std::tuple<MainloopSchedule, EpilogueSchedule, TileSchedulerKind>> combos;
  for (const auto& k : Catalogue::get(Layout::nt).kernels()) {
    tm.insert(k.tm), tn.insert(k.tn), tk.insert(k.tk), stages.insert(k.stages);
    clusters.insert({k.cm, k.cn});
    combos.insert({k.mainloop, k.epilogue, k.scheduler});
  }
  EXPECT_EQ(tm, (std::set<int>{64, 128, 256}));
  EXPECT_EQ(tn.size(), 31u);  // 16..256 step 8 (N-major B)
  EXPECT_EQ(*tn.begin(), 16);
  EXPECT_EQ(*tn.rbegin(), 256);
  EXPECT_EQ(tk, (std::set<int>{32, 64, 128, 256}));
  EXPECT_EQ(stages, (std::set<int>{0, 2, 3, 4}));
  EXPECT_EQ(clusters.size(), std::size(catalogue::kClusterShapes));
  EXPECT_EQ(combos.size(), std::size(catalogue::kScheduleCombos));
  // A K-major B takes only the multiples of 16.
  std::set<int> tn_k_major;
  for (const auto& k : Catalogue::get(Layout::tn).kernels()) tn_k_major.insert(k.tn);
  EXPECT_EQ(tn_k_major.size(), 16u);
  EXPECT_TRUE(std::all_of(tn_k_major.begin(), tn_k_major.end(), [](int n) { return n % 16 == 0; }));
}

TEST(CatalogueEnumeration, GetIsCachedAndThreadSafe) {
  std::vector<const Catalogue*> seen(8);
  std::vector<std::thread> threads;
  for (size_t i = 0; i < seen.size(); ++i)
    threads.emplace_back([&, i] { seen[i] = &Catalogue::get(Layout::nt); });
  for (auto& t : threads) t.join();
  for (auto* p : seen) EXPECT_EQ(p, &Catalogue::get(Layout::nt));
}

TEST(CatalogueIds, GoldenIdIsStable) {
  KernelDesc k{Layout::tn, 128, 128, 64, 2, 1, 0, MainloopSchedule::cooperative, EpilogueSchedule::tma_ws_cooperative,
               TileSchedulerKind::persistent};
  EXPECT_EQ(k.canonical(), "sm90_bf16_tn_128x128x64_2x1x1_s0_cooperative+tma_ws_cooperative+persistent");
  EXPECT_EQ(k.id(), "k00c05864eb799421");  // fnv1a64 of the canonical text
}

TEST(CatalogueIds, CanonicalRoundTripsAndFindsEveryKernel) {
  for (Layout l : kLayouts) {
    const Catalogue& cat = Catalogue::get(l);
    for (uint32_t i = 0; i < cat.kernels().size(); ++i) {
      const KernelDesc& k = cat.kernels()[i];
      ASSERT_EQ(KernelDesc::from_canonical(k.canonical()), k) << k.canonical();
      ASSERT_EQ(cat.find(k.id()), std::optional<uint32_t>(i)) << k.canonical();
    }
  }
  EXPECT_EQ(Catalogue::get(Layout::tn).find("k0000000000000000"), std::nullopt);
  EXPECT_THROW(KernelDesc::from_canonical("sm90_bf16_tn_128x128_1x1x1_s0_cooperative+no_smem+persistent"), Error);
}

// Swapped kernels (D^T = B^T A^T with a row-major D^T) live outside the catalogues: every
// unswapped ID is unchanged, a swapped kernel's canonical text ends in "+swap", and find_kernel
// resolves its ID in its own layout (the swap of its CUTLASS kernel's).
TEST(CatalogueIds, SwappedKernelsAreFoundByIdOutsideTheCatalogue) {
  for (Layout l : kLayouts) {
    const Catalogue& base = Catalogue::get(swap_layout(l));
    for (uint32_t i = 0; i < base.kernels().size(); i += 997) {
      const KernelDesc& k = base.kernels()[i];
      EXPECT_EQ(k.canonical().find("+swap"), std::string::npos);
      const KernelDesc t = k.swapped_twin();
      EXPECT_TRUE(t.swapped);
      EXPECT_EQ(t.layout, l);
      EXPECT_EQ(t.kernel_layout(), k.layout);
      EXPECT_TRUE(t.canonical().ends_with("+swap"));
      if (l == k.layout) EXPECT_EQ(t.canonical(), k.canonical() + "+swap");
      EXPECT_EQ(t.unswapped(), k);
      EXPECT_EQ(KernelDesc::from_canonical(t.canonical()), t);
      EXPECT_EQ(find_kernel(l, t.id()), std::optional<KernelDesc>(t)) << t.canonical();
      EXPECT_EQ(Catalogue::get(l).find(t.id()), std::nullopt);  // not a catalogue kernel
      EXPECT_EQ(find_kernel(k.layout, k.id()), std::optional<KernelDesc>(k));
      EXPECT_EQ(invalid_reason(t, default_hw()), "") << t.canonical();
      EXPECT_THROW(t.swapped_twin(), Error);
    }
  }
  EXPECT_EQ(swap_layout(Layout::nn), Layout::tt);
  EXPECT_EQ(swap_layout(Layout::tt), Layout::nn);
  EXPECT_EQ(swap_layout(Layout::tn), Layout::tn);
  EXPECT_EQ(swap_layout(Layout::nt), Layout::nt);
  // A tt kernel's swapped twin belongs to nn, not tt.
  const KernelDesc tt = Catalogue::get(Layout::tt).kernels().front();
  EXPECT_EQ(find_kernel(Layout::tt, tt.swapped_twin().id()), std::nullopt);
  EXPECT_EQ(find_kernel(Layout::tn, "k0000000000000000"), std::nullopt);
  EXPECT_THROW(KernelDesc::from_canonical(tt.canonical() + "+swop"), Error);
  EXPECT_THROW(KernelDesc::from_canonical(tt.canonical() + "+swap+swap"), Error);
}

// Validity follows the CUTLASS kernel's layout: a swapped nn kernel runs a tt kernel, whose
// N-major B takes a tile N of 24; a swapped tt kernel runs an nn kernel, whose K-major B does not.
TEST(CatalogueIds, SwappedKernelValidityIsTheirCutlassKernels) {
  const auto k = KernelDesc::from_canonical("sm90_bf16_tt_128x24x64_1x1x1_s0_pingpong+tma_ws+persistent");
  EXPECT_EQ(invalid_reason(k, default_hw()), "");
  EXPECT_EQ(invalid_reason(k.swapped_twin(), default_hw()), "");
  auto t = k.swapped_twin();
  t.layout = Layout::tt;  // now runs an nn kernel
  EXPECT_NE(invalid_reason(t, default_hw()).find("K-major B (layout nn)"), std::string::npos);
}

// Sliced-K kernels (deterministic parallel split-K: a batched GEMM over K slices into FP32
// partials, then a fixed-order reduction) live outside the catalogues too: the no-smem, non-stream-K
// kernels of a layout and of its swapped twins each have one, "+slicek" ends its canonical text
// (after "+swap"), and find_kernel resolves its ID; the other kernels have none.
TEST(CatalogueIds, SlicedKernelsAreFoundByIdOutsideTheCatalogue) {
  for (Layout l : kLayouts) {
    size_t sliced = 0;
    // The layout's own kernels, then the swapped kernels of the layout (twins of swap_layout(l)'s).
    for (const bool twin : {false, true}) {
      const Catalogue& base = Catalogue::get(twin ? swap_layout(l) : l);
      for (uint32_t i = 0; i < base.kernels().size(); i += 499) {
        const KernelDesc k = twin ? base.kernels()[i].swapped_twin() : base.kernels()[i];
        ASSERT_EQ(k.layout, l);
        const bool admits = k.epilogue == EpilogueSchedule::no_smem && k.scheduler == TileSchedulerKind::persistent;
        EXPECT_EQ(k.sliced_unsupported().empty(), admits) << k.canonical();
        if (!admits) {
          EXPECT_THROW(k.sliced_variant(), Error) << k.canonical();
          continue;
        }
        const KernelDesc s = k.sliced_variant();
        ++sliced;
        EXPECT_TRUE(s.sliced);
        EXPECT_EQ(s.canonical(), k.canonical() + "+slicek");
        EXPECT_NE(s.id(), k.id());
        EXPECT_EQ(KernelDesc::from_canonical(s.canonical()), s);
        EXPECT_EQ(find_kernel(l, s.id()), std::optional<KernelDesc>(s)) << s.canonical();
        EXPECT_EQ(Catalogue::get(l).find(s.id()), std::nullopt);
        EXPECT_EQ(invalid_reason(s, default_hw()), "") << s.canonical();
        EXPECT_THROW(s.sliced_variant(), Error);
      }
    }
    EXPECT_GT(sliced, 10u) << to_string(l);
  }
  const auto coop = KernelDesc::from_canonical("sm90_bf16_tn_128x32x128_1x1x1_s0_cooperative+no_smem+persistent+swap+slicek");
  EXPECT_TRUE(coop.swapped && coop.sliced);
  EXPECT_EQ(coop.canonical(), "sm90_bf16_tn_128x32x128_1x1x1_s0_cooperative+no_smem+persistent+swap+slicek");
  // The suffixes come in one order, once each, and only where a sliced-K kernel exists.
  EXPECT_THROW(KernelDesc::from_canonical("sm90_bf16_tn_128x32x128_1x1x1_s0_cooperative+no_smem+persistent+slicek+swap"), Error);
  EXPECT_THROW(KernelDesc::from_canonical("sm90_bf16_tn_128x32x128_1x1x1_s0_cooperative+no_smem+persistent+slicek+slicek"), Error);
  try {
    KernelDesc::from_canonical("sm90_bf16_tn_128x32x128_1x1x1_s0_cooperative+no_smem+stream_k+slicek");
    ADD_FAILURE() << "a stream-K sliced-K kernel parsed";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("not stream-K"), std::string::npos) << e.what();
  }
  EXPECT_THROW(KernelDesc::from_canonical("sm90_bf16_tn_128x32x128_1x1x1_s0_cooperative+tma_ws_cooperative+persistent+slicek"),
               Error);
  // A descriptor built by hand is checked by the validity rules.
  KernelDesc bad = KernelDesc::from_canonical("sm90_bf16_tn_128x32x128_1x1x1_s0_cooperative+tma_ws_cooperative+persistent");
  bad.sliced = true;
  EXPECT_EQ(catalogue::first_violation(bad, default_hw()).rule, "sliced");
}

// A sliced-K kernel takes split-K with its slice count (2-16), deterministic, raster along M or N
// (the basic kernel: the heuristic only); no swizzle.
TEST(CatalogueKnobs, SlicedKernelsSweepSliceCounts) {
  const auto k = KernelDesc::from_canonical("sm90_bf16_nt_64x32x128_1x1x1_s0_pingpong+no_smem+persistent+swap+slicek");
  const auto knobs = knob_settings(k, KnobScope::measurable);
  ASSERT_EQ(knobs, knob_settings(k, KnobScope::catalogue));
  ASSERT_EQ(knobs.size(), 14u);
  std::set<int> slices;
  for (const auto& kn : knobs) {
    EXPECT_EQ(kn.decomposition, Decomposition::split_k);
    EXPECT_EQ(kn.max_swizzle, 1);
    EXPECT_EQ(kn.reduction, Reduction::deterministic);
    EXPECT_NE(kn.raster, RasterOrder::heuristic);
    slices.insert(kn.splits);
  }
  EXPECT_EQ(slices, (std::set<int>{2, 3, 4, 6, 8, 12, 16}));
  EXPECT_EQ(knobs.front().canonical(), "r=m,s=1,d=sk,k=2");
  const auto basic = KernelDesc::from_canonical("sm90_bf16_tn_64x64x128_1x1x1_s0_tma_ws+no_smem+persistent+slicek");
  const auto bk = knob_settings(basic);
  ASSERT_EQ(bk.size(), 7u);
  for (const auto& kn : bk) EXPECT_EQ(kn.raster, RasterOrder::heuristic);
}

TEST(CatalogueKnobs, BasicKernelAdmitsOnlyTheDefault) {
  KernelDesc k{Layout::tn, 128, 128, 64, 1, 1, 0, MainloopSchedule::tma_ws, EpilogueSchedule::no_smem,
               TileSchedulerKind::persistent};
  const auto knobs = knob_settings(k);
  ASSERT_EQ(knobs.size(), 1u);
  EXPECT_EQ(knobs[0], RuntimeKnobs{});
}

TEST(CatalogueKnobs, PersistentKernelsSweepRasterAndSwizzle) {
  KernelDesc k{Layout::tn, 64, 128, 64, 1, 1, 0, MainloopSchedule::pingpong, EpilogueSchedule::tma_ws,
               TileSchedulerKind::persistent};
  const auto knobs = knob_settings(k);
  ASSERT_EQ(knobs.size(), 8u);
  std::set<std::pair<RasterOrder, int>> seen;
  for (const auto& kn : knobs) {
    EXPECT_EQ(kn.decomposition, Decomposition::heuristic);
    EXPECT_EQ(kn.splits, 1);
    EXPECT_NE(kn.raster, RasterOrder::heuristic);
    seen.insert({kn.raster, kn.max_swizzle});
  }
  EXPECT_EQ(seen.size(), 8u);
  EXPECT_TRUE(seen.count({RasterOrder::along_n, 8}));
}

TEST(CatalogueKnobs, StreamKKernelsSweepDecompositions) {
  KernelDesc k{Layout::tn, 128, 128, 64, 1, 1, 0, MainloopSchedule::cooperative, EpilogueSchedule::no_smem,
               TileSchedulerKind::stream_k};
  const auto knobs = knob_settings(k);
  ASSERT_EQ(knobs.size(), 10u);
  std::set<std::string> canon;
  for (const auto& kn : knobs) {
    canon.insert(kn.canonical());
    EXPECT_EQ(RuntimeKnobs::from_canonical(kn.canonical()), kn);
    // CUTLASS's can_implement: splits > 1 only with the heuristic or split-K decomposition.
    if (kn.splits > 1) {
      EXPECT_EQ(kn.decomposition, Decomposition::split_k);
    }
    EXPECT_NE(kn.decomposition, Decomposition::data_parallel);
  }
  EXPECT_EQ(canon.size(), 10u);
  EXPECT_TRUE(canon.count("r=m,s=1,d=h,k=1"));
  EXPECT_TRUE(canon.count("r=n,s=1,d=streamk,k=1"));
  EXPECT_TRUE(canon.count("r=m,s=1,d=sk,k=8"));
}

TEST(CatalogueKnobs, ReductionIsWrittenOnlyWhenNondeterministic) {
  // Every string measured before the reduction knob existed reads and writes back unchanged.
  for (const char* s : {"r=m,s=2,d=h,k=1", "r=n,s=1,d=sk,k=4", "r=h,s=1,d=streamk,k=1"}) {
    const RuntimeKnobs k = RuntimeKnobs::from_canonical(s);
    EXPECT_EQ(k.reduction, Reduction::deterministic) << s;
    EXPECT_EQ(k.canonical(), s);
  }
  const RuntimeKnobs nd = RuntimeKnobs::from_canonical("r=n,s=1,d=sk,k=16,x=n");
  EXPECT_EQ(nd.reduction, Reduction::nondeterministic);
  EXPECT_EQ(nd.splits, 16);
  EXPECT_EQ(nd.canonical(), "r=n,s=1,d=sk,k=16,x=n");
  EXPECT_EQ(to_string(nd.reduction), "nondeterministic");
  // "x=d" reads as the default and is written as the default.
  EXPECT_EQ(RuntimeKnobs::from_canonical("r=n,s=1,d=sk,k=4,x=d").canonical(), "r=n,s=1,d=sk,k=4");
  // Unknown values, repeated or missing fields are errors, not defaults.
  for (const char* bad : {"r=n,s=1,d=sk,k=4,x=q", "r=n,s=1,d=sk,k=4,x=n,x=n", "r=n,s=1,d=sk,x=n", "r=n,s=1,d=sk,k=4,k=4",
                          "r=n,s=1,d=sk,k=4,y=n"})
    EXPECT_THROW(RuntimeKnobs::from_canonical(bad), Error) << bad;
}

// The opt-in of `cks select --nondeterministic` and the runtime: stream-K kernels take the
// nondeterministic reduction at any setting; a kernel without a reduction keeps its knobs.
TEST(CatalogueKnobs, WithReductionChangesStreamKKernelsOnly) {
  const Catalogue& cat = Catalogue::get(Layout::tn);
  size_t stream_k = 0, other = 0;
  for (const Candidate& c : cat.candidates()) {
    const KernelDesc& k = cat.kernels()[c.kernel];
    const RuntimeKnobs nd = with_reduction(k, c.knobs, Reduction::nondeterministic);
    if (k.scheduler == TileSchedulerKind::stream_k) {
      ++stream_k;
      EXPECT_EQ(nd.reduction, Reduction::nondeterministic);
      EXPECT_EQ(nd.canonical(), c.knobs.canonical() + ",x=n");
      EXPECT_EQ(with_reduction(k, nd, Reduction::deterministic), c.knobs);
      // A measurable setting: plans and `cks emit` take it.
      const auto settings = knob_settings(k, KnobScope::measurable);
      EXPECT_NE(std::find(settings.begin(), settings.end(), nd), settings.end()) << nd.canonical();
    } else {
      ++other;
      EXPECT_EQ(nd, c.knobs);
    }
    if (stream_k > 200 && other > 200) break;
  }
  EXPECT_GT(stream_k, 0u);
  EXPECT_GT(other, 0u);
}
