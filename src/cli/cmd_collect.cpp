// cks collect — run (or resume) a collection plan on the GPUs; cks plan make/show — build and
// summarise plans. See docs/monitor.md.
#include <cmath>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iostream>
#include <map>
#include <set>

#include "cks/models.hpp"
#include "cks/monitor.hpp"
#include "cks/plan.hpp"
#include "cks/selector.hpp"
#include "cli/commands.hpp"
#include "cli/selector_opts.hpp"
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
  ropt.read_only = true;
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

// `cks plan picks|sidebyside`: the groups of a registry set (or of every set) and the selection
// methods whose picks are planned: the deployed selector (`cks select`'s defaults with --model),
// the same model ranking the whole catalogue, and the static score.
struct PicksCli {
  SourceOpts src;
  std::string set = "eval", layouts, model, methods = "deployed,exhaustive,static", out, name, groups_plan;
  size_t top = 16, exhaustive_top = 16, static_top = 8;
  size_t limit_groups = 0, pick = 0;
  uint64_t seed = 0;
};

void add_picks_options(CLI::App* cmd, PicksCli& c) {
  add_source(cmd, c.src);
  cmd->add_option("--set", c.set, "groups of this set (empty: every set but sbs)")->capture_default_str();
  cmd->add_option("--layouts", c.layouts, "only these layouts, comma-separated");
  cmd->add_option("--groups", c.groups_plan,
                  "take the groups from this plan file (e.g. cks plan make --set family) instead of the source's "
                  "groups: new groups, nothing measured yet");
  cmd->add_option("--limit-groups", c.limit_groups, "the first N groups in key order (0: all)")->transform(count())->capture_default_str();
  cmd->add_option("--pick", c.pick, "a seeded random N of the groups, kept in key order (0: all)")->transform(count())->capture_default_str();
  cmd->add_option("--seed", c.seed, "seed of --pick")->transform(seed())->capture_default_str();
  cmd->add_option("--model", c.model, "model file (default: the shipped models/default.json, or $CKS_MODEL)");
  cmd->add_option("--methods", c.methods,
                  "selection methods, comma-separated, the deployed one first: deployed (cks select), prefilterN "
                  "(cks select --prefilter N, as deep as deployed), evidenceG:T (cks select --evidence-groups G "
                  "--evidence-top T, as deep as deployed), exhaustive (the model over the whole catalogue), "
                  "static (the static score)")
      ->capture_default_str();
  cmd->add_option("--top", c.top, "deployed: picks per group")->transform(positive_count())->capture_default_str();
  cmd->add_option("--exhaustive-top", c.exhaustive_top, "exhaustive: picks per group")->transform(positive_count())->capture_default_str();
  cmd->add_option("--static-top", c.static_top, "static: picks per group")->transform(positive_count())->capture_default_str();
  cmd->add_option("--name", c.name, "plan name (default: the output file's stem)");
  cmd->add_option("--out", c.out, "plan file to write")->required();
}

// The groups of a plan file (`path` non-empty; in key order, deduplicated), else the registry's.
std::vector<GroupInfo> groups_of(const Registry& reg, const std::string& path) {
  if (path.empty()) return reg.groups();
  std::map<std::string, GroupInfo> by_key;
  for (auto& g : read_plan(path).groups) by_key.emplace(g.group.key, std::move(g.group));
  if (by_key.empty()) throw Error(path + ": the plan has no group");
  std::vector<GroupInfo> out;
  for (auto& [key, g] : by_key) out.push_back(std::move(g));
  return out;
}

