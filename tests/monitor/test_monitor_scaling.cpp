// The monitor's bookkeeping is linear in a group's items (issue 18, defect 15: one group of
// 2,000 fake items took 0.83 s, 8,000 took 6.1 s, because every turn of the event loop scanned
// every kernel). Checked by operation counts, not time: CollectSummary::scan_steps counts the
// queue entries and kernels the monitor examined. The timing itself is `cks bench collect`.
#include <gtest/gtest.h>

#include "monitor/collect_fixture.hpp"

namespace cks::test {
namespace {

CollectSummary collect_one_group(int items, double fake_compile_s, int kernels_per_tu) {
  TempDir dir;
  const std::string plan = write_test_plan(dir / "plan.jsonl", {kernel_range_group(512, 256, 2048, 0, items)});
  CollectOptions o = fake_options(plan, dir / "reg.db");
  o.fake_compile_s = fake_compile_s;
  o.kernels_per_tu = kernels_per_tu;
  const CollectSummary s = collect(o);
  EXPECT_TRUE(s.complete());
  EXPECT_EQ(s.rows.at("ok"), static_cast<size_t>(items));
  return s;
}

TEST(MonitorScaling, WorkPerItemDoesNotGrowWithTheGroup) {
  for (int items : {300, 1200}) {
    const CollectSummary s = collect_one_group(items, 0, 8);
    EXPECT_LE(s.scan_steps, 4u * static_cast<size_t>(items)) << items << " items";
  }
}

TEST(MonitorScaling, LibrariesArrivingWhileMeasuringKeepPickingWorkCheap) {
  // Compiles lag behind the GPU: batches become ready one by one, in the order of their best
  // item, while the worker waits for them.
  for (int items : {200, 800}) {
    const CollectSummary s = collect_one_group(items, 0.002, 8);
    EXPECT_LE(s.scan_steps, 40u * static_cast<size_t>(items)) << items << " items";
  }
}

}  // namespace
}  // namespace cks::test
