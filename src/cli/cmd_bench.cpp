// cks bench — single-thread micro-benchmarks of the selector's hot paths.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <ctime>
#include <filesystem>
#include <iostream>
#include <random>

#include <stdlib.h>

#include "cks/features.hpp"
#include "cks/files.hpp"
#include "cks/models.hpp"
#include "cks/monitor.hpp"
#include "cks/plan.hpp"
#include "cks/registry.hpp"
#include "cks/selector.hpp"
#include "cli/commands.hpp"
#include "cli/selector_opts.hpp"
#include "cli/util.hpp"

namespace cks::cli {

namespace {

struct BenchFeaturesOpts {
  ProblemOpts problem{4096, 4096, 4096, "tn", kDefaultPreset};
  int repeat = 50;
  std::string format;
};

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}
// Process CPU time: on a shared machine wall time also counts the waits for a core.
double cpu_seconds() { return static_cast<double>(std::clock()) / CLOCKS_PER_SEC; }

// Feature rows per second: the whole catalogue of one problem, computed `repeat` times into one
// preallocated matrix after a warm-up pass. Setup (per-kernel terms) is reported separately.
void run_bench_features(const BenchFeaturesOpts& o) {
  const Format f = parse_format(o.format);
  if (o.repeat < 1) throw Error("--repeat must be at least 1 (got " + std::to_string(o.repeat) + ")");
  const Layout layout = validate_problem(o.problem);
  const HardwareDesc& hw = default_hw();
  const Catalogue& cat = Catalogue::get(layout);
  const Problem p{o.problem.m, o.problem.n, o.problem.k, layout};

  const auto t_setup = std::chrono::steady_clock::now();
  const FeatureComputer fc(cat.kernels(), hw);
  const double setup_s = seconds_since(t_setup);
  FeatureMatrix x;
  fc.compute(p, cat.candidates(), x);  // warm-up: allocates the matrix, touches the pages

  const auto t0 = std::chrono::steady_clock::now();
  const double cpu0 = cpu_seconds();
  for (int r = 0; r < o.repeat; ++r) {
    fc.compute(p, cat.candidates(), x);
    progress("bench features", static_cast<size_t>(r + 1), static_cast<size_t>(o.repeat));
  }
  const double s = seconds_since(t0), cpu = cpu_seconds() - cpu0;
  const double rows = static_cast<double>(cat.candidates().size()) * o.repeat;

  Table t({"problem", "layout", "kernels", "candidates", "columns", "repeat", "setup_ms", "seconds", "cpu_seconds",
           "rows_per_s", "rows_per_cpu_s", "cpu_ns_per_row"});
  t.add_row({std::to_string(p.m) + "x" + std::to_string(p.n) + "x" + std::to_string(p.k),
             std::string(to_string(layout)), static_cast<int64_t>(cat.kernels().size()),
             static_cast<int64_t>(cat.candidates().size()), static_cast<int64_t>(x.cols),
             static_cast<int64_t>(o.repeat), setup_s * 1e3, s, cpu, rows / s, rows / cpu, cpu / rows * 1e9});
  t.write(std::cout, f);
}

struct BenchSelectOpts {
  std::string model;
  std::vector<std::string> layouts{"tn", "nt"};
  int problems = 200;
  int cached = 100000;
  bool fallback_static = false;
  SelectorOptions selector;
  bool exhaustive = false;
  std::string concurrent = "auto";
  std::string format;
};

// This thread's CPU time: the cold latency target is one core, and on a shared machine wall
// time also counts the waits for one.
double thread_cpu_seconds() {
  timespec t{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_nsec) * 1e-9;
}

// Selection latency per layout: the one-time layout set-up, cold selects of distinct problems
// (log-uniform M, N, K in [16, 16384], multiples of 8, a fixed seed) and cached selects of one
// problem. Percentiles are over the problems.
void run_bench_select(const BenchSelectOpts& o) {
  const Format f = parse_format(o.format);
  if (o.problems < 1) throw Error("--problems must be >= 1");
  if (o.cached < 1) throw Error("--cached must be >= 1");
  SelectorOptions so = o.selector;
  finish_selector_options(so, o.exhaustive);
  so.concurrent_orientations = o.concurrent == "on" ? 1 : o.concurrent == "off" ? 0 : -1;
  std::unique_ptr<Selector> selector;
  const std::string path = o.model.empty() ? Selector::default_model_path() : o.model;
  const auto t_load = std::chrono::steady_clock::now();
  if (o.fallback_static) {
    selector = std::make_unique<Selector>(Selector::static_score(default_hw(), so));
  } else {
    if (!std::filesystem::exists(path)) throw Error("cannot read model file '" + path + "' (or pass --fallback static)");
    selector = std::make_unique<Selector>(path, so);
  }
  const double load_s = seconds_since(t_load);
  Table t({"model", "mode", "layout", "candidates", "load_ms", "setup_ms", "problems", "cold_ms_mean", "cold_ms_p50",
           "cold_ms_p95", "cold_ms_max", "cold_cpu_ms_mean", "cached_ns"});
  for (const std::string& ls : o.layouts) {
    const Layout layout = parse_layout(ls);
    const auto t_setup = std::chrono::steady_clock::now();
    selector->prepare(layout);
    const double setup_s = seconds_since(t_setup);
    std::mt19937_64 rng(5);
    std::uniform_real_distribution<double> e(4.0, 14.0);
    auto dim = [&] { return std::max(8L, static_cast<long>(std::exp2(e(rng))) / 8 * 8); };
    std::vector<double> wall, cpu;
    for (int i = 0; i < o.problems; ++i) {
      const Problem p{dim(), dim(), dim(), layout};
      const auto w0 = std::chrono::steady_clock::now();
      const double c0 = thread_cpu_seconds();
      const Ranking r = selector->select_uncached(p, 8);
      cpu.push_back(thread_cpu_seconds() - c0);
      wall.push_back(seconds_since(w0));
      if (r.empty()) throw Error("bench select: empty ranking");
      progress("bench select " + ls, static_cast<size_t>(i + 1), static_cast<size_t>(o.problems));
    }
    const Problem fixed{4096, 4096, 4096, layout};
    selector->select(fixed, 8);
    const auto c0 = std::chrono::steady_clock::now();
    size_t sink = 0;
    for (int i = 0; i < o.cached; ++i) sink += selector->select(fixed, 8).size();
    const double cached_s = seconds_since(c0) / o.cached;
    if (!sink) throw Error("bench select: empty ranking");
    double sum_w = 0, sum_c = 0;
    for (size_t i = 0; i < wall.size(); ++i) {
      sum_w += wall[i];
      sum_c += cpu[i];
    }
    t.add_row({selector->description(),
               selector->mode() + (so.orientations == Orientations::both
                                       ? (selector->concurrent_orientations() ? " (at once)" : " (in turn)")
                                       : ""),
               ls, static_cast<int64_t>(Catalogue::get(layout).candidates().size()),
               load_s * 1e3, setup_s * 1e3, static_cast<int64_t>(wall.size()), sum_w / wall.size() * 1e3,
               quantile(wall, 0.5) * 1e3, quantile(wall, 0.95) * 1e3, *std::max_element(wall.begin(), wall.end()) * 1e3,
               sum_c / cpu.size() * 1e3, cached_s * 1e9});
  }
  t.write(std::cout, f);
}

struct BenchCollectOpts {
  std::vector<int> items{2000, 8000};
  std::string worker;
  std::string format;
};

// The monitor's own cost per measured item: one group of N items of the fake backend (no GPU,
// no compile, measurements answered at once), collected into a fresh registry in a temporary
// directory. Linear bookkeeping shows as a flat us_per_item and scan_steps_per_item across N
// (issue 18, defect 15: 2,000 items took 0.83 s and 8,000 took 6.1 s).
void run_bench_collect(const BenchCollectOpts& o) {
  const Format f = parse_format(o.format);
  if (o.items.empty()) throw Error("--items needs at least one size");
  for (int n : o.items)
    if (n < 1 || n > 1000000) throw Error("--items: sizes must be in [1, 1000000] (got " + std::to_string(n) + ")");
  Table t({"items", "seconds", "cpu_seconds", "us_per_item", "cpu_us_per_item", "scan_steps_per_item"});
  for (int n : o.items) {
    std::string tmpl = temp_dir() + "/cks-bench-collect-XXXXXX";
    if (!::mkdtemp(tmpl.data())) throw Error("cannot create a temporary directory in " + temp_dir());
    const std::filesystem::path dir = tmpl;
    struct Cleanup {
      std::filesystem::path p;
      ~Cleanup() {
        std::error_code ec;
        std::filesystem::remove_all(p, ec);
      }
    } cleanup{dir};
    Plan plan;
    plan.name = "bench";
    plan.created_by = "cks bench collect";
    PlanGroup g;
    g.group.m = 4096;
    g.group.n = 4096;
    g.group.k = 4096;
    g.group.key = group_key(4096, 4096, 4096, Layout::tn);
    g.group.policy = "bench";
    g.group.budget = n;
    const std::string knobs = RuntimeKnobs{}.canonical();
    for (int i = 0; i < n; ++i) g.candidates.emplace_back("k" + hex64(fnv1a64("bench" + std::to_string(i))), knobs);
    plan.groups.push_back(std::move(g));
    write_plan(plan, (dir / "plan.jsonl").string());
    CollectOptions co;
    co.plan_path = (dir / "plan.jsonl").string();
    co.registry_path = (dir / "reg.db").string();
    co.backend = "fake";
    co.worker_exe = o.worker;
    co.gpus = {0};
    co.progress_every_s = 0;
    const auto t0 = std::chrono::steady_clock::now();
    const double cpu0 = cpu_seconds();
    const CollectSummary s = collect(co);
    const double secs = seconds_since(t0), cpu = cpu_seconds() - cpu0;
    if (!s.complete()) throw Error("bench collect: the fake collection of " + std::to_string(n) + " items did not finish");
    const double items = static_cast<double>(n);
    t.add_row({int64_t{n}, secs, cpu, secs / items * 1e6, cpu / items * 1e6, static_cast<double>(s.scan_steps) / items});
    progress("bench collect", t.size(), o.items.size());
  }
  t.write(std::cout, f);
}

}  // namespace