// Runs `make` with the registry's groups and the methods' selectors.
using MakePicks = std::function<Plan(const std::vector<GroupInfo>&, const Registry&, const SelectionMethods&)>;
void run_picks(const char* command, const PicksCli& c, const MakePicks& make) {
  const std::vector<Layout> layouts = c.layouts.empty() ? std::vector<Layout>{} : parse_layouts(c.layouts);
  const SelectionMethods sel(c.model, c.methods, {c.top, c.exhaustive_top, c.static_top});
  auto source = open_data(c.src.registry, c.src.data);
  RegistryOptions ropt;
  ropt.read_only = true;  // plans are made from the data, never written to it
  const Registry reg(source->path(), ropt);
  std::vector<GroupInfo> groups;
  for (auto& g : groups_of(reg, c.groups_plan)) {
    if (c.set.empty() ? g.set == "sbs" : g.set != c.set) continue;
    if (!layouts.empty() && std::find(layouts.begin(), layouts.end(), g.layout) == layouts.end()) continue;
    groups.push_back(std::move(g));
    if (c.limit_groups && groups.size() == c.limit_groups) break;
  }
  if (groups.empty()) throw Error("no group of set '" + c.set + "'" + (layouts.empty() ? "" : " in --layouts") + " in the source");
  if (c.pick > 0 && c.pick < groups.size()) {
    // The N groups with the smallest fnv1a64("<seed>:<key>"): a seeded draw that a group keeps
    // whatever the other groups are.
    std::vector<std::pair<uint64_t, size_t>> order;
    for (size_t i = 0; i < groups.size(); ++i)
      order.push_back({fnv1a64(std::to_string(c.seed) + ":" + groups[i].key), i});
    std::sort(order.begin(), order.end());
    std::vector<size_t> keep;
    for (size_t i = 0; i < c.pick; ++i) keep.push_back(order[i].second);
    std::sort(keep.begin(), keep.end());
    std::vector<GroupInfo> picked;
    for (size_t i : keep) picked.push_back(std::move(groups[i]));
    groups = std::move(picked);
  }
  std::fprintf(stderr, "cks plan %s: ranking %zu groups with %zu methods\n", command, groups.size(), sel.methods.size());
  const Plan p = make(groups, reg, sel);
  write_plan(p, c.out);
  std::set<std::string> kernels;
  for (const auto& g : p.groups)
    for (const auto& cand : g.candidates) kernels.insert(cand.first);
  std::fprintf(stderr, "cks plan %s: %s: %zu groups, %zu candidates, %zu kernels\n", command, c.out.c_str(),
               p.groups.size(), p.candidates(), kernels.size());
}

