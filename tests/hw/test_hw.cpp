#include <gtest/gtest.h>

#include "cks/common.hpp"
#include "cks/hw.hpp"

using namespace cks;

TEST(Hw, PresetsLoadAndDeriveRidge) {
  auto h = hw_preset("h200-sxm");
  EXPECT_EQ(h.sm_count, 132);
  EXPECT_NEAR(h.ridge_flops_per_byte(), 989.4 / 4.8, 1e-9);
  // The paper's GH200 ridge: ~247.3 flop/byte.
  EXPECT_NEAR(hw_preset("gh200").ridge_flops_per_byte(), 247.35, 0.01);
  EXPECT_NEAR(hw_preset("h100-sxm").ridge_flops_per_byte(), 295.3, 0.1);
}

TEST(Hw, UnknownPresetIsAClearError) {
  try {
    hw_preset("a100");
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("unknown hardware preset 'a100'"), std::string::npos);
    EXPECT_NE(std::string(e.what()).find("h200-sxm"), std::string::npos);
  }
}

TEST(Hw, NoDeviceHereIsAClearError) {
  // The dev and CI machines have no GPU: reading a device must fail with a clear message.
  EXPECT_THROW(hw_from_device(0), Error);
}