void register_bench(CLI::App& app) {
  auto* bench = app.add_subcommand("bench", "single-thread micro-benchmarks of the hot paths");
  bench->require_subcommand(1);
  auto* cmd = bench->add_subcommand("features", "feature rows per second over the whole catalogue of one problem");
  static BenchFeaturesOpts o;
  cmd->add_option("--m", o.problem.m, "rows of A and D")->transform(int_in(INT64_MIN, INT64_MAX))->capture_default_str();
  cmd->add_option("--n", o.problem.n, "columns of B and D")->transform(int_in(INT64_MIN, INT64_MAX))->capture_default_str();
  cmd->add_option("--k", o.problem.k, "contraction dimension")->transform(int_in(INT64_MIN, INT64_MAX))->capture_default_str();
  cmd->add_option("--layout", o.problem.layout, "operand layout: tn, nt, nn or tt")->capture_default_str();
  cmd->add_option("--repeat", o.repeat, "timed passes over the catalogue")->transform(count())->capture_default_str();
  add_format(cmd, o.format, "md");
  cmd->callback([] { run_bench_features(o); });

  auto* sel = bench->add_subcommand(
      "select", "selection latency of `cks select`: layout set-up, cold (distinct problems; wall time, the scoring on --select-threads threads; cold_cpu_ms_mean: the calling thread's CPU only) and cached, one calling thread");
  static BenchSelectOpts so;
  sel->add_option("--model", so.model, "model file (default: the shipped models/default.json, or $CKS_MODEL)");
  sel->add_flag("--fallback-static", so.fallback_static, "time the static-score fallback instead of a model");
  sel->add_option("--layouts", so.layouts, "layouts to time")->delimiter(',')->capture_default_str();
  sel->add_option("--problems", so.problems, "distinct problems selected cold")->transform(positive_count())->capture_default_str();
  sel->add_option("--cached", so.cached, "repeated selects of one problem")->transform(positive_count())->capture_default_str();
  add_selector_options(sel, so.selector, &so.exhaustive);
  add_orientation_options(sel, so.selector);
  add_sliced_options(sel, so.selector);
  sel->add_option("--concurrent-orientations", so.concurrent,
                  "both: the two rankings of a problem at once, each with its own --select-threads threads (on), "
                  "or one after the other (off); auto: at once on a machine with two hardware threads or more "
                  "(the same ranking either way)")
      ->check(CLI::IsMember({"auto", "on", "off"}))
      ->capture_default_str();
  add_format(sel, so.format, "md");
  sel->callback([] { run_bench_select(so); });

  auto* col = bench->add_subcommand(
      "collect", "the collection monitor's cost per item: one group of N items on the fake backend, no GPU");
  static BenchCollectOpts co;
  col->add_option("--items", co.items, "group sizes, comma-separated")->delimiter(',')->capture_default_str();
  col->add_option("--worker", co.worker, "cks-worker executable (default: next to cks)");
  add_format(col, co.format, "md");
  col->callback([] { run_bench_collect(co); });
}

}  // namespace cks::cli
