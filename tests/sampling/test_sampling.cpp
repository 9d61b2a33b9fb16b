#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <limits>
#include <map>
#include <set>

#include "cks/common.hpp"
#include "cks/sampling.hpp"
#include "shapes/cli_run.hpp"

using namespace cks;

namespace {

const Catalogue& tn() { return Catalogue::get(Layout::tn); }

using CandidateKey = std::pair<uint32_t, std::string>;  // kernel index, knobs canonical
CandidateKey key_of(const Candidate& c) { return {c.kernel, c.knobs.canonical()}; }

Sample sample_tn(const GemmShape& p, Policy policy, std::optional<int> budget, uint64_t seed = 0, double alpha = 0.75) {
  SampleOptions o;
  o.policy = policy;
  o.budget = budget;
  o.seed = seed;
  o.alpha = alpha;
  return sample_candidates(p, Layout::tn, tn().kernels(), tn().candidates(), o, default_hw());
}

std::vector<CandidateKey> keys(const Sample& s) {
  std::vector<CandidateKey> out;
  for (const auto& r : s.rows) out.push_back(key_of(r.candidate));
  return out;
}

KernelDesc kernel(int tm, int tn_, int tk, int cm, int cn) {
  KernelDesc k;
  k.tm = tm;
  k.tn = tn_;
  k.tk = tk;
  k.cm = cm;
  k.cn = cn;
  return k;
}

}  // namespace

TEST(SamplingScore, HandComputedTerms) {
  const HardwareDesc& hw = default_hw();  // 132 SMs, ridge 206.125, tile reuse needed 98.94 flop/byte
  const double reuse_needed = 989.4e12 / 10.0e12;

  // 4096^3 on 128x256 tiles: 32 x 16 = 512 tiles over 132 SMs -> 4 waves.
  auto t = static_score_terms({4096, 4096, 4096}, kernel(128, 256, 64, 1, 1), RuntimeKnobs{}, hw, 4, false);
  EXPECT_EQ(t.clusters, 512);
  EXPECT_EQ(t.waves, 4);
  EXPECT_DOUBLE_EQ(t.fill, 4096.0 * 4096.0 / (4.0 * 132 * 128 * 256));
  EXPECT_DOUBLE_EQ(t.pipeline, 1.0);
  EXPECT_DOUBLE_EQ(t.tile, (128.0 * 256 / 384) / reuse_needed);
  EXPECT_DOUBLE_EQ(t.cluster_use, 1.0);
  EXPECT_DOUBLE_EQ(t.score, t.fill * t.tile);  // pipeline and cluster_use are 1
  const auto t3 = static_score_terms({4096, 4096, 4096}, kernel(128, 256, 64, 2, 1), RuntimeKnobs{}, hw, 3, false);
  EXPECT_EQ(t3.clusters, 256);  // 2x1 clusters: 66 resident
  EXPECT_EQ(t3.waves, 4);
  EXPECT_DOUBLE_EQ(t3.fill, 4096.0 * 4096.0 / (4.0 * 132 * 128 * 256));
  EXPECT_DOUBLE_EQ(t3.pipeline, 0.75);
  EXPECT_DOUBLE_EQ(t3.score, t3.fill * std::sqrt(0.75) * t3.tile);
  EXPECT_DOUBLE_EQ(static_score_terms({4096, 4096, 4096}, kernel(128, 256, 64, 1, 1), RuntimeKnobs{}, hw, 4, true).tile,
                   0.0);

  // M = 32: an 8x1 cluster launches 8 CTAs for the single tile row: 1/8 of them own a tile, and
  // half the fill of 1x1 (1x1: 32 clusters in one wave; 8x1: 32 clusters on 16 slots -> 2 waves).
  const auto c1 = static_score_terms({32, 4096, 4096}, kernel(64, 128, 64, 1, 1), RuntimeKnobs{}, hw, 4, false);
  const auto c8 = static_score_terms({32, 4096, 4096}, kernel(64, 128, 64, 8, 1), RuntimeKnobs{}, hw, 4, false);
  EXPECT_DOUBLE_EQ(c1.fill, 32.0 * 4096 / (132.0 * 64 * 128));
  EXPECT_EQ(c8.waves, 2);
  EXPECT_DOUBLE_EQ(c8.fill, c1.fill / 2);
  EXPECT_DOUBLE_EQ(c8.cluster_use, 1.0 / 8);
  EXPECT_DOUBLE_EQ(c1.cluster_use, 1.0);
  EXPECT_DOUBLE_EQ(c1.tile, (32.0 * 128 / 160) / reuse_needed);  // tile M clipped to the problem's 32 rows

  // Split-K 4 on one 128x128 tile with K = 8192: 4 work units, partials overhead 4*3*R/K.
  const RuntimeKnobs split4{RasterOrder::along_m, 1, Decomposition::split_k, 4};
  const auto s4 = static_score_terms({128, 128, 8192}, kernel(128, 128, 64, 1, 1), split4, hw, 4, false);
  EXPECT_EQ(s4.clusters, 4);
  EXPECT_DOUBLE_EQ(s4.fill, (4.0 / 132) / (1 + 4.0 * 3 * hw.ridge_flops_per_byte() / 8192));
  // More splits than K iterations (K = 128: 2 iterations): only 2 useful slices, pipeline of 1.
  const RuntimeKnobs split8{RasterOrder::along_m, 1, Decomposition::split_k, 8};
  const auto s8 = static_score_terms({128, 128, 128}, kernel(128, 128, 64, 1, 1), split8, hw, 4, false);
  EXPECT_DOUBLE_EQ(s8.fill, (2.0 / 132) / (1 + 4.0 * 7 * hw.ridge_flops_per_byte() / 128));
  EXPECT_DOUBLE_EQ(s8.pipeline, 0.25);
}

