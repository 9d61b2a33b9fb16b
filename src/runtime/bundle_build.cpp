// `cks bundle` (runtime/bundle_build.hpp).
#include "runtime/bundle_build.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <map>
#include <set>

#include "cks/common.hpp"
#include "cks/kernel_lib_abi.h"
#include "compile/cache.hpp"

namespace cks::rt {

namespace fs = std::filesystem;

namespace {

std::string utc_now() {
  const std::time_t now = std::time(nullptr);
  std::tm t{};
  gmtime_r(&now, &t);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &t);
  return buf;
}

// The output folder must be new, empty, or a bundle (index.json): never anything else.
void check_out_dir(const std::string& dir) {
  std::error_code ec;
  if (dir.empty()) throw Error("no output folder (--out)");
  if (!fs::exists(dir, ec)) return;
  if (!fs::is_directory(dir, ec)) throw Error("output '" + dir + "' exists and is not a folder");
  if (fs::exists(fs::path(dir) / kBundleIndexFile, ec)) return;
  if (fs::directory_iterator(dir, ec) != fs::directory_iterator())
    throw Error("output folder '" + dir + "' is not empty and holds no bundle (" + kBundleIndexFile +
                "): give a new or empty folder");
}

// Copies (or hard-links) a cached library and its sidecar into the bundle's kernels/ folder; the
// name stays cks_<hash>.so, so the folder is itself a compile cache (`cks bundle --cache DIR/kernels`).
std::string place_library(const std::string& lib_path, const fs::path& kernel_dir) {
  const fs::path src(lib_path);
  const fs::path dst = kernel_dir / src.filename();
  std::error_code ec;
  for (const auto& [from, to] : {std::pair{src, dst}, std::pair{fs::path(src).replace_extension(".json"),
                                                                  fs::path(dst).replace_extension(".json")}}) {
    if (!fs::exists(from, ec)) continue;
    if (fs::exists(to, ec) && fs::file_size(to, ec) == fs::file_size(from, ec)) continue;
    fs::remove(to, ec);
    fs::create_hard_link(from, to, ec);
    if (ec) {
      ec.clear();
      fs::copy_file(from, to, fs::copy_options::overwrite_existing, ec);
      if (ec) throw Error("cannot copy " + from.string() + " into the bundle: " + ec.message());
    }
  }
  return (fs::path(kBundleKernelDir) / src.filename()).string();
}

}  // namespace

