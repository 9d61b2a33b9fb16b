// The C API checks problems exactly as the CLI does (issue 18 defect 3; issue 16 deliverable 4):
// one rule (cks::check_problem), one message.
#include <gtest/gtest.h>

#include <string>

#include "cks/c_api.h"
#include "common/subprocess.hpp"

namespace {

std::string capi_error(int64_t m, int64_t n, int64_t k, const char* layout) {
  cks_selector_handle h = nullptr;
  EXPECT_EQ(cks_selector_create_static(&h), 0) << cks_last_error();
  cks_selection out[4];
  uint32_t count = 0;
  const int rc = cks_selector_select(h, m, n, k, layout, 4, out, &count);
  const std::string err = rc == 0 ? "" : cks_last_error();
  if (rc == 0) {
    EXPECT_EQ(count, 4u);
  }
  cks_selector_free(h);
  return err;
}

// stdout + stderr of `cks select` (the shipped model) for the problem.
std::string cli_output(int64_t m, int64_t n, int64_t k, const char* layout) {
  cks::RunOptions o;
  o.stderr_to_output = true;
  return cks::run_argv({std::string(CKS_BIN_DIR) + "/cks", "select", "--m", std::to_string(m), "--n", std::to_string(n),
                        "--k", std::to_string(k), "--layout", layout, "--top", "1"},
                       o)
      .output;
}

// Orientations (cks_selector_create_with, $CKS_ORIENTATIONS): with both (the default), M = 136
// leads with a swapped kernel, whose canonical ends "+swap" and whose tile fields are its own
// (the tile N along M: 144 or less, not a 64-row multiple); own ranks the tn catalogue only.
TEST(CApiProblems, OrientationsAndSwappedPicks) {
  for (const char* orient : {"both", "own"}) {
    cks_selector_handle h = nullptr;
    ASSERT_EQ(cks_selector_create_with(nullptr, orient, &h), 0) << cks_last_error();
    cks_selection out[2];
    uint32_t count = 0;
    ASSERT_EQ(cks_selector_select(h, 136, 14336, 5120, "tn", 2, out, &count), 0) << cks_last_error();
    ASSERT_EQ(count, 2u);
    const std::string canonical = out[0].canonical;
    const bool swapped = canonical.size() > 5 && canonical.compare(canonical.size() - 5, 5, "+swap") == 0;
    EXPECT_EQ(swapped, std::string(orient) == "both") << canonical;
    if (swapped) {
      EXPECT_NE(canonical.find("_" + std::to_string(out[0].tile_m) + "x" + std::to_string(out[0].tile_n) + "x"),
                std::string::npos) << canonical << ": the tile fields are the swapped kernel's";
    }
    cks_selector_free(h);
  }
  cks_selector_handle h = nullptr;
  EXPECT_NE(cks_selector_create_with(nullptr, "sideways", &h), 0);
  EXPECT_EQ(std::string(cks_last_error()), "orientations: 'sideways' is not own or both");
  EXPECT_EQ(h, nullptr);
}

TEST(CApiProblems, AcceptsWhatTheLayoutAllows) {
  EXPECT_EQ(capi_error(24, 1, 64, "tn"), "");  // decode-sized N for TN (N is no operand's contiguous dimension)
  EXPECT_EQ(capi_error(4096, 12, 4096, "nn"), "");
  EXPECT_EQ(capi_error(4096, 4096, 12, "nt"), "");
}

TEST(CApiProblems, RefusesWithTheSharedMessage) {
  EXPECT_EQ(capi_error(int64_t{1} << 31, 64, 64, "tn"), "M is too large (got 2147483648, at most 2^31-1 = 2147483647)");
  EXPECT_EQ(capi_error(0, 64, 64, "tn"), "M must be positive (got 0)");
  EXPECT_NE(capi_error(1, 64, 64, "tn").find("M must be a multiple of 8 for layout tn (got 1)"), std::string::npos);
  EXPECT_NE(capi_error(24, 64, 12, "tn").find("K must be a multiple of 8 for layout tn (got 12)"), std::string::npos);
  EXPECT_NE(capi_error(64, 12, 64, "tt").find("N must be a multiple of 8 for layout tt (got 12)"), std::string::npos);
  EXPECT_NE(capi_error(64, 64, -1, "nn").find("K must be positive"), std::string::npos);
}

TEST(CApiProblems, SameMessageAsTheCli) {
  struct P {
    int64_t m, n, k;
    const char* layout;
  };
  for (const P& p : {P{int64_t{1} << 31, 64, 64, "tn"}, P{1, 64, 64, "tn"}, P{24, 64, 12, "tn"}, P{64, 12, 64, "tt"},
                     P{0, 8, 8, "nn"}, P{64, 64, 64, "xy"}}) {
    const std::string capi = capi_error(p.m, p.n, p.k, p.layout);
    ASSERT_FALSE(capi.empty());
    EXPECT_EQ(cli_output(p.m, p.n, p.k, p.layout), "cks: error: " + capi + "\n");
  }
  // What the C API accepts, the CLI accepts.
  EXPECT_EQ(cli_output(24, 1, 64, "tn").find("cks: error"), std::string::npos);
}

}  // namespace
