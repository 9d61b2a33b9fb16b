// cks bundle — the selector's picks for a list of problems, compiled ahead of time into kernel
// libraries with an index, for the GEMM runtime (libcks_runtime.so; runtime/bundle.hpp,
// docs/library.md "Bundles").
#include <algorithm>
#include <iostream>

#include "cks/shapes.hpp"
#include "runtime/options.hpp"
#include "cli/commands.hpp"
#include "cli/selector_opts.hpp"
#include "cli/util.hpp"
#include "runtime/bundle_build.hpp"

namespace cks::cli {

void register_bundle(CLI::App& app) {
  auto* cmd = app.add_subcommand(
      "bundle", "compile the selector's top-K picks of a list of problems into kernel libraries with an index (the "
                "GEMM runtime's bundles)");
  struct Opts {
    std::string shapes, set, out, model, format, variant_order = "model";
    std::vector<std::string> layouts;
    uint64_t seed = 0;
    int top = 4, variants = 0;
    double time_budget = 0;
    bool cached_only = false, dry_run = false, picks = false, exhaustive = false;
    CompileOptions compile;
    SelectorOptions selector;
  };
  auto o = std::make_shared<Opts>();
  auto* shapes = cmd->add_option("--shapes", o->shapes,
                                 "problems from a CSV with columns m, n, k and layout (the output of cks shapes); "
                                 "without a layout column, each row once per --layouts");
  auto* set = cmd->add_option("--set", o->set, "problems of a shape set of cks shapes: llm, llm-train, family, paper, heldout");
  shapes->excludes(set);
  cmd->add_option("--layouts", o->layouts,
                  "only these layouts (comma-separated); for a --shapes file without a layout column, the layouts to "
                  "bundle (default tn)")
      ->delimiter(',');
  cmd->add_option("--seed", o->seed, "--set: seed of the set's construction")->transform(seed())->capture_default_str();
  cmd->add_option("--top", o->top, "picks per problem (the selector's ranking)")->transform(uint_in(1, 256))->capture_default_str();
  cmd->add_option("--variants", o->variants,
                  "per pick, up to this many other knob settings of its kernel, in the model's order (no extra compile)")
      ->transform(uint_in(0, 64))->capture_default_str();
  cmd->add_option("--variant-order", o->variant_order,
                  "which variants --variants takes first: model (the model's order) or raster (the pick's other "
                  "raster at its decomposition and splits first, then the rest; each in the model's order)")
      ->capture_default_str();
  cmd->add_option("--out", o->out, "bundle folder (new, empty, or an earlier bundle, which is replaced)");
  cmd->add_option("--model", o->model, "model file (default: the shipped models/default.json, or $CKS_MODEL)");
  cmd->add_option("--jobs,-j", o->compile.jobs, "parallel nvcc processes (0: from cores and memory)")
      ->transform(uint_in(0, 4096))->capture_default_str();
  cmd->add_option("--kernels-per-tu", o->compile.kernels_per_tu, "kernels per translation unit")
      ->transform(uint_in(1, 4096))->capture_default_str();
  cmd->add_option("--cache", o->compile.cache_dir, "kernel library cache (the collector's executable cache)")
      ->capture_default_str();
  cmd->add_option("--cutlass", o->compile.cutlass_dir, "CUTLASS root with include/ and tools/util/include/ (default: found)");
  cmd->add_option("--nvcc", o->compile.nvcc, "nvcc executable")->capture_default_str();
  cmd->add_option("--mem-per-kernel-gb", o->compile.mem_per_job_gb, "compile memory budgeted per kernel of a TU")
      ->check(positive_real())->capture_default_str();
  cmd->add_option("--mem-limit-gb", o->compile.mem_limit_gb, "memory budget of the pool (0: MemAvailable)")
      ->check(non_negative_real())->capture_default_str();
  cmd->add_flag("--cached-only", o->cached_only,
                "compile nothing: bundle the picks the cache holds, the others are listed as not compiled");
  cmd->add_option("--time-budget", o->time_budget,
                  "stop compiling after this many seconds (0: no limit); the kernels not compiled by then are left "
                  "out of the bundle, marked, and the compile of the top-1 picks comes first")
      ->check(non_negative_real())->capture_default_str();
  cmd->add_flag("--dry-run", o->dry_run, "rank only: print the distinct kernels (and problems picking them), write nothing");
  cmd->add_flag("--picks", o->picks,
                "with --dry-run: print each problem's picks and variants (the index's, in its order) instead of the "
                "distinct kernels");
  add_selector_options(cmd, o->selector, &o->exhaustive);
  add_orientation_options(cmd, o->selector);
  add_sliced_options(cmd, o->selector);
  add_format(cmd, o->format);
  cmd->callback([o] {
    const Format f = parse_format(o->format);
    rt::VariantOrder variant_order;
    try {
      variant_order = rt::parse_variant_order(o->variant_order);
    } catch (const Error& e) {
      throw Error(std::string("--variant-order: ") + e.what());
    }
    if (o->shapes.empty() == o->set.empty()) throw Error("give exactly one of --shapes FILE and --set NAME");
    if (!o->dry_run && o->out.empty()) throw Error("--out DIR is required (or --dry-run)");
    if (o->picks && !o->dry_run) throw Error("--picks needs --dry-run (a bundle's picks are in DIR/index.json)");
    finish_selector_options(o->selector, o->exhaustive);
    const std::vector<Layout> layouts = parse_layouts(o->layouts);
    const HardwareDesc hw = default_hw();
    rt::BundleSpec spec;
    if (!o->shapes.empty()) {
      // A row product (M = 1) is bundled as the column problem (N, 1, K) the runtime runs it as.
      spec.groups = read_shapes_csv(o->shapes, hw, layouts.empty() ? std::vector<Layout>{Layout::tn} : layouts, [](ShapeGroup& g) {
        int64_t m = g.shape.m, n = g.shape.n;
        const void* a = nullptr;
        const void* b = nullptr;
        if (rt::as_column_problem(m, n, g.layout, a, b)) g.shape.m = m, g.shape.n = n;
      });
    } else {
      spec.groups = make_shape_set(o->set, o->seed, hw);
    }
    if (!layouts.empty())
      std::erase_if(spec.groups, [&](const ShapeGroup& g) { return std::find(layouts.begin(), layouts.end(), g.layout) == layouts.end(); });
    if (spec.groups.empty()) throw Error("no problems left to bundle (check --layouts)");
    spec.out_dir = o->out;
    spec.model_path = o->model;
    spec.selector = o->selector;
    spec.top = o->top;
    spec.variants = o->variants;
    spec.variant_order = variant_order;
    spec.compile = o->compile;
    spec.cached_only = o->cached_only;
    spec.time_budget_s = o->time_budget;
    spec.dry_run = o->dry_run;
    const rt::BundleResult r = rt::build_bundle(spec);
    if (!o->dry_run) return;
    if (o->picks) {
      Table t({"layout", "m", "n", "k", "rank", "variant", "kernel_id", "knobs", "score"});
      for (const auto& p : r.index.problems)
        for (const auto& s : p.picks)
          t.add_row({std::string(to_string(p.layout)), p.m, p.n, p.k, int64_t{s.rank}, int64_t{s.variant}, s.kernel_id,
                     s.knobs, s.score});
      t.write(std::cout, f);
      return;
    }
    Table t({"kernel_id", "canonical", "problems", "best_rank"});
    for (const auto& k : r.kernels)
      t.add_row({k.desc.id(), k.desc.canonical(), static_cast<int64_t>(k.problems), int64_t{k.best_rank}});
    t.write(std::cout, f);
  });
}

}  // namespace cks::cli
