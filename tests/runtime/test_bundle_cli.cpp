// `cks bundle` end to end: against the fake nvcc of compile_test_util.hpp (the index, the
// libraries in DIR/kernels, the picks equal to `cks select`'s, a rebuild, the dry run, bad input),
// --variant-order's two orders on a real dry run (--picks), and BundleNvcc.* with the real nvcc (ctest label `nvcc`: one kernel compiled into a library that
// loads and answers the kernel-library ABI; skipped without nvcc or the CUTLASS headers).
#include <dlfcn.h>
#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <fstream>

#include "cks/common.hpp"
#include "cks/kernel_lib_abi.h"
#include "cli/cli_run.hpp"
#include "common/subprocess.hpp"
#include "compile/compile_test_util.hpp"
#include "cks/selector.hpp"
#include "runtime/bundle.hpp"

using namespace cks;
using namespace cks::rt;
namespace fs = std::filesystem;

namespace {

std::vector<std::string> fake_args(const compile_test::FakeNvcc& fake) {
  const CompileOptions o = fake.options();
  return {"--nvcc", o.nvcc, "--cutlass", o.cutlass_dir, "--cache", o.cache_dir, "--jobs", "2"};
}

std::vector<std::string> concat(std::vector<std::string> a, const std::vector<std::string>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

// The rank-ordered (kernel_id, knobs) of `cks select --top K`.
std::vector<std::pair<std::string, std::string>> select_top(const std::string& m, const std::string& n, const std::string& k,
                                                            const std::string& layout, int top) {
  const auto r = test::run_cli({"select", "--m", m, "--n", n, "--k", k, "--layout", layout, "--top", std::to_string(top),
                                "--format", "json"});
  EXPECT_EQ(r.code(), 0) << r.err;
  std::vector<std::pair<std::string, std::string>> out;
  for (const auto& row : nlohmann::json::parse(r.out)) out.emplace_back(row["kernel_id"], row["knobs"]);
  return out;
}

}  // namespace

TEST(BundleCli, BuildsTheIndexAndLibrariesWithTheSelectorsPicks) {
  compile_test::FakeNvcc fake;
  compile_test::ScratchDir dir;
  const std::string shapes = dir.path() + "/shapes.csv", out = dir.path() + "/bundle";
  // cks shapes' own columns, in another order, one problem twice.
  std::ofstream(shapes) << "key,layout,m,n,k\na,tn,4096,4096,4096\nb,nt,128,1024,512\nc,tn,4096,4096,4096\n";
  const auto r = test::run_cli(concat({"bundle", "--shapes", shapes, "--top", "2", "--variants", "1", "--out", out}, fake_args(fake)));
  ASSERT_EQ(r.code(), 0) << r.err;
  EXPECT_NE(r.err.find("cks bundle: 2 problem(s) ranked by"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("cks bundle: wrote " + out + "/index.json"), std::string::npos) << r.err;
  const BundleIndex b = BundleIndex::load(out);
  EXPECT_EQ(b.top, 2);
  EXPECT_EQ(b.variants, 1);
  EXPECT_EQ(b.cks_version, CKS_VERSION);
  EXPECT_EQ(b.abi_version, CKS_KERNEL_LIB_ABI_VERSION);
  EXPECT_EQ(b.cuda_version, "13.0.88");  // the fake nvcc's
  EXPECT_EQ(b.model_hash, file_hash(b.model_path));
  ASSERT_EQ(b.problems.size(), 2u);
  for (const auto& [layout, m, n, k] : {std::tuple{Layout::tn, "4096", "4096", "4096"}, std::tuple{Layout::nt, "128", "1024", "512"}}) {
    const BundleProblem* p = b.find(layout, std::stoll(m), std::stoll(n), std::stoll(k));
    ASSERT_NE(p, nullptr);
    const auto want = select_top(m, n, k, std::string(to_string(layout)), 2);
    std::vector<std::pair<std::string, std::string>> ranked;
    for (const auto& pick : p->picks) {
      if (!pick.variant) ranked.emplace_back(pick.kernel_id, pick.knobs);
      // Every pick, variant or not, is a compiled kernel of the map, in a library of the folder.
      const BundleKernel& bk = b.kernels.at(pick.kernel_id);
      EXPECT_TRUE(bk.ok()) << bk.error;
      EXPECT_TRUE(fs::exists(out + "/" + bk.library));
      EXPECT_EQ(bk.library.rfind("kernels/cks_", 0), 0u);
    }
    EXPECT_EQ(ranked, want) << "the bundle's ranking is cks select's";
    for (const auto& pick : p->picks)
      if (pick.variant) {
        EXPECT_EQ(pick.kernel_id, p->picks[static_cast<size_t>(pick.rank - 1)].kernel_id) << "a variant keeps its pick's kernel";
        EXPECT_NE(pick.knobs, p->picks[static_cast<size_t>(pick.rank - 1)].knobs);
      }
  }
  // The folder's kernels/ is itself a compile cache: libraries with their sidecars.
  for (const auto& e : fs::directory_iterator(out + "/kernels"))
    if (e.path().extension() == ".so") EXPECT_TRUE(fs::exists(fs::path(e.path()).replace_extension(".json"))) << e.path();
  const int compiles = fake.n_calls();

  // Rebuilt into the same folder with one problem: everything comes from the cache, and the
  // libraries the new index does not name are removed.
  std::ofstream(shapes) << "m,n,k\n256,512,1024\n";
  const auto again = test::run_cli(concat({"bundle", "--shapes", shapes, "--layouts", "tn", "--top", "1", "--out", out}, fake_args(fake)));
  ASSERT_EQ(again.code(), 0) << again.err;
  const BundleIndex b2 = BundleIndex::load(out);
  ASSERT_EQ(b2.problems.size(), 1u);
  EXPECT_EQ(b2.problems[0].m, 256);
  size_t libs = 0;
  for (const auto& e : fs::directory_iterator(out + "/kernels")) libs += e.path().extension() == ".so";
  std::set<std::string> named;
  for (const auto& [id, k] : b2.kernels) named.insert(k.library);
  EXPECT_EQ(libs, named.size());
  EXPECT_GE(fake.n_calls(), compiles);
}

TEST(BundleCli, CachedOnlyAndDryRunCompileNothing) {
  compile_test::FakeNvcc fake;
  compile_test::ScratchDir dir;
  const auto dry = test::run_cli({"bundle", "--set", "llm", "--layouts", "nn", "--top", "1", "--dry-run", "--format", "csv"});
  ASSERT_EQ(dry.code(), 0) << dry.err;
  EXPECT_EQ(dry.out.rfind("kernel_id,canonical,problems,best_rank\n", 0), 0u) << dry.out.substr(0, 200);
  EXPECT_NE(dry.err.find("problem(s) ranked"), std::string::npos);
  EXPECT_FALSE(fs::exists("index.json"));
  const std::string out = dir.path() + "/b";
  const auto r = test::run_cli(concat({"bundle", "--shapes", "/dev/null", "--out", out}, fake_args(fake)));
  EXPECT_TRUE(test::one_error_line(r, "shapes file")) << r.err;
  std::ofstream(dir.path() + "/s.csv") << "m,n,k,layout\n64,64,64,tn\n";
  const auto cached = test::run_cli(concat({"bundle", "--shapes", dir.path() + "/s.csv", "--cached-only", "--out", out}, fake_args(fake)));
  ASSERT_EQ(cached.code(), 0) << cached.err;
  EXPECT_EQ(fake.n_calls(), 0);
  const BundleIndex b = BundleIndex::load(out);
  ASSERT_FALSE(b.kernels.empty());
  for (const auto& [id, k] : b.kernels) {
    EXPECT_FALSE(k.ok());
    EXPECT_EQ(k.error, "not in the compile cache (cks bundle --cached-only)");
  }
}

TEST(BundleCli, BadInputIsOneErrorLine) {
  compile_test::FakeNvcc fake;
  compile_test::ScratchDir dir;
  const std::string out = dir.path() + "/b";
  std::ofstream(dir.path() + "/s.csv") << "m,n,k,layout\n64,64,64,tn\n4095,64,64,tn\n";
  std::ofstream(dir.path() + "/ok.csv") << "m,n,k,layout\n64,64,64,tn\n";
  const auto fa = fake_args(fake);
  EXPECT_TRUE(test::one_error_line(test::run_cli(concat({"bundle", "--out", out}, fa)), "give exactly one of --shapes FILE and --set NAME"));
  EXPECT_TRUE(test::one_error_line(test::run_cli(concat({"bundle", "--set", "llm", "--shapes", dir.path() + "/ok.csv", "--out", out}, fa))));
  EXPECT_TRUE(test::one_error_line(test::run_cli(concat({"bundle", "--shapes", dir.path() + "/s.csv", "--out", out}, fa)),
                                   dir.path() + "/s.csv:3: M must be a multiple of 8"));
  EXPECT_TRUE(test::one_error_line(test::run_cli(concat({"bundle", "--set", "nope", "--out", out}, fa)), "nope"));
  EXPECT_TRUE(test::one_error_line(test::run_cli(concat({"bundle", "--set", "llm", "--layouts", "xx", "--out", out}, fa)),
                                   "unknown layout 'xx'"));
  EXPECT_TRUE(test::one_error_line(test::run_cli(concat({"bundle", "--shapes", dir.path() + "/ok.csv", "--top", "0", "--out", out}, fa)),
                                   "--top"));
  EXPECT_TRUE(test::one_error_line(test::run_cli({"bundle", "--shapes", dir.path() + "/ok.csv"}), "--out DIR is required"));
  EXPECT_TRUE(test::one_error_line(
      test::run_cli(concat({"bundle", "--shapes", dir.path() + "/ok.csv", "--model", dir.path() + "/none.json", "--out", out}, fa)),
      "cannot read model file"));
  // A folder holding something else is never written into.
  fs::create_directories(dir.path() + "/busy");
  std::ofstream(dir.path() + "/busy/notes.txt") << "mine";
  EXPECT_TRUE(test::one_error_line(test::run_cli(concat({"bundle", "--shapes", dir.path() + "/ok.csv", "--out", dir.path() + "/busy"}, fa)),
                                   "is not empty and holds no bundle"));
  EXPECT_EQ(fake.n_calls(), 0);
}

namespace {

struct PickRow {
  int rank = 0;
  bool variant = false;
  std::string kernel_id, knobs;
  bool operator==(const PickRow&) const = default;
};
void PrintTo(const PickRow& p, std::ostream* os) {
  *os << "{" << p.rank << (p.variant ? " variant " : " ") << p.kernel_id << " " << p.knobs << "}";
}

std::vector<std::string> texts(const std::vector<RuntimeKnobs>& ks) {
  std::vector<std::string> out;
  for (const auto& k : ks) out.push_back(k.canonical());
  return out;
}

// `cks bundle --dry-run --picks` of one problem: the index's picks, in its order.
std::vector<PickRow> dry_picks(const std::string& shapes, const std::vector<std::string>& extra) {
  const auto r = test::run_cli(concat({"bundle", "--shapes", shapes, "--dry-run", "--picks", "--format", "json"}, extra));
  EXPECT_EQ(r.code(), 0) << r.err;
  std::vector<PickRow> out;
  if (r.code() != 0) return out;
  for (const auto& row : nlohmann::json::parse(r.out))
    out.push_back({row["rank"].get<int>(), row["variant"].get<int>() != 0, row["kernel_id"], row["knobs"]});
  return out;
}

// The variants of rank `rank`'s pick, in the bundle's order.
std::vector<RuntimeKnobs> variants_of(const std::vector<PickRow>& picks, int rank) {
  std::vector<RuntimeKnobs> out;
  for (const auto& p : picks)
    if (p.variant && p.rank == rank) out.push_back(RuntimeKnobs::from_canonical(p.knobs));
  return out;
}

}  // namespace

// --variant-order on a real dry run (the model's ranking, nothing compiled): model keeps the
// model's order (the first V ranked knob settings of the pick's kernel below the top picks, as
// before the option); raster takes the other raster at the pick's decomposition and splits first.
TEST(BundleCli, VariantOrderRasterTakesTheOtherRasterFirst) {
  if (!fs::is_regular_file(Selector::default_model_path()))
    GTEST_SKIP() << "no model (" << Selector::default_model_path() << "; set CKS_MODEL)";
  compile_test::ScratchDir dir;
  const std::string shapes = dir.path() + "/s.csv";
  std::ofstream(shapes) << "m,n,k,layout\n4096,4096,4096,tn\n";
  const int top = 4, v = 2;
  const std::vector<std::string> tv = {"--top", std::to_string(top), "--variants", std::to_string(v)};
  const auto implicit = dry_picks(shapes, tv);
  const auto model = dry_picks(shapes, concat(tv, {"--variant-order", "model"}));
  const auto raster = dry_picks(shapes, concat(tv, {"--variant-order", "raster"}));
  ASSERT_FALSE(model.empty());
  EXPECT_EQ(implicit, model) << "model is the default";

  // The model's 256-deep ranking (kVariantDepth: the depth cks bundle ranks at with --variants).
  const auto ranked = select_top("4096", "4096", "4096", "tn", 256);
  ASSERT_GT(ranked.size(), static_cast<size_t>(top));
  for (const auto* picks : {&model, &raster}) {
    ASSERT_GE(picks->size(), static_cast<size_t>(top));
    for (int i = 0; i < top; ++i) {
      EXPECT_EQ((*picks)[static_cast<size_t>(i)], (PickRow{i + 1, false, ranked[static_cast<size_t>(i)].first, ranked[static_cast<size_t>(i)].second}));
    }
  }
  bool differ = false;
  for (int i = 0; i < top; ++i) {
    const auto& [kid, knobs_text] = ranked[static_cast<size_t>(i)];
    const RuntimeKnobs pick = RuntimeKnobs::from_canonical(knobs_text);
    // The pick's variants in the model's order, and its "other raster, same d and k" ones.
    std::vector<RuntimeKnobs> all, other;
    for (size_t j = static_cast<size_t>(top); j < ranked.size(); ++j) {
      if (ranked[j].first != kid) continue;
      const RuntimeKnobs k = RuntimeKnobs::from_canonical(ranked[j].second);
      all.push_back(k);
      if (k.raster != pick.raster && k.decomposition == pick.decomposition && k.splits == pick.splits) other.push_back(k);
    }
    const size_t n = std::min(all.size(), static_cast<size_t>(v));
    const auto mv = variants_of(model, i + 1), rv = variants_of(raster, i + 1);
    EXPECT_EQ(texts(mv), texts(std::vector<RuntimeKnobs>(all.begin(), all.begin() + static_cast<long>(n))))
        << "model order, rank " << i + 1;
    ASSERT_EQ(rv.size(), n);
    // Raster: the other-raster variants lead (as many as there are, in the model's order), the
    // rest of the model's order fills up to V; each one is one of the pick's ranked variants.
    const size_t lead = std::min(other.size(), n);
    for (size_t t = 0; t < lead; ++t) {
      EXPECT_EQ(rv[t].canonical(), other[t].canonical()) << "rank " << i + 1 << " variant " << t;
      EXPECT_NE(rv[t].raster, pick.raster);
      EXPECT_EQ(rv[t].decomposition, pick.decomposition);
      EXPECT_EQ(rv[t].splits, pick.splits);
    }
    for (size_t t = lead; t < n; ++t) {
      EXPECT_NE(std::find(all.begin(), all.end(), rv[t]), all.end()) << rv[t].canonical();
      EXPECT_EQ(std::find(rv.begin(), rv.begin() + static_cast<long>(lead), rv[t]), rv.begin() + static_cast<long>(lead))
          << "no variant twice";
    }
    differ = differ || mv != rv;
  }
  // On this problem (the top-1 is r=m,s=2 and its model order takes r=m,s=1 second) the orders differ.
  EXPECT_TRUE(differ) << "the two orders agree on every pick of tn 4096^3: the test no longer tells them apart";

  // The summary line and the index carry the order (a real build, fake nvcc).
  compile_test::FakeNvcc fake;
  const std::string out = dir.path() + "/bundle";
  const auto r = test::run_cli(concat(concat({"bundle", "--shapes", shapes, "--variant-order", "raster", "--out", out}, tv), fake_args(fake)));
  ASSERT_EQ(r.code(), 0) << r.err;
  EXPECT_NE(r.err.find("top 4 + 2 variant(s) per pick in raster order"), std::string::npos) << r.err;
  const BundleIndex b = BundleIndex::load(out);
  EXPECT_EQ(b.variant_order, VariantOrder::raster);
  EXPECT_EQ(b.variants, v);
  ASSERT_EQ(b.problems.size(), 1u);
  std::vector<PickRow> built;
  for (const auto& p : b.problems[0].picks) built.push_back({p.rank, p.variant, p.kernel_id, p.knobs});
  EXPECT_EQ(built, raster) << "the bundle holds the dry run's picks";

  // A bad order is one clear error line, before anything is ranked or written; --picks needs --dry-run.
  const auto bad = test::run_cli({"bundle", "--shapes", shapes, "--variants", "2", "--variant-order", "Raster", "--dry-run"});
  EXPECT_TRUE(test::one_error_line(bad, "--variant-order: unknown variant order 'Raster' (expected model or raster)")) << bad.err;
  EXPECT_TRUE(test::one_error_line(test::run_cli({"bundle", "--shapes", shapes, "--picks", "--out", out}), "--picks needs --dry-run"));
}

TEST(BundleNvcc, CompilesOneKernelIntoALoadableLibrary) {
  const std::string nvcc = find_nvcc();
  const std::string cutlass = default_cutlass_dir();
  if (nvcc.empty()) GTEST_SKIP() << "nvcc not found (PATH, CUDA_HOME, /usr/local/cuda)";
  if (cutlass.empty()) GTEST_SKIP() << "CUTLASS headers not found (scripts/setup.sh)";
  compile_test::ScratchDir dir;
  const std::string out = dir.path() + "/bundle";
  std::ofstream(dir.path() + "/s.csv") << "m,n,k,layout\n4096,4096,4096,tn\n";
  const auto t0 = std::chrono::steady_clock::now();
  const auto r = test::run_cli({"bundle", "--shapes", dir.path() + "/s.csv", "--top", "1", "--out", out, "--cache",
                                dir.path() + "/cache", "--jobs", "1"});
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  ASSERT_EQ(r.code(), 0) << r.err;
  std::printf("cks bundle of one kernel with nvcc: %.0f s\n", seconds);
  const BundleIndex b = BundleIndex::load(out);
  ASSERT_EQ(b.problems.size(), 1u);
  ASSERT_EQ(b.problems[0].picks.size(), 1u);
  const BundleKernel& k = b.kernels.at(b.problems[0].picks[0].kernel_id);
  ASSERT_TRUE(k.ok()) << k.error;
  EXPECT_EQ(b.cuda_version, nvcc_version());
  const std::string lib = out + "/" + k.library;
  // The library exports the ABI's one symbol, and answers it without a GPU.
  const RunResult nm = run_argv({"nm", "-D", "--defined-only", lib});
  if (nm.started) {
    EXPECT_NE(nm.output.find(" T cks_kernel_lib_get"), std::string::npos) << nm.output;
  }
  void* h = dlopen(lib.c_str(), RTLD_NOW | RTLD_LOCAL);
  ASSERT_NE(h, nullptr) << dlerror();
  auto get = reinterpret_cast<const cks_kernel_lib* (*)()>(dlsym(h, "cks_kernel_lib_get"));
  ASSERT_NE(get, nullptr);
  const cks_kernel_lib* api = get();
  ASSERT_NE(api, nullptr);
  EXPECT_EQ(api->abi_version, CKS_KERNEL_LIB_ABI_VERSION);
  ASSERT_EQ(api->count(), 1);
  EXPECT_EQ(std::string(api->kernel_id(k.index)), k.kernel_id);
  EXPECT_EQ(std::string(api->canonical(k.index)), k.canonical);
  // Left loaded, as the runtime and the worker leave them (each carries a static CUDA runtime).
}

// A row product (M = 1) is bundled as the column problem the runtime runs it as: (N, 1, K), B first
// with its other letter (runtime/options.hpp, as_column_problem), with the picks of that problem.
TEST(BundleCli, ARowProductIsBundledAsItsColumnProblem) {
  if (!fs::is_regular_file(Selector::default_model_path()))
    GTEST_SKIP() << "no model (" << Selector::default_model_path() << "; set CKS_MODEL)";
  compile_test::ScratchDir dir;
  const std::string rows = dir.path() + "/rows.csv", cols = dir.path() + "/cols.csv";
  std::ofstream(rows) << "m,n,k,layout\n1,6144,4096,tn\n1,4096,1024,nt\n";
  std::ofstream(cols) << "m,n,k,layout\n6144,1,4096,tn\n4096,1,1024,nn\n";
  const auto r = test::run_cli({"bundle", "--shapes", rows, "--top", "2", "--dry-run", "--picks", "--format", "json"});
  ASSERT_EQ(r.code(), 0) << r.err;
  const auto c = test::run_cli({"bundle", "--shapes", cols, "--top", "2", "--dry-run", "--picks", "--format", "json"});
  ASSERT_EQ(c.code(), 0) << c.err;
  const auto got = nlohmann::json::parse(r.out);
  ASSERT_EQ(got.size(), 4u);
  EXPECT_EQ(got[0]["layout"], "tn");
  EXPECT_EQ(got[0]["m"], 6144);
  EXPECT_EQ(got[0]["n"], 1);
  EXPECT_EQ(got[2]["layout"], "nn");
  EXPECT_EQ(got, nlohmann::json::parse(c.out));
}

// A problem in the sliced-K rule's region (SlicedRule: few 64x64 tiles, long K): the bundle holds
// the rule's pick as `cks select` ranks it, the sliced-K kernel (its canonical ends "+slicek") at
// the rule's slice count and the next smaller one, compiled like any kernel, and the knobs the
// runtime passes to the kernel-library ABI (split-K decomposition, splits = slices) round-trip.
TEST(BundleCli, ASlicedKPickIsBundledWithItsSliceCounts) {
  compile_test::FakeNvcc fake;
  compile_test::ScratchDir dir;
  const std::string shapes = dir.path() + "/s.csv", out = dir.path() + "/b";
  std::ofstream(shapes) << "m,n,k,layout\n32,512,15232,tn\n";
  const auto r = test::run_cli(concat({"bundle", "--shapes", shapes, "--top", "3", "--out", out}, fake_args(fake)));
  ASSERT_EQ(r.code(), 0) << r.err;
  const BundleIndex b = BundleIndex::load(out);
  const BundleProblem* p = b.find(Layout::tn, 32, 512, 15232);
  ASSERT_NE(p, nullptr);
  ASSERT_GE(p->picks.size(), 3u);
  std::vector<std::pair<std::string, std::string>> ranked;
  for (const auto& pick : p->picks) ranked.emplace_back(pick.kernel_id, pick.knobs);
  EXPECT_EQ(ranked, select_top("32", "512", "15232", "tn", 3));
  const KernelDesc sk = sliced_rule_kernel(Layout::tn);
  for (size_t i : {0u, 2u}) {
    EXPECT_EQ(p->picks[i].kernel_id, sk.id()) << i;
    const BundleKernel& bk = b.kernels.at(p->picks[i].kernel_id);
    EXPECT_TRUE(bk.ok()) << bk.error;
    EXPECT_EQ(bk.canonical, sk.canonical());
    EXPECT_TRUE(bk.canonical.ends_with("+slicek")) << bk.canonical;
  }
  EXPECT_EQ(p->picks[0].knobs, "r=m,s=1,d=sk,k=8");
  EXPECT_EQ(p->picks[2].knobs, "r=m,s=1,d=sk,k=4");
  const RuntimeKnobs k = RuntimeKnobs::from_canonical(p->picks[0].knobs);
  EXPECT_EQ(k.decomposition, Decomposition::split_k);  // on a sliced-K kernel: the slices
  EXPECT_EQ(k.splits, 8);
  EXPECT_EQ(k.canonical(), p->picks[0].knobs);
  EXPECT_NE(p->picks[1].kernel_id, sk.id()) << "the ranking without the rule follows the rule's first pick";
}
