// The selector's start-up caches (selector/setup_cache.hpp, models/model_cache.cpp) and the
// compiled tree walk, end to end: rankings are the same with and without the caches, on all
// four layouts; a corrupt or stale prior entry is rebuilt; and the shipped model ranks exactly
// as it did before (tests/selector/data/default_rankings.json: kernel, knobs and the float score bit
// for bit; first written by main at fab54aa with the reference tree walk and no cache, regenerated
// for each shipped model by scripts/models/golden_rankings.py with an empty cache folder, which
// reproduced the r7 file of the reference walk exactly before writing r10w4's).
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>
#include <thread>

#include "cks/selector.hpp"
#include "common/cache_file.hpp"
#include "common/json_limits.hpp"
#include "common/test_util.hpp"
#include "models/synthetic.hpp"

using namespace cks;
namespace fs = std::filesystem;

namespace {

const std::string& xgboost_file() { return test::small_xgboost_file(); }

std::vector<Problem> sample_problems() {
  std::vector<Problem> out;
  for (Layout l : kLayouts)
    for (const auto& [m, n, k] : {std::array<long, 3>{4096, 4096, 4096}, {64, 8192, 1024}, {12288, 96, 40}, {1000, 1000, 10000}})
      out.push_back({m, n, k, l});
  return out;
}

using Picks = std::vector<std::tuple<uint32_t, std::string, double>>;
std::vector<Picks> rankings(const Selector& s) {
  std::vector<Picks> out;
  for (const Problem& p : sample_problems()) {
    Picks picks;
    for (const Selection& sel : s.select_uncached(p, 16)) picks.emplace_back(sel.kernel, sel.knobs_text, sel.score);
    out.push_back(std::move(picks));
  }
  return out;
}

std::vector<std::string> prior_entries(const std::string& dir) { return test::files_with_prefix(dir, "prior-"); }

// Problems of every layout: sample_problems() and `per_layout` log-uniform ones (M, N, K in
// [8, 16384], some not multiples of 8).
std::vector<Problem> many_problems(int per_layout) {
  std::vector<Problem> out = sample_problems();
  std::mt19937_64 rng(11);
  std::uniform_real_distribution<double> e(3.0, 14.0);
  auto dim = [&] { return static_cast<long>(std::exp2(e(rng))); };
  for (Layout l : kLayouts)
    for (int i = 0; i < per_layout; ++i) out.push_back({dim(), dim(), dim(), l});
  return out;
}

// The top `top` of each problem (kernel, knobs, score), select_uncached.
std::vector<Picks> rankings_of(const Selector& s, const std::vector<Problem>& problems, size_t top = 16) {
  std::vector<Picks> out;
  for (const Problem& p : problems) {
    Picks picks;
    for (const Selection& sel : s.select_uncached(p, top)) picks.emplace_back(sel.kernel, sel.knobs_text, sel.score);
    out.push_back(std::move(picks));
  }
  return out;
}

// Whether two rankings are the same kernels, knobs and score bits.
void expect_same_bits(const std::vector<Picks>& a, const std::vector<Picks>& b, const std::string& what) {
  ASSERT_EQ(a.size(), b.size()) << what;
  for (size_t i = 0; i < a.size(); ++i) {
    ASSERT_EQ(a[i].size(), b[i].size()) << what << ", problem " << i;
    for (size_t r = 0; r < a[i].size(); ++r) {
      EXPECT_EQ(std::get<0>(a[i][r]), std::get<0>(b[i][r])) << what << ", problem " << i << ", rank " << r + 1;
      EXPECT_EQ(std::get<1>(a[i][r]), std::get<1>(b[i][r])) << what << ", problem " << i << ", rank " << r + 1;
      const double x = std::get<2>(a[i][r]), y = std::get<2>(b[i][r]);
      EXPECT_EQ(0, std::memcmp(&x, &y, sizeof x)) << what << ", problem " << i << ", rank " << r + 1 << ": " << x << " vs " << y;
    }
  }
}

// The rankings of the saved model with the caches off.
std::vector<Picks> uncached_rankings() {
  test::ScopedEnv off("CKS_CACHE_DIR", "off");
  return rankings(Selector(xgboost_file(), test::own_orientation()));
}

ino_t inode(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 ? st.st_ino : 0;
}

}  // namespace

