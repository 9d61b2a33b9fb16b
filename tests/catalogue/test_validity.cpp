// Validity rules: known-valid and known-invalid descriptors with the rule that rejects them.
#include <gtest/gtest.h>

#include "catalogue/model.hpp"
#include "cks/catalogue.hpp"

using namespace cks;

namespace {

KernelDesc desc(std::string_view canonical) { return KernelDesc::from_canonical(canonical); }

struct Case {
  const char* canonical;
  const char* rule;       // "" = valid
  const char* fragment;   // substring of the reason
};

}  // namespace

TEST(CatalogueValidity, KnownDescriptorsGetTheExpectedRule) {
  const Case cases[] = {
      {"sm90_bf16_tn_128x128x64_1x1x1_s0_cooperative+tma_ws_cooperative+persistent", "", ""},
      {"sm90_bf16_tn_128x128x64_2x1x1_s3_cooperative+no_smem+stream_k", "", ""},
      {"sm90_bf16_nt_64x24x64_1x1x1_s0_tma_ws+tma_ws+persistent", "", ""},
      {"sm90_bf16_tt_256x256x64_4x4x1_s0_pingpong+no_smem+persistent", "", ""},  // spills, non-portable: kept
      {"sm90_bf16_tn_192x128x64_1x1x1_s0_pingpong+no_smem+persistent", "tile_m", "tile M 192"},
      {"sm90_bf16_tn_128x8x64_1x1x1_s0_pingpong+no_smem+persistent", "tile_n", "minimum CTA N of 16"},
      {"sm90_bf16_tn_128x12x64_1x1x1_s0_pingpong+no_smem+persistent", "tile_n", "multiple of 8"},
      {"sm90_bf16_tn_128x264x64_1x1x1_s0_pingpong+no_smem+persistent", "tile_n", "[8, 256]"},
      {"sm90_bf16_tn_128x128x48_1x1x1_s0_pingpong+no_smem+persistent", "tile_k", "tile K 48"},
      {"sm90_bf16_tn_128x128x64_3x1x1_s0_pingpong+no_smem+persistent", "cluster_shape", "cluster 3x1"},
      {"sm90_bf16_tn_128x128x64_8x2x1_s0_pingpong+no_smem+persistent", "cluster_shape", "cluster 8x2"},
      {"sm90_bf16_tn_64x128x64_1x1x1_s0_cooperative+no_smem+persistent", "cooperative_tile_m", "% 128"},
      {"sm90_bf16_tn_128x128x64_1x1x1_s0_pingpong+tma_ws_cooperative+persistent", "epilogue_schedule",
       "needs the cooperative mainloop"},
      {"sm90_bf16_tn_128x128x64_1x1x1_s0_cooperative+tma_ws+persistent", "epilogue_schedule", "got cooperative"},
      {"sm90_bf16_tn_128x128x64_1x1x1_s0_pingpong+no_smem+stream_k", "tile_scheduler", "got pingpong"},
      {"sm90_bf16_tn_128x128x64_1x1x1_s0_tma_ws+no_smem+stream_k", "tile_scheduler", "got tma_ws"},
      // T_N % 16 == 8 compiles only with an N-major (row-major) B.
      {"sm90_bf16_tn_128x40x64_1x1x1_s0_cooperative+no_smem+persistent", "tile_n_k_major_b", "layout tn"},
      {"sm90_bf16_nn_128x40x64_1x1x1_s0_pingpong+no_smem+persistent", "tile_n_k_major_b", "N % 16 == 0"},
      {"sm90_bf16_tt_128x40x64_2x1x1_s0_cooperative+tma_ws_cooperative+persistent", "", ""},
      {"sm90_bf16_nn_128x48x64_1x1x1_s0_cooperative+tma_ws_cooperative+persistent", "", ""},
      // Multicast of an N-major B tile of 3 x 64 columns over 2 CTAs works (ran correctly on an H200).
      {"sm90_bf16_nt_128x192x64_2x1x1_s0_cooperative+no_smem+persistent", "", ""},
      {"sm90_bf16_tn_128x128x64_1x1x1_s1_cooperative+no_smem+persistent", "stages_min", "below 2"},
      {"sm90_bf16_tn_256x256x128_1x1x1_s0_cooperative+tma_ws_cooperative+persistent", "stages_min",
       "auto carve-out leaves 1"},
      {"sm90_bf16_tn_128x256x128_1x1x1_s3_cooperative+no_smem+persistent", "smem_capacity", "exceeds the 232448 B"},
      {"sm90_bf16_tn_128x128x64_1x1x1_s6_cooperative+tma_ws_cooperative+persistent", "duplicate_of_auto",
       "auto-stage kernel"},
      {"sm90_bf16_tn_64x64x64_1x1x1_s5_pingpong+no_smem+persistent", "stages_cap", "cap of 4"},
  };
  for (const auto& c : cases) {
    const KernelDesc k = desc(c.canonical);
    const auto v = catalogue::first_violation(k, default_hw());
    EXPECT_EQ(v.rule, c.rule) << c.canonical << ": " << v.reason;
    EXPECT_NE(v.reason.find(c.fragment), std::string::npos) << c.canonical << ": " << v.reason;
    EXPECT_EQ(invalid_reason(k, default_hw()), v.reason);
    const auto& names = catalogue::rule_names();
    if (*c.rule) {
      EXPECT_NE(std::find(names.begin(), names.end(), c.rule), names.end()) << c.rule;
    }
  }
}

TEST(CatalogueValidity, ValidDescriptorsAreExactlyTheCatalogue) {
  // A valid descriptor on one of the catalogue's axes must be enumerated, and vice versa.
  const KernelDesc k = desc("sm90_bf16_nt_64x24x64_1x1x1_s0_tma_ws+tma_ws+persistent");
  EXPECT_TRUE(Catalogue::get(Layout::nt).find(k.id()).has_value());
  const KernelDesc bad = desc("sm90_bf16_tn_64x24x64_1x1x1_s0_tma_ws+tma_ws+persistent");
  EXPECT_FALSE(Catalogue::get(Layout::tn).find(bad.id()).has_value());
}

TEST(CatalogueValidity, SmallerOptInSharedMemoryShrinksTheCatalogue) {
  HardwareDesc small = default_hw();
  small.smem_per_block_optin_bytes = 101376;  // e.g. an SM86-class opt-in limit
  const auto k = desc("sm90_bf16_tn_128x128x64_1x1x1_s0_cooperative+tma_ws_cooperative+persistent");
  EXPECT_EQ(catalogue::first_violation(k, small).rule, "smem_capacity");
  EXPECT_LT(Catalogue::build(Layout::tn, small).kernels().size(), Catalogue::get(Layout::tn).kernels().size());
}
