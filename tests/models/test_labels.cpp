// Labels: y = T / T*, bands merged within twice the pooled uncertainty, grades and relevance.
#include <gtest/gtest.h>

#include "cks/models.hpp"

using namespace cks;

TEST(ModelsLabels, BandsOnAHandExample) {
  // Sorted: 100 | 99.9 (gap 0.1 < 2*0.141: same band) | 95, 94.99 (new band, then merged) | 80.
  const std::vector<double> t{95.0, 100.0, 80.0, 99.9, 94.99};
  const std::vector<double> s(5, 0.1);
  const GroupLabels l = label_group(t, s);
  EXPECT_EQ(l.band, (std::vector<int>{1, 0, 2, 0, 1}));
  EXPECT_EQ(l.grade, (std::vector<int>{30, 31, 29, 31, 30}));
  EXPECT_EQ(l.relevance, (std::vector<float>{1, 2, 0, 2, 1}));
  EXPECT_DOUBLE_EQ(l.y[1], 1.0);
  EXPECT_DOUBLE_EQ(l.y[2], 0.8);
}

TEST(ModelsLabels, MergingChainsAndTies) {
  // Each neighbour gap (0.2) is below 2*sqrt(0.1^2+0.1^2) = 0.283: single linkage makes one band
  // even though the ends differ by 0.6.
  EXPECT_EQ(label_group(std::vector<double>{10.0, 9.8, 9.6, 9.4}, std::vector<double>(4, 0.1)).band,
            (std::vector<int>{0, 0, 0, 0}));
  // Without uncertainty every distinct throughput is its own band; equal ones share one.
  EXPECT_EQ(label_group(std::vector<double>{3.0, 2.0, 3.0, 1.0}, std::vector<double>(4, 0.0)).band,
            (std::vector<int>{0, 1, 0, 2}));
  // A gap of exactly twice the pooled sigma separates.
  EXPECT_EQ(label_group(std::vector<double>{10.0, 8.0}, std::vector<double>{std::sqrt(0.5), std::sqrt(0.5)}).band,
            (std::vector<int>{0, 1}));
}

TEST(ModelsLabels, GradesFloorAtZeroAndRelevanceBands) {
  std::vector<double> t;
  for (int i = 0; i < 40; ++i) t.push_back(100.0 - i);
  const GroupLabels l = label_group(t, std::vector<double>(40, 0.0), 3);
  EXPECT_EQ(l.grade[0], kGradeMax);
  EXPECT_EQ(l.grade[31], 0);
  EXPECT_EQ(l.grade[39], 0);
  EXPECT_EQ(l.relevance[0], 3.f);
  EXPECT_EQ(l.relevance[2], 1.f);
  EXPECT_EQ(l.relevance[3], 0.f);
}

TEST(ModelsLabels, SigmaFromTimeAndBadInput) {
  EXPECT_DOUBLE_EQ(throughput_sigma(500.0, 10.0, 0.1), 5.0);
  EXPECT_THROW(label_group(std::vector<double>{}, std::vector<double>{}), Error);
  EXPECT_THROW(label_group(std::vector<double>{1.0}, std::vector<double>{}), Error);
  EXPECT_THROW(label_group(std::vector<double>{0.0}, std::vector<double>{0.0}), Error);
  EXPECT_THROW(label_group(std::vector<double>{1.0}, std::vector<double>{0.0}, 0), Error);
}