TEST(SamplingScore, RanksSensibleKernelsHighAndAbsurdOnesLow) {
  const HardwareDesc& hw = default_hw();
  const auto ranked = rank_candidates({4096, 4096, 4096}, tn().kernels(), tn().candidates(), hw);
  ASSERT_EQ(ranked.size(), tn().candidates().size());
  bool cooperative = false;
  for (size_t i = 0; i < 200; ++i) {
    const KernelDesc& k = tn().kernels()[tn().candidates()[ranked[i].pool_index].kernel];
    const auto r = resources(k, hw);
    EXPECT_GE(k.tm * k.tn, 128 * 128) << k.canonical();
    EXPECT_GE(r.stages, 3) << k.canonical();
    EXPECT_FALSE(r.spills_expected) << k.canonical();
    cooperative |= k.mainloop == MainloopSchedule::cooperative;
  }
  EXPECT_TRUE(cooperative);
  // Tiny tiles (at most 64x16) sit in the bottom half at 4096^3.
  for (size_t i = 0; i < ranked.size(); ++i) {
    const KernelDesc& k = tn().kernels()[tn().candidates()[ranked[i].pool_index].kernel];
    if (k.tm * k.tn <= 64 * 16) {
      EXPECT_GT(i, ranked.size() / 2) << k.canonical();
    }
  }

  // M = 32: an 8x1 cluster always scores below the same kernel with a 1x1 cluster, and 8x1
  // candidates sit well below the middle of the ranking on average.
  const GemmShape skinny{32, 4096, 4096};
  const auto ranked32 = rank_candidates(skinny, tn().kernels(), tn().candidates(), hw);
  double percentile = 0;
  int n8 = 0;
  for (size_t i = 0; i < ranked32.size(); ++i) {
    const Candidate& c = tn().candidates()[ranked32[i].pool_index];
    KernelDesc k = tn().kernels()[c.kernel];
    if (k.cm != 8 || k.cn != 1) continue;
    percentile += static_cast<double>(i) / ranked32.size();
    ++n8;
    k.cm = 1;
    if (n8 % 97 == 0 && !resources(k, hw).spills_expected) {  // spilling kernels all score 0
      EXPECT_LT(ranked32[i].score, static_score(skinny, k, c.knobs, hw)) << k.canonical();
    }
  }
  ASSERT_GT(n8, 0);
  EXPECT_GT(percentile / n8, 0.6);
}

TEST(SamplingPolicies, BiasedDiverseTakesAlphaOfTheBudgetFromTheTop) {
  const GemmShape p{4096, 4096, 4096};
  const Sample s = sample_tn(p, Policy::biased_diverse, 2000);
  ASSERT_EQ(s.rows.size(), 2000u);
  EXPECT_EQ(s.n_top, 1500);
  EXPECT_EQ(s.n_explore, 500);
  const auto k = keys(s);
  EXPECT_EQ(std::set<CandidateKey>(k.begin(), k.end()).size(), 2000u);

  // Static ranks agree with the full ranking.
  const auto ranked = rank_candidates(p, tn().kernels(), tn().candidates(), default_hw());
  std::map<CandidateKey, long> rank_of;
  for (size_t i = 0; i < ranked.size(); ++i)
    rank_of[key_of(tn().candidates()[ranked[i].pool_index])] = static_cast<long>(i) + 1;
  for (size_t i = 0; i < s.rows.size(); ++i) {
    const auto& r = s.rows[i];
    EXPECT_EQ(r.static_rank, rank_of.at(key_of(r.candidate)));
    if (i < 1500) {
      EXPECT_TRUE(r.from_top);
      EXPECT_EQ(r.static_rank, static_cast<long>(i) + 1);
    } else {
      EXPECT_FALSE(r.from_top);
      EXPECT_GT(r.static_rank, 1500);
      EXPECT_GT(r.static_rank, s.rows[i - 1].static_rank);
    }
  }
  // Exploration reaches across the ranking, not just below the top.
  EXPECT_GT(s.rows.back().static_rank, static_cast<long>(ranked.size()) / 2);
}

