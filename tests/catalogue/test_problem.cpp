// cks::check_problem (issue 18 defect 3, issue 16 deliverable 4): dimensions in [1, 2^31-1] and
// the layout's contiguous dimensions multiples of 8; every other dimension free.
#include <gtest/gtest.h>

#include "cks/catalogue.hpp"
#include "cks/common.hpp"

namespace cks {
namespace {

std::string problem_error(int64_t m, int64_t n, int64_t k, Layout l) {
  try {
    check_problem(m, n, k, l);
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

TEST(ProblemCheck, ContiguousDimensionsFollowTheLayouts) {
  // A row-major => K, column-major => M; B column-major => K, row-major => N; D column-major => M.
  const auto tn = contiguous_dims(Layout::tn), nt = contiguous_dims(Layout::nt), nn = contiguous_dims(Layout::nn),
             tt = contiguous_dims(Layout::tt);
  EXPECT_TRUE(tn.m && !tn.n && tn.k);
  EXPECT_TRUE(nt.m && nt.n && !nt.k);
  EXPECT_TRUE(nn.m && !nn.n && nn.k);
  EXPECT_TRUE(tt.m && tt.n && tt.k);
}

TEST(ProblemCheck, AcceptsEveryDimensionTheLayoutAllows) {
  EXPECT_EQ(problem_error(24, 12, 64, Layout::tn), "");  // N free for TN: decode-sized N
  for (int64_t n = 1; n <= 64; ++n) EXPECT_EQ(problem_error(4096, n, 4096, Layout::tn), "") << n;
  EXPECT_EQ(problem_error(4096, 1, 4096, Layout::nn), "");
  EXPECT_EQ(problem_error(4096, 4096, 1, Layout::nt), "");  // K free for NT
  EXPECT_EQ(problem_error(8, kMaxProblemDim, 8, Layout::tn), "");
  EXPECT_EQ(problem_error(kMaxProblemDim - 7, 8, kMaxProblemDim - 7, Layout::tn), "");
}

TEST(ProblemCheck, RefusesOutOfRangeAndMisalignedDimensions) {
  EXPECT_EQ(problem_error(0, 64, 64, Layout::tn), "M must be positive (got 0)");
  EXPECT_EQ(problem_error(64, -8, 64, Layout::tn), "N must be positive (got -8)");
  EXPECT_EQ(problem_error(int64_t{1} << 31, 64, 64, Layout::tn),
            "M is too large (got 2147483648, at most 2^31-1 = 2147483647)");
  EXPECT_NE(problem_error(64, 64, INT64_MAX, Layout::nt).find("K is too large"), std::string::npos);
  // D is column-major in every kernel: M is always contiguous.
  EXPECT_EQ(problem_error(1, 64, 64, Layout::tn),
            "M must be a multiple of 8 for layout tn (got 1): it is the contiguous dimension of D (MxN, column-major), "
            "whose rows TMA needs 16-byte aligned");
  EXPECT_EQ(problem_error(24, 64, 12, Layout::tn),
            "K must be a multiple of 8 for layout tn (got 12): it is the contiguous dimension of A (MxK, row-major) and "
            "B (KxN, column-major), whose rows TMA needs 16-byte aligned");
  EXPECT_NE(problem_error(64, 12, 64, Layout::nt).find("N must be a multiple of 8 for layout nt"), std::string::npos);
  EXPECT_NE(problem_error(64, 64, 12, Layout::tt).find("K must be a multiple of 8 for layout tt"), std::string::npos);
  EXPECT_NE(problem_error(12, 64, 64, Layout::nn).find("A (MxK, column-major) and D (MxN, column-major)"),
            std::string::npos);
}

}  // namespace
}  // namespace cks