void register_picks_commands(CLI::App* plan) {
  auto* picks = plan->add_subcommand(
      "picks", "what each selection method really returns for a set's groups (top-K, knob variants of the first "
               "picks), less what the registry already measured: closes the evaluation's coverage gap");
  static PicksCli pc;
  static PicksOptions po;
  add_picks_options(picks, pc);
  picks->add_option("--knob-top", po.knob_top, "the deployed picks whose kernels get every knob variant, planned first")
      ->transform(count())->capture_default_str();
  picks->add_option("--max-attempts", po.max_attempts, "crash/timeout attempts that make a candidate final (as cks collect)")
      ->transform(positive_count())->capture_default_str();
  picks->add_flag("--include-measured", po.include_measured, "plan picks that already have a final row too");
  picks->add_option("--priority", po.priority,
                    "compile priority tier of the groups (0 first; a later tier's kernels wait for every earlier "
                    "tier's)")
      ->transform(uint_in(0, 1000))->capture_default_str();
  picks->callback([] {
    po.name = pc.name.empty() ? fs::path(pc.out).stem().string() : pc.name;
    run_picks("picks", pc, [](const std::vector<GroupInfo>& g, const Registry& reg, const SelectionMethods& m) {
      return make_picks_plan(g, &reg, m.methods, po);
    });
  });

  auto* sbs = plan->add_subcommand(
      "sidebyside", "the picks and each group's fastest measured candidates, measured REPS times in one stretch "
                    "(groups <key>~r<i> of set sbs): regret like with like (cks analyze sidebyside)");
  static PicksCli sc;
  static SideBySidePlanOptions so;
  add_picks_options(sbs, sc);
  sbs->add_option("--reps", so.reps, "repetitions (2-16)")->transform(uint_in(2, 16))->capture_default_str();
  sbs->add_option("--measured-top", so.measured_top, "the group's fastest measured kernels compared (best knobs each)")
      ->transform(count())->capture_default_str();
  sbs->add_option("--pick-top", so.pick_top, "the deployed method's picks compared")->transform(positive_count())->capture_default_str();
  sbs->add_option("--other-top", so.other_top, "every other method's picks compared")->transform(count())->capture_default_str();
  sbs->add_option("--round", so.round,
                  "round of these repetitions (groups <key>~s<R>r<i>; 1: <key>~r<i>): a later round is measured "
                  "afresh, and cks analyze sidebyside reads each group's latest round")
      ->transform(uint_in(1, 999))->capture_default_str();
  sbs->add_option("--priority", so.priority, "compile priority tier of the groups (0 first)")->transform(uint_in(0, 1000))->capture_default_str();
  sbs->add_flag("--only-differing", so.only_differing,
                "plan only the base groups where another method's first pick differs from the first method's");
  sbs->callback([] {
    so.name = sc.name.empty() ? fs::path(sc.out).stem().string() : sc.name;
    run_picks("sidebyside", sc, [](const std::vector<GroupInfo>& g, const Registry& reg, const SelectionMethods& m) {
      return make_sidebyside_plan(g, &reg, m.methods, so);
    });
  });

  auto* fill = plan->add_subcommand(
      "fill", "the kernels other plans compile, at default knobs, in every group of a set that lacks them: GPU "
              "work for a lease's idle GPU that needs no further compile");
  static SourceOpts fsrc;
  static std::vector<std::string> from;
  static std::string fset = "train", flayouts, fout, fname, fgroups;
  static FillOptions fo;
  add_source(fill, fsrc);
  fill->add_option("--from", from, "plans whose kernels are measured (comma-separated)")->required()->delimiter(',');
  fill->add_option("--set", fset, "groups of this set")->capture_default_str();
  fill->add_option("--groups", fgroups, "take the groups from this plan file instead of the source's");
  fill->add_option("--layouts", flayouts, "only these layouts, comma-separated");
  fill->add_option("--seed", fo.seed, "seed of the group order")->transform(seed())->capture_default_str();
  fill->add_option("--priority", fo.priority, "compile priority tier of the groups")->transform(uint_in(0, 1000))->capture_default_str();
  fill->add_option("--name", fname, "plan name (default: the output file's stem)");
  fill->add_option("--out", fout, "plan file to write")->required();
  fill->callback([] {
    fo.name = fname.empty() ? fs::path(fout).stem().string() : fname;
    const std::vector<Layout> layouts = flayouts.empty() ? std::vector<Layout>{} : parse_layouts(flayouts);
    std::map<Layout, std::set<std::string>> kernels;
    for (const auto& path : from)
      for (const auto& g : read_plan(path).groups)
        for (const auto& c : g.candidates) kernels[g.group.layout].insert(c.first);
    auto source = open_data(fsrc.registry, fsrc.data);
    RegistryOptions ropt;
    ropt.read_only = true;  // plans are made from the data, never written to it
    const Registry reg(source->path(), ropt);
    std::vector<GroupInfo> groups;
    for (auto& g : groups_of(reg, fgroups))
      if (g.set == fset && (layouts.empty() || std::find(layouts.begin(), layouts.end(), g.layout) != layouts.end()))
        groups.push_back(std::move(g));
    if (groups.empty()) throw Error("no group of set '" + fset + "' in the source");
    const Plan p = make_fill_plan(groups, reg, kernels, fo);
    write_plan(p, fout);
    std::fprintf(stderr, "cks plan fill: %s: %zu groups, %zu candidates\n", fout.c_str(), p.groups.size(), p.candidates());
  });

  auto* active = plan->add_subcommand(
      "active", "active learning: the model's own unmeasured first picks per group (--methods, and the model over "
                "the whole catalogue) and exploration picks where its evidence is thinnest, under a kernel budget");
  static PicksCli ac;
  static ActiveOptions ao;
  ac.set = "train";
  ac.methods = "deployed";
  add_picks_options(active, ac);
  active->add_option("--picks", ao.top, "each method's first picks planned per group")->transform(count())->capture_default_str();
  active->add_option("--explore", ao.explore,
                     "exploration picks per group: of the exhaustive ranking's first --explore-depth, the candidates "
                     "whose kernel has the fewest ok measurements anywhere (0: no exhaustive ranking at all, only the "
                     "--methods' picks: fast)")
      ->transform(count())->capture_default_str();
  active->add_option("--explore-depth", ao.explore_depth, "depth of the exhaustive ranking searched for exploration")
      ->transform(count())->capture_default_str();
  active->add_option("--max-kernels", ao.max_kernels,
                     "plan at most this many kernels (those most groups want first; 0: no limit): a lease compiles "
                     "every kernel it measures")
      ->transform(count())->capture_default_str();
  active->add_option("--priority", ao.priority, "compile priority tier of the groups (0 first)")->transform(uint_in(0, 1000))->capture_default_str();
  active->callback([] {
    ao.name = ac.name.empty() ? fs::path(ac.out).stem().string() : ac.name;
    run_picks("active", ac, [](const std::vector<GroupInfo>& g, const Registry& reg, const SelectionMethods& m) {
      SelectorOptions ex;
      ex.prefilter = 0;
      const Selector explorer(m.model, ex);
      return make_active_plan(g, reg, m.methods, explorer, ao);
    });
  });
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
  cmd->add_option("--fault", o.fault_spec, "faults to inject, e.g. 'crash@<id>;hang@<id>;slow=1000' (fake backend: every kind of worker/fake.hpp; cuda backend: hang, launch_error and misaligned, real device faults launched in place of the kernel)");
  cmd->add_option("--seed", o.seed, "fake backend: seed of crash:p= draws")->transform(seed())->capture_default_str();
  cmd->add_flag("--real-compile", o.real_compile, "fake backend: compile the kernels with nvcc anyway");
  cmd->add_option("--fake-compile-seconds", o.fake_compile_s, "fake backend: simulated compile time per batch")->check(non_negative_real())
      ->capture_default_str();
  cmd->add_option("--worker", o.worker_exe, "cks-worker executable (default: next to cks)");
  cmd->add_option("--pool-gb", o.pool_gb, "device memory pool per worker in GB (0: worker default)")->check(non_negative_real())
      ->capture_default_str();
  cmd->add_option("--kernels-per-tu", o.kernels_per_tu, "kernels per compiled library")->transform(uint_in(1, 4096))->capture_default_str();
  cmd->add_option("--mem-limit-gb", o.mem_limit_gb, "compile memory budget in GB (0: MemAvailable)")->check(non_negative_real())->capture_default_str();
  cmd->add_option("--mem-per-kernel-gb", o.mem_per_kernel_gb,
                  "compile memory budgeted per kernel of a TU (the sidecars' max_rss_mb measure it)")
      ->check(positive_real())->capture_default_str();
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
  make->add_option("--set", mo.shape_set, "groups from a shape set: paper, heldout, llm, llm-train or family")->excludes(shapes);
  make->add_option("--exclude-set", mo.exclude_set, "drop groups whose shape is in this set (paper, heldout, llm, llm-train, family)");
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

  register_picks_commands(plan);

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
    ropt.read_only = true;
    const Registry reg(source->path(), ropt);
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

  auto* split = plan->add_subcommand(
      "split", "cut a plan into N plans of about equal estimated GPU time (one per task of a cluster job array)");
  static std::string split_in, split_dir, split_format;
  static size_t split_parts = 2;
  split->add_option("plan", split_in, "plan file")->required();
  split->add_option("--parts", split_parts, "number of parts")->required()->transform(uint_in(1, 100000));
  split->add_option("--out-dir", split_dir, "directory of the parts: <stem>_p<i>of<N>.jsonl")->required();
  add_format(split, split_format);
  split->callback([] {
    const Format f = parse_format(split_format);
    const Plan p = read_plan(split_in);
    const std::string stem = fs::path(split_in).stem().string();
    std::error_code ec;
    fs::create_directories(split_dir, ec);
    if (ec) throw Error("cannot create '" + split_dir + "': " + ec.message());
    const auto parts = split_plan(p, split_parts, fs::path(split_in).parent_path().string(), split_dir);
    Table t({"part", "plan", "groups", "candidates", "kernels", "estimated_s"});
    for (size_t i = 0; i < parts.size(); ++i) {
      const std::string out =
          (fs::path(split_dir) / (stem + "_p" + std::to_string(i + 1) + "of" + std::to_string(parts.size()) + ".jsonl"))
              .string();
      write_plan(parts[i].plan, out);
      std::set<std::string> kernels;
      for (const auto& g : parts[i].plan.groups)
        for (const auto& c : g.candidates) kernels.insert(c.first);
      t.add_row({static_cast<int64_t>(i + 1), out, static_cast<int64_t>(parts[i].plan.groups.size()),
                 static_cast<int64_t>(parts[i].plan.candidates()), static_cast<int64_t>(kernels.size()),
                 std::round(parts[i].estimated_s)});
    }
    std::fprintf(stderr, "cks plan split: %s: %zu groups, %zu candidates in %zu parts\n", split_in.c_str(),
                 p.groups.size(), p.candidates(), parts.size());
    t.write(std::cout, f);
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