TEST(SamplingPolicies, TopIsTheTopBOfTheRanking) {
  const GemmShape p{1024, 8192, 512};
  const Sample s = sample_tn(p, Policy::top, 700);
  const auto ranked = rank_candidates(p, tn().kernels(), tn().candidates(), default_hw());
  ASSERT_EQ(s.rows.size(), 700u);
  for (size_t i = 0; i < s.rows.size(); ++i) {
    EXPECT_EQ(key_of(s.rows[i].candidate), key_of(tn().candidates()[ranked[i].pool_index]));
    EXPECT_DOUBLE_EQ(s.rows[i].score, ranked[i].score);
    EXPECT_TRUE(s.rows[i].from_top);
  }
}

TEST(SamplingPolicies, DrawsAreSeededPerGroup) {
  const GemmShape p{2048, 1024, 4096};
  const auto a = keys(sample_tn(p, Policy::uniform, 300, 5));
  EXPECT_EQ(a, keys(sample_tn(p, Policy::uniform, 300, 5)));
  EXPECT_NE(a, keys(sample_tn(p, Policy::uniform, 300, 6)));
  EXPECT_EQ(std::set<CandidateKey>(a.begin(), a.end()).size(), 300u);
  for (const auto& r : sample_tn(p, Policy::uniform, 300, 5).rows) EXPECT_FALSE(r.from_top);
  // Same seed, another group: an independent draw (compare the explored ranks).
  auto ranks = [](const Sample& s) {
    std::vector<long> out;
    for (const auto& r : s.rows) out.push_back(r.static_rank);
    return out;
  };
  EXPECT_NE(ranks(sample_tn(p, Policy::biased_diverse, 400, 5)),
            ranks(sample_tn({2048, 1024, 4096 + 32}, Policy::biased_diverse, 400, 5)));
  EXPECT_NE(sample_stream_seed(5, p, Layout::tn), sample_stream_seed(5, p, Layout::nt));
}

TEST(SamplingPolicies, WholePoolWhenItIsSmallerThanTheBudget) {
  const std::vector<Candidate> pool(tn().candidates().begin() + 1000, tn().candidates().begin() + 1040);
  SampleOptions o;  // auto budget (2000), biased-diverse
  const Sample s = sample_candidates({4096, 4096, 4096}, Layout::tn, tn().kernels(), pool, o, default_hw());
  EXPECT_EQ(s.requested_budget, 2000);
  EXPECT_EQ(s.budget, 40);
  EXPECT_EQ(s.rows.size(), 40u);
  EXPECT_EQ(s.n_top, 30);
  EXPECT_EQ(s.n_explore, 10);
  std::set<CandidateKey> got, want;
  for (const auto& r : s.rows) got.insert(key_of(r.candidate));
  for (const auto& c : pool) want.insert(key_of(c));
  EXPECT_EQ(got, want);
  for (size_t i = 0; i < s.rows.size(); ++i) EXPECT_EQ(s.rows[i].static_rank, static_cast<long>(i) + 1);
}

TEST(SamplingPolicies, AutoBudgetFollowsTheShapeTags) {
  const std::vector<Candidate> pool(tn().candidates().begin(), tn().candidates().begin() + 5000);
  auto budget = [&](GemmShape p) {
    const Sample s = sample_candidates(p, Layout::tn, tn().kernels(), pool, SampleOptions{}, default_hw());
    return std::make_pair(s.budget, s.budget_reason);
  };
  EXPECT_EQ(budget({4096, 4096, 4096}), std::make_pair(2000, std::string("default")));
  EXPECT_EQ(budget({8192, 8192, 8192}), std::make_pair(1000, std::string("largest")));
  EXPECT_EQ(budget({16, 4096, 4096}), std::make_pair(3000, std::string("atypical")));
  EXPECT_EQ(budget({640, 608, 608}), std::make_pair(3000, std::string("atypical")));  // at the ridge
}