TEST(SelectorSetupCache, RankingsAreTheSameWithAndWithoutTheCache) {
  test::ScratchDir dir;
  const std::vector<Picks> uncached = uncached_rankings();
  test::ScopedEnv env("CKS_CACHE_DIR", dir.path());
  EXPECT_EQ(rankings(Selector(xgboost_file(), test::own_orientation())), uncached);  // misses: computed and written
  const auto written = prior_entries(dir.path());
  ASSERT_EQ(written.size(), kLayouts.size());
  std::vector<ino_t> inodes;
  for (const auto& p : written) inodes.push_back(inode(p));
  EXPECT_EQ(rankings(Selector(xgboost_file(), test::own_orientation())), uncached);  // hits: read back, not rewritten
  EXPECT_EQ(prior_entries(dir.path()), written);
  for (size_t i = 0; i < written.size(); ++i) EXPECT_EQ(inode(written[i]), inodes[i]) << written[i];
  // Other prior options are other entries.
  SelectorOptions o = test::own_orientation();
  o.prior_terms = 20;
  Selector(xgboost_file(), o).prepare(Layout::tn);
  EXPECT_EQ(prior_entries(dir.path()).size(), kLayouts.size() + 1);
}

TEST(SelectorSetupCache, CorruptOrStaleEntriesAreRebuilt) {
  test::ScratchDir dir;
  const std::vector<Picks> uncached = uncached_rankings();
  test::ScopedEnv env("CKS_CACHE_DIR", dir.path());
  Selector(xgboost_file(), test::own_orientation()).prepare(Layout::tn);
  const auto written = prior_entries(dir.path());
  ASSERT_EQ(written.size(), 1u);
  const std::string good = test::slurp(written[0]);
  uint64_t key;
  std::memcpy(&key, good.data() + 32, 8);
  // The payload ends with the sample's raw scores: a last score that this build does not
  // reproduce stands for a changed phi or tree evaluation under an unchanged key.
  std::string stale = good.substr(56);
  stale[stale.size() - 1] ^= 0x01;
  std::string flipped = good;
  flipped[good.size() / 3] ^= 0x10;
  for (int what = 0; what < 4; ++what) {
    if (what == 0) ASSERT_TRUE(write_cache_entry(written[0], "prior", key, stale));
    if (what == 1) std::ofstream(written[0], std::ios::binary | std::ios::trunc) << flipped;
    if (what == 2) std::ofstream(written[0], std::ios::binary | std::ios::trunc) << good.substr(0, good.size() / 2);
    if (what == 3) std::ofstream(written[0], std::ios::binary | std::ios::trunc) << "";
    std::vector<Picks> got;
    ASSERT_NO_THROW(got = rankings(Selector(xgboost_file(), test::own_orientation()))) << what;
    EXPECT_EQ(got, uncached) << what;
    EXPECT_EQ(test::slurp(written[0]), good) << what << ": rebuilt";
  }
}

TEST(SelectorSetupCache, ModelsWithoutAFileAreNotCached) {
  test::ScratchDir dir;
  test::ScopedEnv env("CKS_CACHE_DIR", dir.path());
  std::shared_ptr<const Model> model = Model::deserialize(test::slurp(xgboost_file()));
  ASSERT_NE(model->info().source_hash, 0u);
  std::shared_ptr<Model> trained = Model::deserialize(test::slurp(xgboost_file()));
  trained->info().source_hash = 0;  // as a model trained in this process
  Selector(trained, test::own_orientation()).prepare(Layout::nt);
  EXPECT_TRUE(prior_entries(dir.path()).empty());
  Selector(model, test::own_orientation()).prepare(Layout::nt);
  EXPECT_EQ(prior_entries(dir.path()).size(), 1u);
}

