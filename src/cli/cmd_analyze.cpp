// `cks analyze features|sampling|counters|repeatability|noise|failures`: retrospective studies of the
// measured corpus (docs/analysis.md).
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>

#include <nlohmann/json.hpp>

#include "cks/analysis.hpp"
#include "cks/registry.hpp"
#include "common/json_limits.hpp"
#include "cli/commands.hpp"
#include "cli/selector_opts.hpp"
#include "cli/util.hpp"

namespace cks::cli {
namespace {

namespace fs = std::filesystem;

// Options every analysis shares: the data, the hardware preset, the output.
struct CommonOpts {
  SourceOpts source;
  std::string preset = kDefaultPreset;
  std::string format;
  std::string out_dir;
  std::vector<std::string> layouts;
};

void add_common(CLI::App* cmd, CommonOpts& o) {
  add_source(cmd, o.source);
  cmd->add_option("--preset", o.preset, "hardware preset of the features, tags and static score")
      ->capture_default_str();
  add_format(cmd, o.format);
  cmd->add_option("--out-dir", o.out_dir,
                  "write every table as a file <name>.<format> in this directory (created) instead of stdout");
  cmd->add_option("--layouts", o.layouts, "only groups of these layouts, comma-separated (default: every layout)")
      ->delimiter(',');
}

const AnalysisProgress& stderr_progress() {
  static const AnalysisProgress p = [](std::string_view what, size_t done, size_t total) {
    progress(what, done, total ? total : done + 1);
  };
  return p;
}

// The registry of --registry or --data, opened read-only (with the shard merge it may need).
struct ReadOnlyData {
  std::unique_ptr<DataSource> source;
  Registry reg;
  explicit ReadOnlyData(const SourceOpts& o)
      : source(open_data(o.registry, o.data)), reg(source->path(), RegistryOptions{.read_only = true}) {}
};

AnalysisData read_data(const CommonOpts& o, const HardwareDesc& hw, AnalysisLoadOptions lo) {
  ReadOnlyData source(o.source);
  lo.layouts = parse_layouts(o.layouts);
  AnalysisData d = load_analysis_data(source.reg, hw, lo, stderr_progress());
  if (d.skipped_unknown)
    std::cerr << "cks: note: " << d.skipped_unknown << " measured rows are not candidates of this build's catalogue (skipped)\n";
  if (d.skipped_groups)
    std::cerr << "cks: note: " << d.skipped_groups << " groups have no status-ok measurement (skipped)\n";
  return d;
}

// Candidates and cut candidates over the groups (the one-line summary on stderr).
std::pair<size_t, size_t> candidate_counts(const AnalysisData& data) {
  size_t rows = 0, cut = 0;
  for (const auto& g : data.groups) {
    rows += g.size();
    cut += g.cut_count();
  }
  return {rows, cut};
}

// Creates --out-dir (if given) before any work, so a bad path fails at once.
void prepare_out_dir(const std::string& out_dir) {
  if (out_dir.empty()) return;
  std::error_code ec;
  fs::create_directories(out_dir, ec);
  if (ec || !fs::is_directory(out_dir)) throw Error("--out-dir: cannot create directory '" + out_dir + "'");
}

// Writes `t` to stdout, or to <out_dir>/<name>.<format> (the path then goes to stdout).
void emit(const Table& t, const std::string& name, Format f, const std::string& out_dir) {
  if (out_dir.empty()) {
    t.write(std::cout, f);
    return;
  }
  const std::string path = (fs::path(out_dir) / (name + "." + std::string(to_string(f)))).string();
  std::ofstream os(path);
  if (!os) throw Error("cannot write " + path);
  t.write(os, f);
  os.close();
  if (!os) throw Error("cannot write " + path + " (disk full?)");
  std::cout << path << '\n';
}

void register_features_study(CLI::App* analyze) {
  auto* cmd = analyze->add_subcommand(
      "features", "Spearman rho of every numeric feature with throughput: pooled and within groups, by partition");
  auto o = std::make_shared<CommonOpts>();
  auto groups = std::make_shared<std::string>("eval");
  auto exclude_cut = std::make_shared<bool>(false);
  add_common(cmd, *o);
  cmd->add_option("--groups", *groups, "eval (exhaustive), train, or all groups")->capture_default_str();
  cmd->add_flag("--exclude-cut", *exclude_cut,
                "leave out the cut candidates (default: kept at their warm-up throughput)");
  cmd->callback([o, groups, exclude_cut] {
    const Format f = parse_format(o->format);
    AnalysisLoadOptions lo;
    lo.groups = parse_group_selection(*groups);
    lo.include_cut = !*exclude_cut;
    const HardwareDesc hw = hw_preset(o->preset);
    prepare_out_dir(o->out_dir);
    const AnalysisData data = read_data(*o, hw, lo);
    const auto [rows, cut] = candidate_counts(data);
    std::cerr << "cks analyze features: " << data.groups.size() << " " << *groups << " groups, " << rows
              << " candidates (" << cut << " cut)\n";
    const auto study = feature_study(data, hw, stderr_progress());
    emit(feature_table(study), "features_" + *groups + (*exclude_cut ? "_nocut" : ""), f, o->out_dir);
  });
}

void register_sampling_study(CLI::App* analyze) {
  auto* cmd = analyze->add_subcommand(
      "sampling", "on the exhaustive eval groups: near-optimal tail, regret and P_eps vs budget per policy, alpha ablation");
  auto o = std::make_shared<CommonOpts>();
  auto so = std::make_shared<SamplingStudyOptions>();
  auto table = std::make_shared<std::string>("curves");
  add_common(cmd, *o);
  cmd->add_option("--budgets", so->budgets, "budgets B of the regret and P_eps curves")->transform(count())
      ->delimiter(',')
      ->capture_default_str();
  cmd->add_option("--eps", so->eps, "tolerances eps of 'within eps of the oracle'")->check(finite_real())->delimiter(',')->capture_default_str();
  cmd->add_option("--reps", so->reps, "repetitions of the stochastic policies (seeds seed .. seed+reps-1)")->transform(count())
      ->capture_default_str();
  cmd->add_option("--seed", so->seed, "first seed")->transform(seed())->capture_default_str();
  cmd->add_option("--alpha", so->alpha, "biased-diverse alpha of the budget curves")->check(finite_real())->capture_default_str();
  cmd->add_option("--alphas", so->alphas, "alphas of the ablation")->check(finite_real())->delimiter(',')->capture_default_str();
  cmd->add_option("--alpha-budgets", so->alpha_budgets, "budgets of the alpha ablation")->transform(count())
      ->delimiter(',')
      ->capture_default_str();
  cmd->add_option("--table", *table, "table on stdout without --out-dir: curves or tail")->capture_default_str();
  cmd->callback([o, so, table] {
    const Format f = parse_format(o->format);
    if (*table != "curves" && *table != "tail")
      throw Error("unknown --table '" + *table + "' (expected curves or tail)");
    validate(*so);
    AnalysisLoadOptions lo;
    lo.groups = GroupSelection::eval;
    lo.include_cut = true;  // the universe is every measured candidate
    const HardwareDesc hw = hw_preset(o->preset);
    prepare_out_dir(o->out_dir);
    const AnalysisData data = read_data(*o, hw, lo);
    const auto [rows, cut] = candidate_counts(data);
    std::cerr << "cks analyze sampling: " << data.groups.size() << " eval groups, " << rows << " candidates (" << cut
              << " cut), " << so->reps << " repetitions\n";
    const SamplingStudy study = sampling_study(data, hw, *so, stderr_progress());
    if (o->out_dir.empty()) {
      emit(*table == "tail" ? sampling_tail_table(study) : sampling_curve_table(study), "", f, "");
    } else {
      emit(sampling_tail_table(study), "sampling_tail", f, o->out_dir);
      emit(sampling_curve_table(study), "sampling_curves", f, o->out_dir);
    }
  });
}

void register_counter_study(CLI::App* analyze) {
  auto* cmd = analyze->add_subcommand(
      "counters", "hardware counters of profiled candidates (cks profile import) vs throughput: pooled and within groups");
  auto o = std::make_shared<CommonOpts>();
  add_common(cmd, *o);
  cmd->callback([o] {
    const Format f = parse_format(o->format);
    const HardwareDesc hw = hw_preset(o->preset);
    prepare_out_dir(o->out_dir);
    ReadOnlyData source(o->source);
    const Registry& reg = source.reg;
    AnalysisLoadOptions lo;
    lo.groups = GroupSelection::eval;
    lo.include_cut = true;
    lo.layouts = parse_layouts(o->layouts);
    AnalysisData data;  // the corpus throughput of the profiled candidates, where the data has it
    try {
      data = load_analysis_data(reg, hw, lo, stderr_progress());
    } catch (const Error& e) {
      std::cerr << "cks: note: " << e.what() << "; profiles are paired with their own harness timing\n";
    }
    const CounterStudy s = counter_study(reg, data, hw);
    std::cerr << "cks analyze counters: " << s.profiles << " profiles in " << s.groups << " groups (" << s.paired_corpus
              << " paired with the corpus measurement, the rest with the harness's timing under ncu)\n";
    if (o->out_dir.empty()) {
      std::vector<CounterCorrelation> all = s.counters;
      all.insert(all.end(), s.parameter_counter.begin(), s.parameter_counter.end());
      emit(counter_table(all), "", f, "");
    } else {
      emit(counter_table(s.counters), "counters", f, o->out_dir);
      emit(counter_table(s.parameter_counter), "counters_parameters", f, o->out_dir);
      emit(counter_profile_table(reg, data, hw), "counter_profiles", f, o->out_dir);
    }
  });
}

// `cks profile plan|import`: the candidates of the counter study and their Nsight Compute
// profiles (the device side is scripts/device/profile.sh).
void register_profile(CLI::App& app) {
  auto* profile = app.add_subcommand("profile", "hardware-counter profiles for the counter study: plan, import");
  profile->require_subcommand(1);

  auto* plan = profile->add_subcommand("plan", "choose candidates of exhaustive groups, spread over their throughput ranks");
  auto po = std::make_shared<ProfilePlanOptions>();
  auto pc = std::make_shared<CommonOpts>();
  auto layout = std::make_shared<std::string>("tn");
  add_common(plan, *pc);
  plan->add_option("--layout", *layout, "layout of the groups")->capture_default_str();
  plan->add_option("--groups", po->groups, "evaluation groups (seeded choice)")->transform(count())->capture_default_str();
  plan->add_option("--per-group", po->per_group, "candidates per group, evenly spaced over its throughput ranks")->transform(count())
      ->capture_default_str();
  plan->add_option("--pool", po->pool, "kernel-ID file: only these kernels (e.g. the ones a lease compiles)");
  plan->add_option("--seed", po->seed, "seed of the group choice")->transform(seed())->capture_default_str();
  plan->callback([po, pc, layout] {
    const Format f = parse_format(pc->format);
    po->layout = parse_layout(*layout);
    const HardwareDesc hw = hw_preset(pc->preset);
    ReadOnlyData source(pc->source);
    const Registry& reg = source.reg;
    AnalysisLoadOptions lo;
    lo.groups = GroupSelection::eval;
    lo.include_cut = false;
    const AnalysisData data = load_analysis_data(reg, hw, lo, stderr_progress());
    const auto items = plan_profiles(data, reg, *po);
    std::cerr << "cks profile plan: " << items.size() << " candidates in " << po->groups << " groups\n";
    emit(profile_plan_table(items), "profile_plan", f, pc->out_dir);
  });

  auto* imp = profile->add_subcommand("import", "store the counters of a profile directory in a registry");
  auto plan_path = std::make_shared<std::string>();
  auto dir = std::make_shared<std::string>();
  auto registry = std::make_shared<std::string>();
  auto prov = std::make_shared<std::string>();
  auto fmt = std::make_shared<std::string>();
  imp->add_option("--plan", *plan_path, "the profile plan (cks profile plan, CSV)")->required();
  imp->add_option("--dir", *dir, "directory of <chunk>.results.tsv and <chunk>.csv files")->required();
  imp->add_option("--registry", *registry, "registry to write (created if absent)")->required();
  imp->add_option("--provenance", *prov,
                  "JSON file of the run's provenance: gpu_name, gpu_uuid, driver_version, cuda_version, git_sha, "
                  "host, started_at, ended_at, command; every other key goes to extra_json")
      ->required();
  add_format(imp, *fmt);
  imp->callback([plan_path, dir, registry, prov, fmt] {
    const Format f = parse_format(*fmt);
    const auto items = read_profile_plan(*plan_path);
    nlohmann::json j = parse_json_limited(read_file_limited(*prov, "provenance file", 16u << 20), *prov);
    if (!j.is_object()) throw Error(*prov + ": not a JSON object");
    RunInfo run;
    auto take = [&](const char* key, std::string& field) {
      if (j.contains(key)) {
        field = j[key].is_string() ? j[key].get<std::string>() : j[key].dump();
        j.erase(key);
      }
    };
    take("gpu_name", run.gpu_name);
    take("gpu_uuid", run.gpu_uuid);
    take("driver_version", run.driver_version);
    take("cuda_version", run.cuda_version);
    take("cutlass_version", run.cutlass_version);
    take("git_sha", run.git_sha);
    take("host", run.host);
    take("command", run.command);
    take("started_at", run.started_at);
    take("ended_at", run.ended_at);
    run.extra_json = j.dump();
    Registry reg(*registry, RegistryOptions{.exclusive = true});  // a writer: one at a time
    const ProfileImportStats st = import_profiles(reg, *dir, items, run);
    Table t({"run_uuid", "chunks", "items", "profiled", "unpaired", "rows"});
    t.add_row({st.run_uuid, static_cast<int64_t>(st.chunks), static_cast<int64_t>(st.items),
               static_cast<int64_t>(st.profiled), static_cast<int64_t>(st.unpaired), static_cast<int64_t>(st.rows)});
    t.write(std::cout, f);
  });
}

void register_repeatability_study(CLI::App* analyze) {
  auto* cmd = analyze->add_subcommand(
      "repeatability", "candidates measured ok in two runs: |dt|/t by run pair, small problems, cuBLAS, rank stability, clocks");
  auto o = std::make_shared<CommonOpts>();
  auto ro = std::make_shared<RepeatabilityOptions>();
  add_common(cmd, *o);
  cmd->add_option("--small-us", ro->small_us, "problems whose first time is below this are 'small' (microseconds)")->check(finite_real())
      ->capture_default_str();
  cmd->add_option("--min-group-pairs", ro->min_group_pairs, "kernel pairs a group needs for its rank correlation")->transform(count())
      ->capture_default_str();
  cmd->add_option("--clock-tolerance", ro->clock_tolerance_mhz, "SM clocks further apart than this differ (MHz)")->check(finite_real())
      ->capture_default_str();
  cmd->add_option("--top-share", ro->top_share, "the tail of largest differences whose clocks are compared")->check(finite_real())
      ->capture_default_str();
  cmd->callback([o, ro] {
    const Format f = parse_format(o->format);
    ro->layouts = parse_layouts(o->layouts);
    validate(*ro);
    prepare_out_dir(o->out_dir);
    ReadOnlyData source(o->source);
    const auto rows = repeatability_study(source.reg, *ro, stderr_progress());
    size_t pairs = 0;
    for (const auto& r : rows)
      if (r.run_a != "all") pairs += r.kernel_pairs;
    std::cerr << "cks analyze repeatability: " << pairs << " kernel pairs over " << (rows.size() > 1 ? rows.size() - 1 : 1)
              << " run pairs\n";
    emit(repeatability_table(rows), "repeatability", f, o->out_dir);
  });
}

void register_noise_study(CLI::App* analyze) {
  auto* cmd = analyze->add_subcommand(
      "noise", "noise within one measurement: std/mean of each ok row's timed rounds, by layout, set and kind");
  auto o = std::make_shared<CommonOpts>();
  auto no = std::make_shared<NoiseOptions>();
  add_common(cmd, *o);
  cmd->add_option("--set", no->set, "only groups of this set: train, eval, ... (default: every set)");
  cmd->add_option("--small-us", no->small_us, "rows whose mean is below this are 'small' (microseconds)")->check(non_negative_real())
      ->capture_default_str();
  cmd->add_option("--high-pct", no->high_pct, "a row is noisy when std/mean exceeds this (%)")->check(finite_real())->capture_default_str();
  cmd->callback([o, no] {
    const Format f = parse_format(o->format);
    no->layouts = parse_layouts(o->layouts);
    validate(*no);
    prepare_out_dir(o->out_dir);
    ReadOnlyData source(o->source);
    const NoiseStudy s = noise_study(source.reg, *no, stderr_progress());
    size_t rows = 0;
    for (const auto& r : s.rows)
      if (r.layout != "all" && r.set != "all") rows += r.rows;
    std::cerr << "cks analyze noise: " << rows << " ok rows with a std/mean; " << s.skipped
              << " ok rows without (fewer than two timed rounds)\n";
    emit(noise_table(s.rows), "noise", f, o->out_dir);
  });
}

void register_failure_study(CLI::App* analyze) {
  auto* cmd = analyze->add_subcommand(
      "failures", "CUTLASS attempts by status and catalogue axis: cut, launch errors, quarantines, never-ok kernels");
  auto o = std::make_shared<CommonOpts>();
  auto fo = std::make_shared<FailureOptions>();
  auto never_ok = std::make_shared<bool>(false);
  add_common(cmd, *o);
  cmd->add_option("--set", fo->set, "only groups of this set: train, eval, ... (default: every set)");
  cmd->add_option("--min-attempts", fo->min_attempts, "leave out rows with fewer attempts")->transform(count())->capture_default_str();
  cmd->add_flag("--never-ok", *never_ok, "the kernels without an ok row instead (attempts by status, first error)");
  cmd->callback([o, fo, never_ok] {
    const Format f = parse_format(o->format);
    fo->layouts = parse_layouts(o->layouts);
    validate(*fo);
    prepare_out_dir(o->out_dir);
    ReadOnlyData source(o->source);
    const FailureStudy s = failure_study(source.reg, *fo, stderr_progress());
    if (s.skipped_unknown)
      std::cerr << "cks: note: " << s.skipped_unknown
                << " kernels are in neither the registry's kernels table nor this build's catalogue (skipped)\n";
    const FailureRow& t = s.total;
    std::cerr << "cks analyze failures: " << t.attempts << " attempts of " << t.kernels << " kernels: " << t.ok
              << " ok, " << t.cut << " cut (" << format_double(std::round(t.cut_pct * 100) / 100) << " %), "
              << t.launch_error << " launch_error, " << t.quarantined << " quarantined, " << t.other_fail
              << " other failures; " << t.never_ok_kernels << " kernels never ok\n";
    constexpr size_t kListed = 20;
    for (size_t i = 0; i < std::min(s.never_ok.size(), kListed); ++i) {
      const KernelAttempts& k = s.never_ok[i];
      std::string counts;
      for (size_t st = 0; st < k.by_status.size(); ++st)
        if (k.by_status[st])
          counts += (counts.empty() ? "" : ", ") + std::to_string(k.by_status[st]) + " " + kStatuses[st];
      std::cerr << "  never ok: " << k.kernel_id << " " << k.canonical << ": " << k.attempts() << " attempts ("
                << counts << ")" << (k.first_error.empty() ? "" : "; first error: " + k.first_error) << '\n';
    }
    if (s.never_ok.size() > kListed)
      std::cerr << "  (" << s.never_ok.size() - kListed << " more never-ok kernels: --never-ok lists them all)\n";
    if (*never_ok) emit(never_ok_table(s.never_ok), "failures_never_ok", f, o->out_dir);
    else emit(failure_table(s.rows), "failures", f, o->out_dir);
  });
}

void register_sidebyside_study(CLI::App* analyze) {
  auto* cmd = analyze->add_subcommand(
      "sidebyside", "regret of the real picks from candidates re-measured together in one stretch (cks plan "
                    "sidebyside), with the noise floor and the rows flagged for a clock off the group's");
  auto o = std::make_shared<CommonOpts>();
  auto so = std::make_shared<SideBySideOptions>();
  auto model = std::make_shared<std::string>();
  auto methods = std::make_shared<std::string>("deployed,exhaustive,static");
  auto per_group = std::make_shared<std::string>();
  add_common(cmd, *o);
  cmd->add_option("--model", *model, "model file (default: the shipped models/default.json, or $CKS_MODEL)");
  cmd->add_option("--methods", *methods, "selection methods scored: deployed, prefilterN (cks select --prefilter N), evidenceG:T (cks select "
                  "--evidence-groups G --evidence-top T), exhaustive, static "
                  "(comma-separated)")
      ->capture_default_str();
  cmd->add_option("--clock-tolerance", so->clock_tolerance_mhz,
                  "rows whose SM clock is further than this from the reference (--clock-reference) are flagged and left out (MHz)")
      ->check(non_negative_real())
      ->capture_default_str();
  cmd->add_option("--clock-reference", so->clock_reference,
                  "a row's clock is compared with the median of its own candidate's repetitions (candidate: drift between "
                  "repetitions) or of the whole group (group)")
      ->check(CLI::IsMember({"candidate", "group"}))
      ->capture_default_str();
  cmd->add_flag("--drop-unsteady", so->drop_unsteady,
               "leave out candidates with fewer than --min-reps unflagged repetitions (default: compare them on every "
               "repetition)");
  cmd->add_option("--min-reps", so->min_reps, "unflagged repetitions a candidate needs, else it is unsteady")
      ->transform(uint_in(1, 16))
      ->capture_default_str();
  cmd->add_option_function<std::string>(
         "--round",
         [so](const std::string& v) {
           if (v == "latest") so->round = -1;
           else if (v == "all") so->round = 0;
           else {
             char* end = nullptr;
             const long r = std::strtol(v.c_str(), &end, 10);
             if (v.empty() || *end || r < 1 || r > 999)
               throw CLI::ValidationError("--round", "must be latest, all or a round from 1 to 999, not '" + v + "'");
             so->round = r;
           }
         },
         "repetition round read per group (cks plan sidebyside --round): latest, all (pooled) or a number")
      ->default_str("latest");
  cmd->add_option("--base-set", so->base_set,
                  "only groups whose base group is of this set (eval, family, ...; default: every set)");
  cmd->add_option("--per-group", *per_group, "also write one CSV row per group to this file");
  cmd->callback([o, so, model, methods, per_group] {
    const Format f = parse_format(o->format);
    so->layouts = parse_layouts(o->layouts);
    prepare_out_dir(o->out_dir);
    std::unique_ptr<std::ofstream> per_group_out;
    if (!per_group->empty()) {
      per_group_out = std::make_unique<std::ofstream>(*per_group);
      if (!*per_group_out) throw Error("cannot write --per-group file " + *per_group);
    }
    const SelectionMethods sel(*model, *methods, {16, 16, 16});
    ReadOnlyData source(o->source);
    const SideBySideStudy s = sidebyside_study(source.reg, sel.methods, *so, stderr_progress());
    std::vector<MethodOutcomes> outcomes;
    for (size_t m = 0; m < s.methods.size(); ++m) outcomes.push_back({s.methods[m], "side by side", s.outcomes[m]});
    MethodOutcomes floor{"noise floor", "c* re-measured against itself", {}};
    MethodOutcomes floor_median{"noise floor (median)", "c*'s median re-measured against itself (bootstrap)", {}};
    std::vector<DataGroup> groups;
    for (const auto& g : s.groups) {
      GroupOutcome fo;
      fo.covered = std::isfinite(g.floor);
      fo.regret = g.floor;
      floor.groups.push_back(fo);
      fo.covered = std::isfinite(g.floor_median);
      fo.regret = g.floor_median;
      floor_median.groups.push_back(fo);
      DataGroup dg;
      dg.key = g.base_key;
      dg.set = g.base_set;
      dg.problem = g.problem;
      dg.cublas_tflops = g.cublas_tflops;
      groups.push_back(std::move(dg));
    }
    outcomes.push_back(std::move(floor));
    outcomes.push_back(std::move(floor_median));
    std::cerr << "cks analyze sidebyside: " << s.groups.size() << " groups, " << s.rows << " ok rows, " << s.flagged_rows
              << " flagged (SM clock more than " << format_double(so->clock_tolerance_mhz)
              << " MHz from the median of " << (so->clock_reference == "group" ? "the group" : "the candidate's repetitions")
              << ")\n";
    emit(summarize(outcomes, groups, hw_preset(sel.model->info().hw_preset)), "sidebyside", f, o->out_dir);
    if (per_group_out) {
      sidebyside_group_table(s).write(*per_group_out, Format::csv);
      if (!per_group_out->flush()) throw Error("cannot write --per-group file " + *per_group);
    }
  });
}

}  // namespace

void register_analyze(CLI::App& app) {
  auto* analyze = app.add_subcommand(
      "analyze",
      "studies of the measured corpus: feature correlations, sampling policies, counters, repeatability, noise, failures");
  analyze->require_subcommand(1);
  register_features_study(analyze);
  register_sampling_study(analyze);
  register_counter_study(analyze);
  register_repeatability_study(analyze);
  register_noise_study(analyze);
  register_failure_study(analyze);
  register_sidebyside_study(analyze);
  register_profile(app);
}

}  // namespace cks::cli
