// The monitor's compile batching and its fake compile source.
#include <gtest/gtest.h>

#include <set>
#include <thread>
#include <tuple>

#include "monitor/collect_fixture.hpp"
#include "monitor/compile_source.hpp"

namespace cks::test {
namespace {

using monitor::KernelToBuild;

KernelToBuild kernel(Layout layout, int tm, int tn, int stages) {
  KernelDesc d;
  d.layout = layout;
  d.tm = tm;
  d.tn = tn;
  d.stages = stages;
  return {d.id(), d};
}

TEST(MonitorCompileBatches, BalancedTuSizeFillsEveryWaveOfJobs) {
  // Lease 14: 262 kernels, 16 jobs, at most 12 per TU: two waves either way, so 32 TUs of 9
  // instead of 16 + 6 TUs of 12 (the last wave mostly idle).
  EXPECT_EQ(monitor::balanced_per_tu(262, 16, 12), 9u);
  EXPECT_EQ(monitor::balanced_per_tu(16 * 12, 16, 12), 12u);  // exactly one full wave
  EXPECT_EQ(monitor::balanced_per_tu(900, 16, 12), 12u);      // 5 waves of full TUs
  EXPECT_EQ(monitor::balanced_per_tu(20, 16, 12), 2u);        // one wave: 10 TUs of 2
  EXPECT_EQ(monitor::balanced_per_tu(3, 16, 12), 1u);
  EXPECT_EQ(monitor::balanced_per_tu(0, 16, 12), 12u);
  EXPECT_EQ(monitor::balanced_per_tu(100, 0, 0), 1u);  // degenerate arguments stay valid
  for (size_t n : {1u, 7u, 191u, 193u, 1000u})
    for (size_t j : {1u, 4u, 16u})
      for (size_t m : {1u, 8u, 12u}) {
        const size_t per = monitor::balanced_per_tu(n, j, m);
        ASSERT_GE(per, 1u);
        ASSERT_LE(per, m);
        const size_t waves = (n + j * m - 1) / (j * m), tus = (n + per - 1) / per;
        EXPECT_LE(tus, waves * j) << n << " " << j << " " << m;  // never more waves than needed
      }
}

// Lease 15: runs of one tier and layout never share a TU, so a size balanced for the total
// (150 kernels: 10) left 17 TUs with remainders of 1 (two waves on 16 jobs); sized for the runs,
// 15 TUs of 10-11 compile in one wave.
TEST(MonitorCompileBatches, TuSizeBalancesTheRunsOfTiersAndLayouts) {
  EXPECT_EQ(monitor::balanced_per_tu(std::vector<size_t>{61, 41, 48}, 16, 12), 11u);
  EXPECT_EQ(monitor::balanced_per_tu(std::vector<size_t>{262}, 16, 12), monitor::balanced_per_tu(262, 16, 12));
  EXPECT_EQ(monitor::balanced_per_tu(std::vector<size_t>{}, 16, 12), 12u);
  std::vector<KernelToBuild> kernels;
  std::vector<size_t> rank;
  const std::vector<std::tuple<Layout, size_t, int>> runs{{Layout::tn, 0, 61}, {Layout::nt, 0, 41}, {Layout::tn, 1, 48}};
  for (const auto& [layout, tier, n] : runs)
    for (int i = 0; i < n; ++i) {
      kernels.push_back(kernel(layout, 64 + 8 * i, 128, 2 + static_cast<int>(tier)));
      rank.push_back((tier << 32) | kernels.size());
    }
  const auto batches = monitor::make_batches(kernels, rank, 12, 16);
  ASSERT_EQ(batches.size(), 6u + 4u + 5u) << "one wave of 16 jobs";
  size_t total = 0;
  for (const auto& b : batches) {
    EXPECT_GE(b.size(), 8u) << "no remainder TUs";
    EXPECT_LE(b.size(), 11u);
    for (const auto& k : b) EXPECT_EQ(k.desc->layout, b.front().desc->layout);
    total += b.size();
  }
  EXPECT_EQ(total, kernels.size());
  // Without jobs the size is per_batch, still evenly cut: 13 kernels at 12 are TUs of 7 and 6.
  const auto fixed = monitor::make_batches(std::vector<KernelToBuild>(kernels.begin(), kernels.begin() + 13),
                                           std::vector<size_t>(rank.begin(), rank.begin() + 13), 12);
  ASSERT_EQ(fixed.size(), 2u);
  EXPECT_EQ(fixed[0].size() + fixed[1].size(), 13u);
  EXPECT_GE(std::min(fixed[0].size(), fixed[1].size()), 6u);
}

TEST(MonitorCompileBatches, ShareLayoutAndTileAndFollowTheRanking) {
  // Interleaved input: two layouts, two tiles, three stage counts each.
  std::vector<KernelToBuild> kernels;
  std::vector<size_t> rank;
  for (int s : {2, 3, 4})
    for (Layout l : {Layout::nt, Layout::tn})
      for (int tile : {64, 128}) {
        kernels.push_back(kernel(l, tile, tile, s));
        // The tn 128x128 kernels are the most promising.
        rank.push_back(l == Layout::tn && tile == 128 ? static_cast<size_t>(s) : 100 + kernels.size());
      }
  const auto batches = monitor::make_batches(kernels, rank, 3);
  ASSERT_EQ(batches.size(), 4u);
  size_t total = 0;
  for (const auto& b : batches) {
    ASSERT_LE(b.size(), 3u);
    std::set<std::tuple<Layout, int, int>> shapes;
    for (const auto& k : b) shapes.insert({k.desc->layout, k.desc->tm, k.desc->tn});
    EXPECT_EQ(shapes.size(), 1u) << "a batch holds one layout and one tile here";
    total += b.size();
  }
  EXPECT_EQ(total, kernels.size());
  EXPECT_EQ(batches[0][0].desc->layout, Layout::tn);
  EXPECT_EQ(batches[0][0].desc->tm, 128) << "the batch with the best-ranked kernels is compiled first";
}

TEST(MonitorCompileBatches, FakeSourceReleasesBatchesInTurnAndFailsFaultyKernels) {
  // 0.5 s per batch: batch 1 is ready at 0.5 s, batch 2 at 1.0 s (wide margins on a loaded machine).
  auto source = monitor::make_fake_source(worker::fake::FaultSpec::parse("compile_error@" + fake_kernel(2)), 0.5);
  const auto t0 = std::chrono::steady_clock::now();
  source->submit({{fake_kernel(1), std::nullopt}, {fake_kernel(2), std::nullopt}});
  source->submit({{fake_kernel(3), std::nullopt}});
  EXPECT_EQ(source->pending(), 2u);
  EXPECT_FALSE(source->poll()) << "nothing is ready before its compile time";
  std::this_thread::sleep_until(t0 + std::chrono::milliseconds(650));
  auto first = source->poll();
  ASSERT_TRUE(first);
  EXPECT_FALSE(source->poll()) << "the second batch follows one compile time later";
  ASSERT_EQ(first->kernels.size(), 2u);
  EXPECT_EQ(first->kernels[0].status, "ok");
  EXPECT_EQ(first->kernels[0].index, 0);
  EXPECT_EQ(first->kernels[1].status, "compile_error");
  EXPECT_TRUE(first->lib_path.empty());
  std::this_thread::sleep_until(t0 + std::chrono::milliseconds(1100));
  auto second = source->poll();
  ASSERT_TRUE(second);
  EXPECT_EQ(second->kernels[0].kernel_id, fake_kernel(3));
  EXPECT_EQ(source->pending(), 0u);
}

}  // namespace
}  // namespace cks::test