TEST(SamplingPolicies, AlphaEdgesAndRounding) {
  const GemmShape p{512, 512, 512};
  EXPECT_EQ(sample_tn(p, Policy::biased_diverse, 100, 0, 0.0).n_top, 0);
  EXPECT_EQ(sample_tn(p, Policy::biased_diverse, 100, 0, 1.0).n_top, 100);
  EXPECT_EQ(sample_tn(p, Policy::biased_diverse, 10, 0, 0.7).n_top, 7);  // 0.7 * 10 is 7.000000000000001
  EXPECT_EQ(sample_tn(p, Policy::biased_diverse, 10, 0, 0.71).n_top, 8);
}

TEST(SamplingPolicies, InvalidOptionsAreClearErrors) {
  SampleOptions o;
  for (double alpha : {-0.1, 1.5, std::numeric_limits<double>::quiet_NaN()}) {
    o.alpha = alpha;
    EXPECT_THROW(validate(o), Error) << alpha;
  }
  o.alpha = 0.75;
  o.budget = 0;
  EXPECT_THROW(validate(o), Error);
  try {
    parse_policy("greedy");
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()), "unknown sampling policy 'greedy' (expected uniform, top or biased-diverse)");
  }
  EXPECT_EQ(parse_policy("biased-diverse"), Policy::biased_diverse);
  EXPECT_EQ(to_string(Policy::top), "top");
}

TEST(SamplingPool, ReadsKernelIdsAndRejectsUnknownOnes) {
  char path[] = "/tmp/cks_pool_XXXXXX";
  const int fd = mkstemp(path);
  ASSERT_GE(fd, 0);
  close(fd);
  const KernelDesc& a = tn().kernels()[10];
  const KernelDesc& b = tn().kernels()[20000];
  std::ofstream(path) << "# two kernels\n" << a.id() << "\n\n  " << b.id() << "  # trailing comment\n";
  const auto pool = read_pool_file(path, tn());
  EXPECT_EQ(pool.size(), knob_settings(a).size() + knob_settings(b).size());
  for (const auto& c : pool) EXPECT_TRUE(c.kernel == 10 || c.kernel == 20000);

  std::ofstream(path) << a.id() << "\n\nk0000000000000000\n";
  try {
    read_pool_file(path, tn());
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(":3: kernel 'k0000000000000000' is not in the tn catalogue"),
              std::string::npos)
        << e.what();
  }
  std::ofstream(path) << "# nothing\n";
  EXPECT_THROW(read_pool_file(path, tn()), Error);
  std::remove(path);
}

TEST(SamplingPerf, SamplingTheFullCatalogueIsFast) {
  ASSERT_GT(tn().candidates().size(), 100000u);  // built (and cached) outside the timing
  const auto t0 = std::chrono::steady_clock::now();
  const Sample s = sample_tn({4096, 4096, 4096}, Policy::biased_diverse, std::nullopt);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::printf("sampled %zu of %ld candidates in %.1f ms\n", s.rows.size(), s.pool_size, seconds * 1e3);
  EXPECT_LT(seconds, 1.0);
}

TEST(SamplingCli, BiasedDiversePrintsTheBudget) {
  const auto r =
      test::run_cks("sample --m 4096 --n 4096 --k 4096 --layout tn --policy biased-diverse --budget 2000 --format csv");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(test::count_lines(r.out), 2001u);
  EXPECT_EQ(r.out.rfind("sample_rank,kernel_id,kernel,knobs,static_score,static_rank,from,policy,budget,seed\n", 0),
            0u);
  size_t top = 0, explore = 0;
  for (size_t pos = 0; (pos = r.out.find(",top,", pos)) != std::string::npos; ++pos) ++top;
  for (size_t pos = 0; (pos = r.out.find(",explore,", pos)) != std::string::npos; ++pos) ++explore;
  EXPECT_EQ(top, 1500u);
  EXPECT_EQ(explore, 500u);
}

TEST(SamplingCli, BadInputIsOneErrorLine) {
  const std::string ok = "sample --m 4096 --n 4096 --k 4096 --layout tn";
  for (const std::string& args :
       {std::string("sample --m 4096 --n 4096 --k 4096 --layout tx"),
        std::string("sample --m 0 --n 64 --k 64 --layout tn"), std::string("sample --m -64 --n 64 --k 64 --layout tn"),
        std::string("sample --m 100 --n 64 --k 64 --layout tn"), ok + " --preset a100", ok + " --policy greedy",
        ok + " --alpha 1.5", ok + " --alpha -0.5", ok + " --budget 0", ok + " --budget lots",
        ok + " --pool /nonexistent/pool.txt", ok + " --format xml"}) {
    const auto r = test::run_cks(args);
    EXPECT_NE(r.exit_code, 0) << args;
    EXPECT_EQ(r.err.rfind("cks: error: ", 0), 0u) << args << ": " << r.err;
    EXPECT_EQ(test::count_lines(r.err), 1u) << args << ": " << r.err;
  }
}
