// cks collect — run (or resume) a collection plan on the GPUs; cks plan make/show — build and
// summarise plans. See docs/monitor.md.
#include <filesystem>
#include <fstream>
#include <functional>
#include <iostream>
#include <set>

#include "cks/monitor.hpp"
#include "cks/plan.hpp"
#include "cli/commands.hpp"
#include "cli/util.hpp"

namespace cks::cli {

namespace {

namespace fs = std::filesystem;

// The command line as typed (for the run's provenance), from /proc/self/cmdline.
std::string own_command_line() {
  std::ifstream in("/proc/self/cmdline", std::ios::binary);
  std::string arg, out;
  while (std::getline(in, arg, '\0')) {
    const bool quote = arg.empty() || arg.find_first_of(" \t'\";&|$") != std::string::npos;
    out += (out.empty() ? "" : " ") + (quote ? "'" + arg + "'" : arg);
  }
  return out;
}

std::vector<Layout> parse_layouts(const std::string& list) {
  std::vector<Layout> out;
  size_t b = 0;
  while (b <= list.size()) {
    const size_t e = std::min(list.find(',', b), list.size());
    out.push_back(parse_layout(list.substr(b, e - b)));
    b = e + 1;
  }
  return out;
}

// `cks plan remeasure|leaders`: a plan made from a registry (--registry or the shards of --data),
// written to `out`, with a one-line summary on stderr.
void write_registry_plan(const char* command, const SourceOpts& src, const std::string& out,
                         const std::function<Plan(const Registry&)>& make) {
  auto source = open_data(src.registry, src.data);
  RegistryOptions ropt;
  ropt.create = false;
  const Registry reg(source->path(), ropt);
  const Plan p = make(reg);
  write_plan(p, out);
  std::fprintf(stderr, "cks plan %s: %s: %zu groups, %zu candidates\n", command, out.c_str(), p.groups.size(),
               p.candidates());
}

std::optional<int> parse_budget(const std::string& s) {
  if (s == "auto") return std::nullopt;
  size_t used = 0;
  long v = 0;
  try {
    v = std::stol(s, &used);
  } catch (const std::logic_error&) {
    used = 0;
  }
  if (used == 0 || used != s.size() || v < 1 || v > (1L << 30))
    throw Error("--budget must be 'auto' or a positive integer (got '" + s + "')");
  return static_cast<int>(v);
}

void register_collect_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("collect", "measure a plan's candidates on the GPUs (resumable)");
  static CollectOptions o;
  cmd->add_option("--plan", o.plan_path, "plan file (cks plan make)")->required();
  cmd->add_option("--registry", o.registry_path, "registry database to write (created if absent)")->required();
  cmd->add_option("--gpus", o.gpus, "device indices, comma-separated (default: every visible GPU)")->transform(uint_in(0, 1023))->delimiter(',');
  cmd->add_option("--jobs", o.jobs, "parallel nvcc processes (0: from cores and memory)")->transform(uint_in(0, 4096))->capture_default_str();
  cmd->add_option("--time-budget", o.time_budget_s, "stop cleanly before this many seconds (0: no limit)")->check(non_negative_real())
      ->capture_default_str();
  cmd->add_option("--checkpoint", o.checkpoint_path, "durable copy of the registry, written periodically and at exit");
  cmd->add_option("--checkpoint-every", o.checkpoint_every_s, "seconds between checkpoints")->check(positive_real())->capture_default_str();
  cmd->add_option("--backend", o.backend, "cuda, or fake (fault injection, no GPU)")->capture_default_str();
  cmd->add_option("--fault", o.fault_spec, "fake backend: faults to inject, e.g. 'crash@<id>;hang@<id>;slow=1000'");
  cmd->add_option("--seed", o.seed, "fake backend: seed of crash:p= draws")->transform(seed())->capture_default_str();
  cmd->add_flag("--real-compile", o.real_compile, "fake backend: compile the kernels with nvcc anyway");
  cmd->add_option("--fake-compile-seconds", o.fake_compile_s, "fake backend: simulated compile time per batch")->check(non_negative_real())
      ->capture_default_str();
  cmd->add_option("--worker", o.worker_exe, "cks-worker executable (default: next to cks)");
  cmd->add_option("--pool-gb", o.pool_gb, "device memory pool per worker in GB (0: worker default)")->check(non_negative_real())
      ->capture_default_str();
  cmd->add_option("--kernels-per-tu", o.kernels_per_tu, "kernels per compiled library")->transform(uint_in(1, 4096))->capture_default_str();
  cmd->add_option("--mem-limit-gb", o.mem_limit_gb, "compile memory budget in GB (0: MemAvailable)")->check(non_negative_real())->capture_default_str();
  cmd->add_option("--cache-dir", o.cache_dir, "kernel library cache")->capture_default_str();
  cmd->add_option("--cutlass-dir", o.cutlass_dir, "CUTLASS root (default: the configured one)");
  cmd->add_option("--nvcc", o.nvcc, "nvcc executable")->capture_default_str();
  cmd->add_option("--deadline", o.deadline_s, "seconds a measurement (or set-up) may take before it is a timeout")->check(positive_real())
      ->capture_default_str();
  cmd->add_option("--heartbeat-timeout", o.heartbeat_timeout_s, "seconds of worker silence that count as a hang")->check(positive_real())
      ->capture_default_str();
  cmd->add_option("--max-attempts", o.max_attempts, "crash/timeout attempts per candidate before quarantine")->transform(uint_in(1, 1000000))
      ->capture_default_str();
  cmd->add_option("--cut-factor", o.cut_factor, "stop candidates slower than this x the group's best (0: off)")->check(non_negative_real())
      ->capture_default_str();
  cmd->add_option("--progress-every", o.progress_every_s, "seconds between progress lines (0: none)")->check(non_negative_real())
      ->capture_default_str();
  cmd->callback([] {
    o.handle_signals = true;
    o.command = own_command_line();
    const CollectSummary s = collect(o);
    std::fprintf(stderr, "%s", format_summary(s).c_str());
  });
}

void register_plan_command(CLI::App& app) {
  auto* plan = app.add_subcommand("plan", "build and inspect collection plans");
  plan->require_subcommand(1);

  auto* make = plan->add_subcommand("make", "groups of a shape set x sampled candidates -> a plan file");
  static PlanMakeOptions mo;
  static std::string layouts, budget = "auto", out;
  auto* shapes = make->add_option("--shapes", mo.shapes_csv, "groups from a cks shapes CSV");
  make->add_option("--set", mo.shape_set, "groups from a shape set: paper, heldout or llm")->excludes(shapes);
  make->add_option("--exclude-set", mo.exclude_set, "drop groups whose shape is in this set (paper, heldout, llm)");
  make->add_option("--exclude-shapes", mo.exclude_shapes, "drop groups whose shape is in this cks shapes CSV");
  make->add_option("--pick", mo.pick, "keep a seeded random N of the groups, in draw order (0: all)")->transform(count())->capture_default_str();
  static std::string knobs = "all";
  make->add_option("--knobs", knobs, "exhaustive: all knob settings of each kernel, or default only")
      ->capture_default_str();
  make->add_option("--seed", mo.seed, "seed of the shape set and of the sampling draws")->transform(seed())->capture_default_str();
  make->add_option("--layouts", layouts, "only these layouts, comma-separated (e.g. tn,nt)");
  make->add_option("--limit-groups", mo.limit_groups, "keep the first N groups (0: all)")->transform(count())->capture_default_str();
  make->add_option("--policy", mo.policy, "biased-diverse, uniform, top or exhaustive")->capture_default_str();
  make->add_option("--alpha", mo.alpha, "biased-diverse: fraction of the budget from the top")->check(fraction())->capture_default_str();
  make->add_option("--budget", budget, "candidates per group: a number or auto (paper's rule)")->capture_default_str();
  make->add_option("--pool", mo.pool, "kernel-ID file restricting the pool (required for exhaustive)");
  make->add_option("--group-set", mo.group_set, "set the groups belong to: train, eval, proof, ...")
      ->capture_default_str();
  make->add_option("--preset", mo.preset, "hardware preset for scores and tags")->capture_default_str();
  make->add_option("--name", mo.name, "plan name (default: the output file's stem)");
  make->add_option("--out", out, "plan file to write")->required();
  make->callback([] {
    mo.layouts = layouts.empty() ? std::vector<Layout>{} : parse_layouts(layouts);
    mo.budget = parse_budget(budget);
    if (knobs != "all" && knobs != "default") throw Error("--knobs must be all or default, not '" + knobs + "'");
    if (knobs == "default" && mo.policy != "exhaustive") throw Error("--knobs applies to --policy exhaustive only");
    mo.default_knobs = knobs == "default";
    if (mo.name.empty()) mo.name = fs::path(out).stem().string();
    const Plan p = make_plan(mo, fs::path(out).parent_path().string());
    write_plan(p, out);
    std::fprintf(stderr, "cks plan make: %s: %zu groups, %zu candidates\n", out.c_str(), p.groups.size(),
                 p.candidates());
  });

  auto* rem = plan->add_subcommand("remeasure", "a seeded random sample of ok measurements, planned again "
                                                "(repeatability check)");
  static RemeasureOptions ro;
  static SourceOpts rsrc;
  static std::string rlayouts, rout;
  add_source(rem, rsrc);
  rem->add_option("--fraction", ro.fraction, "share of the source's ok kernel rows to re-measure")->check(fraction())->capture_default_str();
  rem->add_option("--min-rows", ro.min_rows, "re-measure at least this many rows")->transform(count())->capture_default_str();
  rem->add_option("--seed", ro.seed, "seed of the draw")->transform(seed())->capture_default_str();
  rem->add_option("--pool", ro.pool, "only kernels listed in this kernel-ID file");
  rem->add_option("--kernels", ro.kernels,
                  "two-stage sample: draw this many kernels at random first, then the rows from theirs only "
                  "(bounds what the lease compiles; 0 = any kernel)")
      ->capture_default_str()
      ->transform(count());
  rem->add_option("--set", ro.set, "only groups of this set");
  rem->add_option("--layouts", rlayouts, "only these layouts, comma-separated");
  rem->add_option("--name", ro.name, "plan name (default: the output file's stem)");
  rem->add_option("--out", rout, "plan file to write")->required();
  rem->callback([] {
    ro.layouts = rlayouts.empty() ? std::vector<Layout>{} : parse_layouts(rlayouts);
    if (ro.name.empty()) ro.name = fs::path(rout).stem().string();
    write_registry_plan("remeasure", rsrc, rout, [](const Registry& reg) { return make_remeasure_plan(reg, ro); });
  });

  auto* lead = plan->add_subcommand("leaders", "every runtime-knob variant of each measured group's fastest kernels "
                                               "(evaluation groups: knobs adaptively around the leaders)");
  static LeadersOptions lo;
  static SourceOpts lsrc;
  static std::string llayouts, lout;
  add_source(lead, lsrc);
  lead->add_option("--top", lo.top, "leaders per group: the kernels with the highest ok throughput")->transform(count())->capture_default_str();
  lead->add_option("--set", lo.set, "groups of this set (empty: any)")->capture_default_str();
  lead->add_option("--layouts", llayouts, "only these layouts, comma-separated");
  lead->add_option("--max-attempts", lo.max_attempts, "crash/timeout attempts that make a candidate final (as cks collect)")->transform(uint_in(1, 1000000))
      ->capture_default_str();
  lead->add_option("--name", lo.name, "plan name (default: the output file's stem)");
  lead->add_option("--out", lout, "plan file to write")->required();
  lead->callback([] {
    lo.layouts = llayouts.empty() ? std::vector<Layout>{} : parse_layouts(llayouts);
    if (lo.name.empty()) lo.name = fs::path(lout).stem().string();
    write_registry_plan("leaders", lsrc, lout, [](const Registry& reg) { return make_leaders_plan(reg, lo); });
  });

  auto* remaining = plan->add_subcommand("remaining", "a plan less what a registry already measured (resume elsewhere)");
  static SourceOpts rem_src;
  static std::string rem_plan, rem_out;
  static int rem_attempts = 2;
  remaining->add_option("plan", rem_plan, "plan file")->required();
  add_source(remaining, rem_src);
  remaining->add_option("--max-attempts", rem_attempts, "crash/timeout attempts that make a candidate final (as cks collect)")->transform(uint_in(1, 1000000))
      ->capture_default_str();
  remaining->add_option("--out", rem_out, "plan file to write")->required();
  remaining->callback([] {
    const Plan p = read_plan(rem_plan);
    auto source = open_data(rem_src.registry, rem_src.data);
    RegistryOptions ropt;
    ropt.create = false;
    Registry reg(source->path(), ropt);
    const Plan left = remaining_plan(p, reg, rem_attempts, fs::path(rem_out).stem().string());
    write_plan(left, rem_out);
    std::fprintf(stderr, "cks plan remaining: %s: %zu of %zu groups, %zu of %zu candidates left\n", rem_out.c_str(),
                 left.groups.size(), p.groups.size(), left.candidates(), p.candidates());
  });

  auto* merge = plan->add_subcommand("merge", "concatenate plans into one (distinct groups, or --union)");
  static std::vector<std::string> merge_in;
  static std::string merge_out, merge_name;
  merge->add_option("plans", merge_in, "plan files, in measurement order")->required();
  merge->add_option("--out", merge_out, "plan file to write")->required();
  merge->add_option("--name", merge_name, "plan name (default: the output file's stem)");
  static bool merge_union = false;
  merge->add_flag("--union", merge_union,
                  "join a group that appears in several plans (first place kept, new candidates appended)");
  merge->callback([] {
    const std::string name = merge_name.empty() ? fs::path(merge_out).stem().string() : merge_name;
    const Plan p = merge_plans(merge_in, fs::path(merge_out).parent_path().string(), name, merge_union);
    write_plan(p, merge_out);
    std::fprintf(stderr, "cks plan merge: %s: %zu groups, %zu candidates\n", merge_out.c_str(), p.groups.size(),
                 p.candidates());
  });

  auto* show = plan->add_subcommand("show", "summarise a plan, one row per group");
  static std::string show_path, format;
  show->add_option("plan", show_path, "plan file")->required();
  add_format(show, format);
  show->callback([] {
    const Format f = parse_format(format);
    const Plan p = read_plan(show_path);
    Table t({"group", "set", "m", "n", "k", "layout", "policy", "budget", "candidates", "kernels", "source"});
    for (const auto& pg : p.groups) {
      const GroupInfo& g = pg.group;
      std::set<std::string> kernels;
      for (const auto& c : pg.candidates) kernels.insert(c.first);
      t.add_row({g.key, g.set, int64_t{g.m}, int64_t{g.n}, int64_t{g.k}, std::string(to_string(g.layout)), g.policy,
                 int64_t{g.budget}, static_cast<int64_t>(pg.candidates.size()), static_cast<int64_t>(kernels.size()),
                 pg.pool.empty() ? std::string("list") : "exhaustive:" + pg.pool});
    }
    std::fprintf(stderr, "plan '%s' (%s): %zu groups, %zu candidates\n", p.name.c_str(), p.created_by.c_str(),
                 p.groups.size(), p.candidates());
    t.write(std::cout, f);
  });
}

}  // namespace

void register_collect(CLI::App& app) {
  register_collect_command(app);
  register_plan_command(app);
}

}  // namespace cks::cli
