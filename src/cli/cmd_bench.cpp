// cks bench — single-thread micro-benchmarks of the selector's hot paths.
#include <chrono>
#include <ctime>
#include <iostream>

#include "cks/features.hpp"
#include "cli/commands.hpp"
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

}  // namespace

void register_bench(CLI::App& app) {
  auto* bench = app.add_subcommand("bench", "single-thread micro-benchmarks of the hot paths");
  bench->require_subcommand(1);
  auto* cmd = bench->add_subcommand("features", "feature rows per second over the whole catalogue of one problem");
  static BenchFeaturesOpts o;
  cmd->add_option("--m", o.problem.m, "rows of A and D")->capture_default_str();
  cmd->add_option("--n", o.problem.n, "columns of B and D")->capture_default_str();
  cmd->add_option("--k", o.problem.k, "contraction dimension")->capture_default_str();
  cmd->add_option("--layout", o.problem.layout, "operand layout: tn, nt, nn or tt")->capture_default_str();
  cmd->add_option("--repeat", o.repeat, "timed passes over the catalogue")->capture_default_str();
  add_format(cmd, o.format, "md");
  cmd->callback([] { run_bench_features(o); });
}

}  // namespace cks::cli