BundleResult build_bundle(const BundleSpec& spec) {
  using Clock = std::chrono::steady_clock;
  const auto t0 = Clock::now();
  if (spec.groups.empty()) throw Error("no problems to bundle");
  if (spec.top < 1) throw Error("--top must be >= 1 (got " + std::to_string(spec.top) + ")");
  if (spec.variants < 0) throw Error("--variants must be >= 0");
  if (!spec.dry_run) check_out_dir(spec.out_dir);
  const std::string model_path = spec.model_path.empty() ? Selector::default_model_path() : spec.model_path;
  std::error_code ec;
  if (!fs::is_regular_file(model_path, ec))
    throw Error(spec.model_path.empty() ? "no default model (" + model_path + " missing): pass --model FILE"
                                        : "cannot read model file '" + model_path + "'");

  BundleResult res;
  BundleIndex& idx = res.index;
  idx.cks_version = CKS_VERSION;
  idx.abi_version = CKS_KERNEL_LIB_ABI_VERSION;
  idx.cutlass_version = spec.compile.cutlass_version;
  idx.model_path = fs::absolute(model_path).lexically_normal().string();
  idx.model_hash = file_hash(model_path);
  idx.top = spec.top;
  idx.variants = spec.variants;
  idx.variant_order = spec.variant_order;
  idx.created = utc_now();

  // 1. Rank every problem (once per distinct problem; layouts set up once each).
  const Selector selector(model_path, spec.selector);
  idx.model_description = selector.description();
  idx.selector_mode = selector.mode();
  std::set<std::tuple<int, long, long, long>> seen;
  std::map<std::string, size_t> kernel_pos;  // kernel ID -> res.kernels index
  const size_t depth = spec.variants > 0 ? std::max<size_t>(kVariantDepth, spec.top) : static_cast<size_t>(spec.top);
  for (const auto& g : spec.groups) {
    if (!seen.insert({static_cast<int>(g.layout), g.shape.m, g.shape.n, g.shape.k}).second) continue;
    const Problem p{g.shape.m, g.shape.n, g.shape.k, g.layout};
    const Ranking ranking = selector.select(p, depth);
    BundleProblem bp{g.layout, g.shape.m, g.shape.n, g.shape.k, {}};
    auto take = [&](const Selection& s, int rank, bool variant) {
      bp.picks.push_back({rank, s.kernel_id, s.knobs_text, s.score, variant});
      auto [it, fresh] = kernel_pos.emplace(s.kernel_id, res.kernels.size());
      if (fresh) res.kernels.push_back({selected_kernel(s, g.layout), 0, rank});
      BundleKernelPlan& kp = res.kernels[it->second];
      kp.best_rank = std::min(kp.best_rank, rank);
    };
    const size_t top = std::min(ranking.size(), static_cast<size_t>(spec.top));
    for (size_t i = 0; i < top; ++i) take(ranking[i], static_cast<int>(i + 1), false);
    for (size_t i = 0; i < top && spec.variants > 0; ++i) {
      // The pick's variants: the ranked knob settings of its kernel below the top picks, in the
      // model's order; raster order moves the other raster at the pick's decomposition and splits
      // to the front (stable: each part keeps the model's order).
      const RuntimeKnobs& pick = ranking[i].knobs;
      std::vector<size_t> vars;
      for (size_t j = top; j < ranking.size(); ++j)
        if (ranking[j].kernel_id == ranking[i].kernel_id) vars.push_back(j);  // swapped kernels index another catalogue
      if (spec.variant_order == VariantOrder::raster)
        std::stable_partition(vars.begin(), vars.end(), [&](size_t j) {
          const RuntimeKnobs& v = ranking[j].knobs;
          return v.raster != pick.raster && v.decomposition == pick.decomposition && v.splits == pick.splits;
        });
      const size_t n = std::min(vars.size(), static_cast<size_t>(spec.variants));
      for (size_t v = 0; v < n; ++v) take(ranking[vars[v]], static_cast<int>(i + 1), true);
    }
    std::set<std::string> picked;
    for (const auto& s : bp.picks)
      if (picked.insert(s.kernel_id).second) ++res.kernels[kernel_pos[s.kernel_id]].problems;
    idx.problems.push_back(std::move(bp));
  }
  idx.reindex();
  std::fprintf(stderr,
               "cks bundle: %zu problem(s) ranked by %s [%s], top %d + %d variant(s) per pick in %s order, %zu "
               "distinct kernel(s) (%.1f s)\n",
               idx.problems.size(), idx.model_description.c_str(), idx.selector_mode.c_str(), spec.top, spec.variants,
               variant_order_name(spec.variant_order), res.kernels.size(),
               std::chrono::duration<double>(Clock::now() - t0).count());
  for (const auto& k : res.kernels) idx.kernels[k.desc.id()] = {k.desc.id(), k.desc.canonical(), "", -1, "not compiled"};
  if (spec.dry_run) return res;

  // 2. Compile what the cache lacks (the collector's pool: cached kernels are found by their own
  // key, whatever library holds them), then place the libraries in DIR/kernels.
  // Compile order: the kernels that are some problem's top-1 first (select mode runs them), then
  // by rank, the most used first: a compile cut short leaves out the least needed.
  std::vector<const BundleKernelPlan*> order;
  for (const auto& k : res.kernels) order.push_back(&k);
  std::stable_sort(order.begin(), order.end(), [](const BundleKernelPlan* a, const BundleKernelPlan* b) {
    return a->best_rank != b->best_rank ? a->best_rank < b->best_rank : a->problems > b->problems;
  });
  std::vector<KernelDesc> all;
  for (const auto* k : order) all.push_back(k->desc);
  CompilePool pool(spec.compile);
  idx.cuda_version = nvcc_version(spec.compile.nvcc);
  const std::vector<bool> served = pool.take_cached(all);
  std::vector<KernelDesc> rest;
  for (size_t i = 0; i < all.size(); ++i)
    if (!served[i]) rest.push_back(all[i]);
  const size_t n_cached = all.size() - rest.size();
  if (spec.cached_only) {
    res.skipped = rest.size();
    for (const auto& k : rest) idx.kernels[k.id()].error = "not in the compile cache (cks bundle --cached-only)";
    rest.clear();
  }
  std::fprintf(stderr, "cks bundle: %zu kernel(s) in the cache %s, %zu to compile with %d nvcc job(s)%s\n", n_cached,
               spec.compile.cache_dir.c_str(), rest.size(), pool.jobs(),
               spec.cached_only && res.skipped ? (", " + std::to_string(res.skipped) + " skipped (--cached-only)").c_str() : "");
  if (!rest.empty()) pool.submit(rest);
  const fs::path kernel_dir = fs::path(spec.out_dir) / kBundleKernelDir;
  fs::create_directories(kernel_dir, ec);
  if (ec) throw Error("cannot create bundle folder '" + kernel_dir.string() + "': " + ec.message());
  size_t settled = 0;
  const size_t to_settle = n_cached + rest.size();
  auto last_report = Clock::now();
  bool out_of_time = false;
  while (pool.pending() > 0) {
    if (spec.time_budget_s > 0 && std::chrono::duration<double>(Clock::now() - t0).count() > spec.time_budget_s) {
      out_of_time = true;  // the pool's destructor stops the running nvcc
      std::fprintf(stderr, "cks bundle: time budget of %.0f s spent: %zu kernel(s) not compiled are left out\n",
                   spec.time_budget_s, to_settle - settled);
      break;
    }
    auto lib = pool.next(std::chrono::seconds(1));
    if (!lib) {
      if (Clock::now() - last_report > std::chrono::seconds(30)) {
        std::fprintf(stderr, "cks bundle: %zu/%zu kernel(s) settled (%.0f s)\n", settled, to_settle,
                     std::chrono::duration<double>(Clock::now() - t0).count());
        last_report = Clock::now();
      }
      continue;
    }
    const std::string rel = lib->lib_path.empty() ? "" : place_library(lib->lib_path, kernel_dir);
    for (const auto& k : lib->kernels) {
      auto it = idx.kernels.find(k.kernel_id);
      if (it == idx.kernels.end()) continue;
      ++settled;
      if (k.status == "ok") {
        it->second.library = rel;
        it->second.index = k.index;
        it->second.error.clear();
        ++(lib->cached ? res.cached : res.compiled);
      } else {
        it->second.error = one_line(k.error, 600);
        ++res.failed;
        std::fprintf(stderr, "cks bundle: warning: %s (%s) did not compile: %s\n", k.kernel_id.c_str(),
                     k.canonical.c_str(), one_line(k.error, 300).c_str());
      }
    }
    if (!lib->cached || Clock::now() - last_report > std::chrono::seconds(10)) {
      std::fprintf(stderr, "cks bundle: %zu/%zu kernel(s) settled (%.0f s)\n", settled, to_settle,
                   std::chrono::duration<double>(Clock::now() - t0).count());
      last_report = Clock::now();
    }
  }
  if (out_of_time)
    for (auto& [id, k] : idx.kernels)
      if (!k.ok() && k.error == "not compiled") {
        k.error = "not compiled: the time budget (--time-budget) ran out";
        ++res.skipped;
      }
  // Libraries of an earlier bundle in this folder that the new index does not name go.
  std::set<std::string> used;
  for (const auto& [id, k] : idx.kernels)
    if (k.ok()) used.insert(fs::path(k.library).stem().string());
  for (fs::directory_iterator it(kernel_dir, ec), end; !ec && it != end; it.increment(ec)) {
    const fs::path p = it->path();
    if ((p.extension() == ".so" || p.extension() == ".json") && !used.count(p.stem().string())) fs::remove(p, ec);
  }
  idx.write(spec.out_dir);
  std::fprintf(stderr,
               "cks bundle: wrote %s: %zu problem(s), %zu kernel(s) in %zu librar%s (%zu cached, %zu compiled, %zu "
               "failed%s) in %.0f s\n",
               (fs::path(spec.out_dir) / kBundleIndexFile).c_str(), idx.problems.size(), res.kernels.size(), used.size(),
               used.size() == 1 ? "y" : "ies", res.cached, res.compiled, res.failed,
               res.skipped ? (", " + std::to_string(res.skipped) + " skipped").c_str() : "",
               std::chrono::duration<double>(Clock::now() - t0).count());
  return res;
}

}  // namespace cks::rt