// The shipped model's rankings before this change (reference walk, no cache), bit for bit, with
// a cold cache and a warm one.
TEST(SelectorSetupCache, ShippedModelRanksAsBefore) {
  const std::string model = std::string(CKS_SOURCE_DIR) + "/models/default.json";
  if (!fs::exists(model)) GTEST_SKIP() << "no shipped model";
  const nlohmann::json golden = nlohmann::json::parse(test::slurp(std::string(CKS_SOURCE_DIR) + "/tests/selector/data/default_rankings.json"));
  if (fs::file_size(model) != golden.at("model_bytes").get<uint64_t>()) GTEST_SKIP() << "the shipped model changed";
  test::ScratchDir dir;
  test::ScopedEnv env("CKS_CACHE_DIR", dir.path());
  for (const char* pass : {"cold cache", "warm cache"}) {
    const Selector s(model, test::own_orientation());  // the golden rankings are of the own orientation
    size_t layouts_seen = 0;
    Layout last = Layout::tn;
    for (const auto& g : golden.at("problems")) {
      const Problem p{g.at("m").get<long>(), g.at("n").get<long>(), g.at("k").get<long>(),
                      parse_layout(g.at("layout").get<std::string>())};
      if (layouts_seen == 0 || p.layout != last) ++layouts_seen, last = p.layout;
      const Ranking r = s.select(p, 16);
      const auto& want = g.at("ranking");
      ASSERT_EQ(r.size(), want.size());
      for (size_t i = 0; i < r.size(); ++i) {
        const std::string what = std::string(pass) + ", " + g.at("layout").get<std::string>() + " " +
                                 std::to_string(p.m) + "x" + std::to_string(p.n) + "x" + std::to_string(p.k) +
                                 ", rank " + std::to_string(i + 1);
        EXPECT_EQ(r[i].kernel_id, want[i][0].get<std::string>()) << what;
        EXPECT_EQ(r[i].knobs_text, want[i][1].get<std::string>()) << what;
        const float expected = static_cast<float>(std::strtod(want[i][2].get<std::string>().c_str(), nullptr));
        const float got = static_cast<float>(r[i].score);
        EXPECT_EQ(0, std::memcmp(&got, &expected, sizeof got)) << what << ": " << got << " vs " << expected;
      }
    }
    EXPECT_EQ(layouts_seen, kLayouts.size());
  }
}

// SelectorOptions::select_threads: phi and the cascade's rows scored in blocks on the selector's
// workers give the single thread's ranking bit for bit, also for selects from several threads at
// once (which share the workers or score on their own thread). The small model with a cascade of
// 4 trees -> 256 and a prefilter of 2048, so that both stages are shared out.
TEST(SelectorThreads, RankingsAreTheSameForAnyThreadCount) {
  test::ScratchDir dir;
  test::ScopedEnv env("CKS_CACHE_DIR", dir.path());
  std::shared_ptr<const Model> model = Model::load(xgboost_file());
  ASSERT_GT(model->terms(), 8u);
  const std::vector<Problem> problems = many_problems(6);
  SelectorOptions o = test::own_orientation();
  o.prefilter = 2048;
  o.cascade_terms = 4;
  o.cascade_keep = 256;
  o.select_threads = 1;
  const Selector one(model, o);
  const std::vector<Picks> want = rankings_of(one, problems), want_deep = rankings_of(one, problems, 300);
  for (int threads : {2, 4, 7}) {
    o.select_threads = threads;
    const Selector many(model, o);
    expect_same_bits(rankings_of(many, problems), want, std::to_string(threads) + " threads");
    expect_same_bits(rankings_of(many, problems, 300), want_deep, std::to_string(threads) + " threads, top 300");
    // Four callers at once on one selector.
    std::vector<std::vector<Picks>> got(4);
    std::vector<std::thread> callers;
    for (auto& g : got) callers.emplace_back([&] { g = rankings_of(many, problems); });
    for (auto& t : callers) t.join();
    for (const auto& g : got) expect_same_bits(g, want, std::to_string(threads) + " threads, concurrent callers");
  }
  // 0: min(4, hardware threads).
  o.select_threads = 0;
  expect_same_bits(rankings_of(Selector(model, o), problems), want, "0 threads");
  // The default options (no cascade: the small model has fewer trees than cascade_terms), 4
  // threads against 1.
  SelectorOptions d4, d1;
  d4.select_threads = 4;
  d1.select_threads = 1;
  expect_same_bits(rankings_of(Selector(model, d4), problems), rankings_of(Selector(model, d1), problems), "default options");
}

// The shipped model (587 trees, the default cascade 50 -> 64 of 1,024 + evidence): the top-16 of
// 25 problems of each layout, select_threads 1 against 4.
TEST(SelectorThreads, ShippedModelRanksTheSameForAnyThreadCount) {
  const std::string path = std::string(CKS_SOURCE_DIR) + "/models/default.json";
  if (!fs::exists(path)) GTEST_SKIP() << "no shipped model";
  test::ScratchDir dir;
  test::ScopedEnv env("CKS_CACHE_DIR", dir.path());
  std::shared_ptr<const Model> model = Model::load(path);
  const std::vector<Problem> problems = many_problems(21);
  SelectorOptions o = test::own_orientation();
  o.select_threads = 1;
  const std::vector<Picks> want = rankings_of(Selector(model, o), problems);
  o.select_threads = 4;
  expect_same_bits(rankings_of(Selector(model, o), problems), want, "4 threads");
}
