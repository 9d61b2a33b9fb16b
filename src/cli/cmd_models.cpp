// `cks train`, `cks eval`, `cks select`: the learned selector (docs/models.md).
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <optional>
#include <set>
#include <thread>

#include "cks/models.hpp"
#include "cks/plan.hpp"
#include "cks/registry.hpp"
#include "cks/selector.hpp"
#include "cli/commands.hpp"
#include "cli/selector_opts.hpp"
#include "cli/util.hpp"

namespace cks::cli {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

constexpr const char* kDefaultShards = "data/shards";

double seconds_since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

std::unique_ptr<DataSource> open_source(const SourceOpts& o) {
  if (!o.registry.empty()) {
    if (fs::is_directory(o.registry))
      throw Error("--registry expects a registry file; '" + o.registry + "' is a directory (use --data)");
    return std::make_unique<DataSource>(o.registry);
  }
  const std::string dir = o.data.empty() ? kDefaultShards : o.data;
  if (!fs::is_directory(dir)) {
    if (o.data.empty()) throw Error("no data: pass --registry DB or --data DIR (" + dir + " not found)");
    throw Error("--data expects a directory of shards; '" + dir + "' is not one");
  }
  return std::make_unique<DataSource>(dir);
}

const Progress& stderr_progress() {
  static const Progress p = [](std::string_view what, size_t done, size_t total) {
    progress(what, done, total ? total : done + 1);
  };
  return p;
}

Dataset read_dataset(const SourceOpts& src, std::string& origin, const DatasetOptions& options = {}) {
  const auto t0 = Clock::now();
  auto source = open_source(src);
  origin = src.registry.empty() ? (src.data.empty() ? kDefaultShards : src.data) : src.registry;
  // From a corpus cache entry, the data set itself is kept beside it: read back when there.
  const std::string kept =
      corpus_cache_file(*source, "dataset-" + dataset_fingerprint(default_hw(), options).substr(0, 8), ".bin");
  std::optional<Dataset> from_file = kept.empty() ? std::nullopt : read_dataset_file(kept);
  Dataset d;
  if (from_file) {
    d = std::move(*from_file);
  } else {
    RegistryOptions ro;
    ro.read_only = true;
    const Registry reg(source->path(), ro);
    d = load_dataset(reg, default_hw(), options, stderr_progress());
    if (!kept.empty()) {
      try {
        write_dataset_file(d, kept);
      } catch (const Error&) {
        // a full or read-only cache directory: the data set is computed again next time
      }
    }
  }
  // What the data loading cost, for a person watching (scripts/bench/corpus_load.sh sets
  // CKS_PROGRESS): scripts and tests see one-line errors only.
  static const bool show = isatty(2) || std::getenv("CKS_PROGRESS") != nullptr;
  if (show)
    std::cerr << "cks: note: read " << d.rows() << " rows of " << d.groups.size() << " groups from " << origin << " in "
            << format_double(std::round(seconds_since(t0) * 10) / 10) << " s"
            << (source->cache_key().empty()
                    ? ""
                    : std::string(" (corpus cache ") + (!source->cache_hit() ? "built" : from_file ? "hit, data set kept" : "hit") +
                          ": " + source->path() + ")")
            << "\n";
  if (!d.run_offsets.empty()) {
    auto [lo, hi] = std::minmax_element(d.run_offsets.begin(), d.run_offsets.end(),
                                        [](const auto& a, const auto& b) { return a.second < b.second; });
    std::cerr << "cks: note: per-run time offsets of " << d.run_offsets.size() << " runs (--run-normalize offset): "
              << format_double(std::round(lo->second * 1000) / 1000) << " to " << format_double(std::round(hi->second * 1000) / 1000)
              << " us\n";
  }
  if (d.run_normalized_groups)
    std::cerr << "cks: note: " << d.run_normalized_rows << " rows in " << d.run_normalized_groups
              << (!(options.run_normalize && options.run_offset) ? " groups scaled to their group's reference run by cuBLAS (--run-normalize)\n"
                                                               : " groups corrected by their run's time offset (--run-normalize offset)\n");
  if (d.skipped_unknown)
    std::cerr << "cks: note: " << d.skipped_unknown << " measured candidates are not in this build's catalogue (skipped)\n";
  return d;
}

// --run-normalize on|off|offset (DatasetOptions::run_normalize, run_offset) of train and eval.
std::shared_ptr<DatasetOptions> add_dataset_options(CLI::App* cmd) {
  auto o = std::make_shared<DatasetOptions>();
  cmd->add_option_function<std::string>(
         "--run-normalize",
         [o](const std::string& v) {
           if (v != "on" && v != "off" && v != "offset")
             throw CLI::ValidationError("--run-normalize", "must be on, off or offset, not '" + v + "'");
           o->run_normalize = v != "off";
           o->run_offset = v == "offset";
         },
         "merge a group's rows of different runs (leases differ; docs/models.md): on scales each run's rows by "
         "the ratio of the group's cuBLAS throughput in its reference run to that in their own run; offset "
         "adds one time per run, fitted on every group's cuBLAS rows; off leaves them as measured")
      ->default_str("on");
  return o;
}

// Training options shared by train and eval.
void add_train_options(CLI::App* cmd, TrainOptions& o) {
  cmd->add_option("--objective", o.objective,
                  "objective (xgboost: rank:ndcg, rank:pairwise, reg:squarederror; ridge: squared; mlp: "
                  "lambdarank-exp, lambdarank-linear, ranknet, mse)");
  cmd->add_option("--seed", o.seed, "random seed")->transform(seed())->capture_default_str();
  cmd->add_option("--threads", o.threads, "training threads (the model bytes depend on it; 0 = every core)")->transform(uint_in(0, 4096))
      ->capture_default_str();
  cmd->add_option("--features", o.features,
                  "feature set: full, or families joined by '+' (core, arch, waves, intensity, smem, balance, fill, "
                  "estimate; docs/hpo.md); the other columns are left out of training and never read")
      ->capture_default_str();
  cmd->add_option("--rounds", o.rounds, "xgboost: boosting rounds (with --early-stopping: the most rounds)")->transform(positive_count())
      ->capture_default_str();
  cmd->add_option("--eta", o.eta, "xgboost: learning rate")->check(positive_real())->capture_default_str();
  cmd->add_option("--max-depth", o.max_depth, "xgboost: tree depth")->transform(uint_in(0, 1000))->capture_default_str();
  cmd->add_option("--min-child-weight", o.min_child_weight, "xgboost: minimum hessian sum in a leaf")->check(non_negative_real())->capture_default_str();
  cmd->add_option("--subsample", o.subsample, "xgboost: row subsampling per tree")->check(real_in(0, 1, true))->capture_default_str();
  cmd->add_option("--colsample-bytree", o.colsample, "xgboost: column subsampling per tree")->check(real_in(0, 1, true))->capture_default_str();
  cmd->add_option("--reg-alpha", o.l1, "xgboost: L1 regularisation of the leaf weights (alpha)")->check(non_negative_real())->capture_default_str();
  cmd->add_option("--reg-lambda", o.l2, "xgboost: L2 regularisation of the leaf weights (lambda)")->check(non_negative_real())->capture_default_str();
  cmd->add_option("--gamma", o.gamma, "xgboost: minimum loss reduction of a split")->check(non_negative_real())->capture_default_str();
  cmd->add_option("--max-bin", o.max_bin, "xgboost: histogram bins per feature")->transform(uint_in(2, 1 << 20))->capture_default_str();
  cmd->add_option("--max-cat-to-onehot", o.max_cat_to_onehot,
                  "xgboost: categoricals with fewer levels than this split one-vs-rest, others by partition")->transform(uint_in(1, 1 << 20))
      ->capture_default_str();
  cmd->add_option("--max-cat-threshold", o.max_cat_threshold, "xgboost: most categories on one side of a partition split")->transform(uint_in(1, 1 << 20))
      ->capture_default_str();
  cmd->add_option("--early-stopping", o.early_stopping,
                  "xgboost: stop after N rounds without a lower validation loss (mean top-1..16 regret) on held-out "
                  "training shapes; the best round is the round count (0 = off; docs/hpo.md)")->transform(count())
      ->capture_default_str();
  cmd->add_option("--early-stopping-fraction", o.early_stopping_fraction,
                  "xgboost: share of the training shapes held out for early stopping")->check(real_in(0, 1, true))
      ->capture_default_str();
  cmd->add_flag("--early-stopping-refit,!--no-early-stopping-refit", o.early_stopping_refit,
                "xgboost: after early stopping, retrain on every training group with the best round count "
                "(default) instead of keeping the trees of the run on the smaller split");
  cmd->add_option("--relevance-bands", o.relevance_bands,
                  "xgboost ranking objectives: relevance = max(0, B - band), B bands get a positive label")->transform(uint_in(1, 1000))
      ->capture_default_str();
  cmd->add_option("--top-weight", o.top_weight,
                  "xgboost reg:squarederror: weigh each row by y^P (y = throughput / the group's best; 0 = unweighted)")
      ->check(non_negative_real())->capture_default_str();
  cmd->add_option("--num-pairsample", o.num_pairsample, "xgboost ranking objectives: pairs sampled per instance")->transform(positive_count())
      ->capture_default_str();
  cmd->add_option("--lambda", o.ridge_lambda, "ridge: l2 shrinkage")->check(non_negative_real())->capture_default_str();
  cmd->add_option("--hidden", o.hidden, "mlp: hidden layer widths")->transform(uint_in(1, 1 << 20))->delimiter(',')->capture_default_str();
  cmd->add_option("--epochs", o.epochs, "mlp: epochs")->transform(positive_count())->capture_default_str();
  cmd->add_option("--lr", o.learning_rate, "mlp: Adam learning rate")->check(positive_real())->capture_default_str();
  cmd->add_option("--dropout", o.dropout, "mlp: dropout after every hidden layer (training only)")->check(real_in(0, 0.99))->capture_default_str();
  cmd->add_option("--weight-decay", o.weight_decay, "mlp: decoupled weight decay (> 0: AdamW instead of Adam)")->check(non_negative_real())
      ->capture_default_str();
  cmd->add_option("--batch", o.batch_rows, "mlp: rows per mini-batch (whole groups are added until it is reached)")->transform(positive_count())
      ->capture_default_str();
  cmd->add_option("--pair-cap", o.pair_cap, "mlp: sampled pairs per group and epoch")->transform(positive_count())->capture_default_str();
  cmd->add_option("--needle-top", o.needle_top, "mlp: pairs touching the N highest-throughput rows are always kept")->transform(count())
      ->capture_default_str();
}

// The early stopping summary a trained model reports ("" without early stopping).
std::string early_stopping_note(const Model& m) {
  const auto& p = m.info().provenance;
  if (!p.contains("early_stopping")) return "";
  const auto& e = p.at("early_stopping");
  return std::to_string(e.at("rounds").get<int>()) + " of " + std::to_string(e.at("rounds_run").get<int>()) + " rounds";
}

// Scoring threads of `cks eval`: the training thread count, 0 = every core.
int scoring_threads(int threads) {
  return threads > 0 ? threads : std::max(1, static_cast<int>(std::thread::hardware_concurrency()));
}

// --model of `cks eval`: a model file, or a kind[:objective] spec trained on the spot.
struct ModelSpec {
  std::unique_ptr<Model> file_model;  // set when --model is a file
  TrainOptions options;               // what to (re)train
  std::string name;
};

ModelSpec parse_model_spec(const std::string& arg, const TrainOptions& cli) {
  ModelSpec spec;
  if (fs::is_regular_file(arg)) {
    spec.file_model = Model::load(arg);
    spec.options = spec.file_model->info().options;
    spec.name = std::string(to_string(spec.file_model->info().kind)) + " " + spec.file_model->info().objective;
    return spec;
  }
  const size_t colon = arg.find(':');
  ModelKind kind;
  try {
    kind = parse_model_kind(arg.substr(0, colon));
  } catch (const Error&) {
    throw Error("--model '" + arg + "' is neither a model file nor a model spec (xgboost[:objective], ridge, mlp[:objective])");
  }
  spec.options = cli;
  spec.options.kind = kind;
  spec.options.objective = resolve_objective(kind, colon == std::string::npos ? cli.objective : arg.substr(colon + 1));
  spec.name = std::string(to_string(kind)) + " " + spec.options.objective;
  return spec;
}

// --train-layouts: train (or cross-validate) on the training groups of these layouts only.
std::shared_ptr<std::vector<std::string>> add_train_layouts(CLI::App* cmd) {
  auto layouts = std::make_shared<std::vector<std::string>>();
  cmd->add_option("--train-layouts", *layouts,
                  "train only on the training groups of these layouts, comma-separated (default: every layout); "
                  "with --groups cv the folds hold only these layouts' groups")
      ->delimiter(',');
  return layouts;
}

void register_train(CLI::App& app) {
  auto* cmd = app.add_subcommand("train", "train a ranker on the training groups (every set but 'eval', 'family', 'llm', 'proof' and 'sbs') and save it");
  auto src = std::make_shared<SourceOpts>();
  auto opts = std::make_shared<TrainOptions>();
  auto kind = std::make_shared<std::string>("xgboost");
  auto out = std::make_shared<std::string>();
  auto fmt = std::make_shared<std::string>();
  opts->threads = 2;  // fixed default: `cks train` must rebuild the same bytes on the 2-core machine
  add_source(cmd, *src);
  cmd->add_option("--out", *out, "model file to write (models/default.json is the shipped default)")->required();
  cmd->add_option("--model", *kind, "xgboost, ridge or mlp")->capture_default_str();
  add_train_options(cmd, *opts);
  auto max_candidates = std::make_shared<size_t>(0);
  auto keep_top = std::make_shared<size_t>(16);
  cmd->add_option("--max-candidates", *max_candidates,
                  "train on at most C candidates per group: the --keep-top best plus a seeded random rest (0 = all; "
                  "as eval's --cv-max-candidates)")->transform(count())
      ->capture_default_str();
  cmd->add_option("--keep-top", *keep_top, "candidates of highest throughput always kept by --max-candidates")->transform(count())
      ->capture_default_str();
  auto keep_targeted = std::make_shared<size_t>(0);
  cmd->add_option("--keep-targeted", *keep_targeted,
                  "with --max-candidates: also keep every row of a run that measured at most T candidates of the "
                  "group (models' picks in active-learning rounds, explorations; 0 = off)")
      ->transform(count())
      ->capture_default_str();
  auto evidence_only = std::make_shared<std::string>();
  cmd->add_option("--evidence-only", *evidence_only,
                  "train nothing: write this model file to --out with the evidence (the fastest candidates of "
                  "every training group, as cks train records them) of the source's training groups; for a model "
                  "trained before models carried evidence");
  auto average = std::make_shared<std::vector<std::string>>();
  cmd->add_option("--average", *average,
                  "train nothing: write to --out one model scoring the mean of these XGBoost models' scores (a seed "
                  "ensemble, docs/models.md; options and evidence of the first; one model: itself in today's "
                  "compact encoding)")
      ->expected(1, 64)
      ->excludes("--evidence-only");
  auto train_layouts = add_train_layouts(cmd);
  auto data_opts = add_dataset_options(cmd);
  add_format(cmd, *fmt);
  cmd->callback([=] {
    const Format f = parse_format(*fmt);
    if (!average->empty()) {
      const auto t0 = Clock::now();
      std::vector<std::unique_ptr<Model>> loaded;
      std::vector<const Model*> members;
      for (const auto& path : *average) members.push_back(loaded.emplace_back(Model::load(path)).get());
      auto model = average_models(members);
      if (const auto parent = fs::path(*out).parent_path(); !parent.empty()) fs::create_directories(parent);
      model->save(*out);
      Table t({"model", "objective", "members", "trees", "seconds", "out"});
      t.add_row({"xgboost-ensemble", model->info().objective, static_cast<int64_t>(members.size()),
                 static_cast<int64_t>(model->terms()), seconds_since(t0), *out});
      t.write(std::cout, f);
      return;
    }
    if (!evidence_only->empty()) {
      auto model = Model::load(*evidence_only);
      std::string origin;
      const Dataset all = read_dataset(*src, origin, *data_opts);
      const Dataset train = all.subset(all.train_groups(parse_layouts(*train_layouts)));
      if (train.groups.empty()) throw Error("no training groups in " + origin);
      const auto trained = model->info().provenance.value("groups", size_t{0});
      if (trained != train.groups.size())
        std::cerr << "cks: warning: the model was trained on " << trained << " groups, the evidence comes from "
                  << train.groups.size() << " training groups of " << origin << "\n";
      model->info().evidence = build_evidence(train);
      model->save(*out);
      std::cerr << "cks: evidence of " << train.groups.size() << " training groups (" << kEvidenceTop
                << " leaders each) written with the model to " << *out << "\n";
      return;
    }
    opts->kind = parse_model_kind(*kind);
    opts->objective = resolve_objective(opts->kind, opts->objective);
    const auto layouts = parse_layouts(*train_layouts);
    const auto t0 = Clock::now();
    std::string origin;
    const Dataset all = read_dataset(*src, origin, *data_opts);
    const auto train_idx = all.train_groups(layouts);
    if (train_idx.empty())
      throw Error("no training groups in " + origin +
                  (layouts.empty() ? " (every group is in the 'eval' set)" : " of --train-layouts"));
    Dataset train = all.subset(train_idx);
    const size_t measured = train.rows();
    if (*keep_targeted && !*max_candidates) throw Error("--keep-targeted needs --max-candidates (without a cap every row is kept)");
    if (*max_candidates) train = subsample_candidates(train, *max_candidates, *keep_top, opts->seed, *keep_targeted);
    std::cerr << "cks: training " << to_string(opts->kind) << " " << opts->objective << " on " << train.groups.size()
              << " groups, " << train.rows() << " candidates";
    if (*max_candidates)
      std::cerr << " (of " << measured << ": at most " << *max_candidates << " per group"
                << (*keep_targeted ? " besides the rows of runs of at most " + std::to_string(*keep_targeted) + " candidates" : "")
                << ")";
    std::cerr << "\n";
    auto model = train_model(train, *opts, stderr_progress());
    model->info().provenance["source"] = origin;
    if (data_opts->run_normalize && data_opts->run_offset)
      model->info().provenance["run_normalize"] = "offset";
    else
      model->info().provenance["run_normalize"] = data_opts->run_normalize;
    if (*max_candidates)
      model->info().provenance["candidate_cap"] = {{"max_candidates", *max_candidates}, {"keep_top", *keep_top},
                                                   {"seed", opts->seed}, {"rows_measured", measured}};
    if (*keep_targeted) model->info().provenance["candidate_cap"]["keep_targeted"] = *keep_targeted;
    if (const auto& p = model->info().provenance; p.contains("early_stopping"))
      std::cerr << "cks: early stopping: best round " << p["early_stopping"]["rounds"] << " of "
                << p["early_stopping"]["rounds_run"] << " (mean regret " << p["early_stopping"]["validation_regret"]
                << " on " << p["early_stopping"]["validation_groups"] << " held-out training groups)\n";
    if (const auto parent = fs::path(*out).parent_path(); !parent.empty()) fs::create_directories(parent);
    model->save(*out);
    Table t({"model", "objective", "groups", "rows", "eval_groups_held_out", "seconds", "out"});
    t.add_row({std::string(to_string(opts->kind)), opts->objective, static_cast<int64_t>(train.groups.size()),
               static_cast<int64_t>(train.rows()), static_cast<int64_t>(all.groups.size() - train_idx.size()),
               seconds_since(t0), *out});
    t.write(std::cout, f);
  });
}

void register_eval(CLI::App& app) {
  auto* cmd = app.add_subcommand("eval", "regret of a model and the baselines on the evaluation groups or in cross-validation");
  auto src = std::make_shared<SourceOpts>();
  auto opts = std::make_shared<TrainOptions>();
  auto model_arg = std::make_shared<std::string>();
  auto groups = std::make_shared<std::string>("evaluation");
  auto folds = std::make_shared<int>(5);
  auto no_baselines = std::make_shared<bool>(false);
  auto no_nvmmh = std::make_shared<bool>(false);
  auto prefilters = std::make_shared<std::vector<size_t>>();
  auto sel_opts = std::make_shared<SelectorOptions>();
  auto fmt = std::make_shared<std::string>();
  add_source(cmd, *src);
  cmd->add_option("--model", *model_arg,
                  "a model file, or a spec trained on the spot: xgboost[:objective], ridge, mlp[:objective]")
      ->required();
  cmd->add_option("--groups", *groups,
                  "evaluation: the 'eval' set (model as given); cv: k-fold cross-validation over the training "
                  "groups, folds grouped by shape (the model's options retrained per fold)")
      ->capture_default_str();
  cmd->add_option("--folds", *folds, "cross-validation folds")->transform(uint_in(2, 1000))->capture_default_str();
  auto cv_groups = std::make_shared<size_t>(0);
  auto cv_candidates = std::make_shared<size_t>(0);
  auto cv_top = std::make_shared<size_t>(16);
  cmd->add_option("--cv-max-groups", *cv_groups,
                  "cv: use at most N training groups, whole shapes in a seeded order (0 = all; for fast tuning)")->transform(count())
      ->capture_default_str();
  cmd->add_option("--cv-max-candidates", *cv_candidates,
                  "train each CV fold (or, with --groups evaluation, the model trained on the spot) on at most C "
                  "candidates per group: the --cv-keep-top best plus a seeded random rest (0 = all); held-out and "
                  "evaluation groups keep all their candidates")->transform(count())
      ->capture_default_str();
  cmd->add_option("--cv-keep-top", *cv_top, "cv: candidates of highest throughput always kept by --cv-max-candidates")->transform(count())
      ->capture_default_str();
  auto eval_layouts = std::make_shared<std::vector<std::string>>();
  auto min_eval = std::make_shared<size_t>(0);
  cmd->add_option("--layouts", *eval_layouts,
                  "evaluation: only the evaluation groups of these layouts, comma-separated (default: every layout)")
      ->delimiter(',');
  cmd->add_option("--min-eval-candidates", *min_eval,
                  "evaluation: leave out evaluation groups with fewer measured candidates (an exhaustive group "
                  "not finished yet); they are listed on stderr and never trained on")->transform(count())
      ->capture_default_str();
  cmd->add_flag("--no-baselines", *no_baselines, "only the model");
  cmd->add_flag("--no-nvmmh", *no_nvmmh, "skip the nvMatmulHeuristics baseline");
  cmd->add_option("--prefilter", *prefilters,
                  "also rank with the deployed two-stage selector keeping P candidates (comma-separated list): per P "
                  "a row for the model's pick among the measured candidates the prefilter keeps; on evaluation "
                  "groups also one for the exhaustive ranking's top P, and the note compares the selector's "
                  "catalogue top-1/top-8 with the exhaustive ranking; with --groups cv each fold's model is "
                  "deployed on its held-out groups")->transform(count())
      ->delimiter(',');
  auto evidence_arms = std::make_shared<std::vector<std::string>>();
  cmd->add_option("--evidence-arms", *evidence_arms,
                  "with --prefilter: also per P a row for each evidence setting G:T (the first T leaders of the G "
                  "nearest training groups join the prefilter's candidates; in CV the fold's training groups), "
                  "comma-separated")
      ->delimiter(',');
  auto no_real = std::make_shared<bool>(false);
  cmd->add_flag("--no-real-picks", *no_real,
                "evaluation: leave out the rows of the real picks (what cks select returns over the whole catalogue, "
                "deployed and exhaustive, and cks select --fallback static), scored where they were measured");
  auto eval_set = std::make_shared<std::string>("eval");
  auto eval_plan = std::make_shared<std::string>();
  cmd->add_option("--eval-set", *eval_set,
                  "evaluation: evaluate the groups of this set instead of 'eval' (e.g. train with the groups of an "
                  "active-learning plan: how good the measured picks were)")
      ->capture_default_str();
  cmd->add_option("--eval-plan", *eval_plan, "evaluation: only the groups this plan lists");
  auto per_group = std::make_shared<std::string>();
  cmd->add_option("--per-group", *per_group,
                  "also write one CSV row per method and group to this file: regret, the pick, the group's best "
                  "candidate and cuBLAS (where a method loses)");
  add_selector_options(cmd, *sel_opts);
  add_orientation_options(cmd, *sel_opts);  // real picks: a swapped pick counts as unmeasured (no catalogue row)
  add_sliced_options(cmd, *sel_opts);
  add_train_options(cmd, *opts);
  auto train_layouts = add_train_layouts(cmd);
  auto data_opts = add_dataset_options(cmd);
  add_format(cmd, *fmt);
  cmd->callback([=] {
    const Format f = parse_format(*fmt);
    if (*groups != "evaluation" && *groups != "cv")
      throw Error("unknown --groups '" + *groups + "' (expected evaluation or cv)");

    if (*cv_groups && *groups != "cv") throw Error("--cv-max-groups needs --groups cv");
    for (size_t pf : *prefilters)
      if (pf == 0) throw Error("--prefilter values must be >= 1 (the exhaustive ranking is the model's own row)");
    // The prefilter rows: per P, the selector options' own evidence setting, then each arm.
    std::vector<std::pair<size_t, size_t>> arms{{sel_opts->evidence_groups, sel_opts->evidence_top}};
    for (const std::string& a : *evidence_arms) {
      // The same G:T as the selection method evidenceG:T.
      const auto arm = evidence_method("evidence" + a);
      if (!arm) throw Error("--evidence-arms: '" + a + "' is not G:T with counts G, T >= 1");
      arms.push_back(*arm);
    }
    if (!evidence_arms->empty() && prefilters->empty()) throw Error("--evidence-arms needs --prefilter");
    struct PrefilterRow {
      size_t prefilter, groups, top;
      std::string name(const std::string& model) const {
        std::string n = model + " prefilter=" + std::to_string(prefilter);
        if (groups && top) n += " evidence=" + std::to_string(groups) + ":" + std::to_string(top);
        return n;
      }
    };
    std::vector<PrefilterRow> prefilter_rows;
    for (size_t pf : *prefilters)
      for (const auto& [g, t] : arms) prefilter_rows.push_back({pf, g, t});
    finish_selector_options(*sel_opts, false);
    ModelSpec spec = parse_model_spec(*model_arg, *opts);
    const std::vector<Layout> train_only = parse_layouts(*train_layouts);
    std::unique_ptr<std::ofstream> per_group_out;  // opened first: a bad path fails before the work
    if (!per_group->empty()) {
      per_group_out = std::make_unique<std::ofstream>(*per_group);
      if (!*per_group_out) throw Error("cannot write --per-group file " + *per_group);
    }
    std::string origin;
    const Dataset all = read_dataset(*src, origin, *data_opts);
    Dataset train = all.subset(all.train_groups(train_only));
    if (train.groups.empty() && !train_layouts->empty())
      throw Error("no training groups in " + origin + " of --train-layouts");
    if (*groups == "cv" && *cv_groups > 0 && *cv_groups < train.groups.size()) {
      const auto picked = subsample_groups(train.groups, *cv_groups, spec.options.seed);
      std::cerr << "cks: cross-validation on " << picked.size() << " of " << train.groups.size()
                << " training groups (--cv-max-groups)\n";
      train = train.subset(picked);
    }

    Dataset evaluated;  // the groups reported, in report order
    std::vector<MethodOutcomes> methods;
    if (*groups == "evaluation") {
      const std::vector<Layout> layouts = parse_layouts(*eval_layouts);
      std::vector<size_t> eval_idx;
      size_t left_out = 0;
      std::vector<size_t> candidates_idx;  // the groups of --eval-set (and of --eval-plan)
      std::set<std::string> in_plan;
      if (!eval_plan->empty())
        for (const auto& pg : read_plan(*eval_plan).groups) in_plan.insert(pg.group.key);
      for (size_t g = 0; g < all.groups.size(); ++g)
        if (all.groups[g].set == *eval_set && (in_plan.empty() || in_plan.count(all.groups[g].key)))
          candidates_idx.push_back(g);
      for (size_t g : candidates_idx) {
        const auto& grp = all.groups[g];
        const bool layout_ok =
            layouts.empty() || std::find(layouts.begin(), layouts.end(), grp.problem.layout) != layouts.end();
        if (layout_ok && grp.size() >= *min_eval) {
          eval_idx.push_back(g);
        } else if (layout_ok) {
          ++left_out;
          std::cerr << "cks: note: evaluation group " << grp.key << " has " << grp.size() << " measured candidates (< "
                    << *min_eval << "): left out\n";
        }
      }
      if (left_out) std::cerr << "cks: note: " << left_out << " evaluation groups left out by --min-eval-candidates\n";
      if (eval_idx.empty())
        throw Error("no evaluation groups (set '" + *eval_set + "'" + (eval_plan->empty() ? "" : " in --eval-plan") + ") in " + origin +
                    (layouts.empty() && *min_eval == 0 ? "; use --groups cv" : " match --layouts / --min-eval-candidates"));
      evaluated = all.subset(eval_idx);
      std::unique_ptr<Model> trained;
      if (!spec.file_model) {
        if (train.groups.empty()) throw Error("no training groups in " + origin);
        // As in a CV fold: train on at most C candidates per group (the tuner's report, cheaper).
        if (*cv_candidates) train = subsample_candidates(train, *cv_candidates, *cv_top, spec.options.seed);
        trained = train_model(train, spec.options, stderr_progress());
      } else if (*cv_candidates) {
        throw Error("--cv-max-candidates needs a model trained on the spot, not a model file");
      }
      const Model& model = spec.file_model ? *spec.file_model : *trained;
      model.set_threads(scoring_threads(spec.options.threads));
      methods.push_back(model_outcomes(spec.name, model, evaluated));
      if (const std::string es = early_stopping_note(model); !es.empty())
        methods.back().note += (methods.back().note.empty() ? "" : "; ") + std::string("early stopping: ") + es;
      if (!prefilters->empty()) {
        // The selectors share the model (not owned: it outlives them).
        const std::shared_ptr<const Model> shared(&model, [](const Model*) {});
        // Proxies over the group's measured candidates of its own layout's catalogue: the own
        // orientation (a swapped pick is no candidate of that catalogue; the real-pick rows below
        // rank both).
        SelectorOptions ex = *sel_opts;
        ex.prefilter = 0;
        ex.threads = scoring_threads(spec.options.threads);
        ex.orientations = Orientations::own;
        const Selector exhaustive(shared, ex);
        for (const PrefilterRow& row : prefilter_rows) {
          SelectorOptions o = ex;
          o.prefilter = row.prefilter;
          o.evidence_groups = row.groups;
          o.evidence_top = row.top;
          const Selector selector(shared, o);
          std::cerr << "cks: two-stage selector, " << selector.mode() << "\n";
          for (auto& m : selector_outcomes(row.name(spec.name), model, selector, exhaustive, evaluated))
            methods.push_back(std::move(m));
        }
      }
      if (!*no_real) {
        // What cks select returns, scored where it was measured (the headline); the rows above
        // rank only the measured candidates (a proxy).
        const std::shared_ptr<const Model> shared(&model, [](const Model*) {});
        SelectorOptions deployed = *sel_opts;
        if (deployed.prefilter == 0) deployed.prefilter = SelectorOptions{}.prefilter;
        SelectorOptions ex = deployed;
        ex.prefilter = 0;
        ex.threads = scoring_threads(spec.options.threads);
        std::cerr << "cks: real picks: deployed selector and the exhaustive ranking over every catalogue candidate\n";
        methods.push_back(real_pick_outcomes(spec.name + " real pick (deployed)", Selector(shared, deployed), evaluated));
        methods.push_back(real_pick_outcomes(spec.name + " real pick (exhaustive)", Selector(shared, ex), evaluated));
        if (!*no_baselines)
          methods.push_back(real_pick_outcomes("static-score real pick",
                                               Selector::static_score(hw_preset(evaluated.hw_preset), deployed), evaluated));
      }
      if (!*no_baselines) methods.push_back(best_single_baseline(train, evaluated));
    } else {
      if (train.groups.empty()) throw Error("no training groups in " + origin + " for cross-validation");
      const std::vector<int> fold = shape_folds(train.groups, *folds, spec.options.seed);
      // Out-of-fold outcomes, written back in the training-group order.
      evaluated = train;
      std::string cv_note = std::to_string(*folds) + "-fold CV grouped by shape";
      if (*cv_candidates) cv_note += "; trained on <= " + std::to_string(*cv_candidates) + " candidates per group";
      std::vector<std::string> stopped;  // early stopping per fold
      MethodOutcomes model_m{spec.name, cv_note, {}};
      MethodOutcomes single_m{"best-single-config", "", {}};
      model_m.groups.resize(train.groups.size());
      single_m.groups.resize(train.groups.size());
      // The deployed two-stage pick per P, out of fold: each fold's model behind a Selector.
      std::vector<MethodOutcomes> prefilter_m;
      for (const PrefilterRow& row : prefilter_rows) {
        prefilter_m.push_back({row.name(spec.name), cv_note, {}});
        prefilter_m.back().groups.resize(train.groups.size());
      }
      for (int fi = 0; fi < *folds; ++fi) {
        std::vector<size_t> in, out;
        for (size_t g = 0; g < train.groups.size(); ++g) (fold[g] == fi ? out : in).push_back(g);
        std::cerr << "cks: fold " << fi + 1 << "/" << *folds << ": " << in.size() << " training, " << out.size()
                  << " held-out groups\n";
        Dataset fit = train.subset(in);
        const Dataset held = train.subset(out);
        if (*cv_candidates) fit = subsample_candidates(fit, *cv_candidates, *cv_top, spec.options.seed);
        auto model = train_model(fit, spec.options, stderr_progress());
        if (const std::string es = early_stopping_note(*model); !es.empty()) stopped.push_back(es);
        model->set_threads(scoring_threads(spec.options.threads));
        const MethodOutcomes mo = model_outcomes(spec.name, *model, held);
        const MethodOutcomes so = best_single_baseline(fit, held);
        for (size_t j = 0; j < out.size(); ++j) {
          model_m.groups[out[j]] = mo.groups[j];
          single_m.groups[out[j]] = so.groups[j];
        }
        const std::shared_ptr<const Model> shared(model.get(), [](const Model*) {});
        for (size_t i = 0; i < prefilter_rows.size(); ++i) {
          SelectorOptions o = *sel_opts;
          o.prefilter = prefilter_rows[i].prefilter;
          o.evidence_groups = prefilter_rows[i].groups;
          o.evidence_top = prefilter_rows[i].top;
          o.threads = scoring_threads(spec.options.threads);
          const Selector selector(shared, o);
          const MethodOutcomes po = kept_outcomes(prefilter_m[i].method, *model, held, [&](const Problem& p) {
            return selector.prefiltered(p, kTopK.back());
          });
          for (size_t j = 0; j < out.size(); ++j) prefilter_m[i].groups[out[j]] = po.groups[j];
          if (fi == 0) prefilter_m[i].note = selector.mode() + "; " + cv_note;
        }
      }
      if (!stopped.empty()) {
        model_m.note += "; early stopping per fold:";
        for (size_t i = 0; i < stopped.size(); ++i) model_m.note += (i ? ", " : " ") + stopped[i];
      }
      methods.push_back(std::move(model_m));
      for (auto& m : prefilter_m) methods.push_back(std::move(m));
      if (!*no_baselines) methods.push_back(std::move(single_m));
    }
    if (!*no_baselines) {
      methods.push_back(static_score_baseline(evaluated));
      methods.push_back(random_baseline(evaluated));
      if (!*no_nvmmh) methods.push_back(nvmmh_baseline(evaluated, query_nvmmh(evaluated.groups)));
      methods.push_back(cublas_baseline(evaluated));
    }
    summarize(methods, evaluated.groups, hw_preset(evaluated.hw_preset)).write(std::cout, f);
    if (per_group_out) {
      per_group_table(methods, evaluated).write(*per_group_out, Format::csv);
      if (!per_group_out->flush()) throw Error("cannot write --per-group file " + *per_group);
    }
  });
}

// The CUTLASS type block on one line for a table cell: comment lines dropped, whitespace runs
// collapsed.
std::string one_line(const std::string& block) {
  std::string out;
  size_t pos = 0;
  while (pos < block.size()) {
    size_t end = block.find('\n', pos);
    if (end == std::string::npos) end = block.size();
    std::string_view line(block.data() + pos, end - pos);
    pos = end + 1;
    const size_t first = line.find_first_not_of(" \t");
    if (first == std::string_view::npos || line.substr(first, 2) == "//") continue;
    for (char c : line.substr(first)) {
      if ((c == ' ' || c == '\t') && (out.empty() || out.back() == ' ')) continue;
      out.push_back(c == '\t' ? ' ' : c);
    }
    if (!out.empty() && out.back() != ' ') out.push_back(' ');
  }
  while (!out.empty() && out.back() == ' ') out.pop_back();
  return out;
}

void register_select(CLI::App& app) {
  auto* cmd = app.add_subcommand("select", "rank the catalogue of one problem with the shipped model (or --model)");
  auto p = std::make_shared<ProblemOpts>();
  auto top = std::make_shared<int>(10);
  auto model = std::make_shared<std::string>();
  auto fallback = std::make_shared<std::string>();
  auto timing = std::make_shared<bool>(false);
  auto show_type = std::make_shared<bool>(false);
  auto nondeterministic = std::make_shared<bool>(false);
  auto sel_opts = std::make_shared<SelectorOptions>();
  auto exhaustive = std::make_shared<bool>(false);
  auto fmt = std::make_shared<std::string>();
  add_problem(cmd, *p, /*with_preset=*/false);
  cmd->add_option("--top", *top, "candidates to print")->transform(count())->capture_default_str();
  cmd->add_option("--model", *model, "model file (default: the shipped models/default.json, or $CKS_MODEL)");
  cmd->add_option("--fallback", *fallback, "static: rank by the static efficiency score instead of a model");
  cmd->add_flag("--timing", *timing, "report selection latency (load, layout set-up, cold, cached) on stderr");
  cmd->add_flag("--cutlass-type", *show_type,
                "md: print each pick's CUTLASS C++ type as a code block after the table (csv and json always have "
                "the cutlass_type column); it needs -DNDEBUG -DCUTE_SM90_EXTENDED_MMA_SHAPES_ENABLED -arch=sm_90a: "
                "`cks emit ID --knobs KNOBS` prints the complete file");
  cmd->add_flag("--nondeterministic", *nondeterministic,
                "stream-K picks with the nondeterministic reduction (knobs ',x=n'; the ranking is the same): as fast "
                "or faster at the same setting, results may differ in the last bits from run to run (opt-in; the "
                "runtime's CKS_NONDETERMINISTIC=1)");
  add_selector_options(cmd, *sel_opts, exhaustive.get());
  add_orientation_options(cmd, *sel_opts);
  add_sliced_options(cmd, *sel_opts);
  add_format(cmd, *fmt);
  cmd->callback([=] {
    const Format f = parse_format(*fmt);
    const Layout layout = validate_problem(*p);
    const bool both = sel_opts->orientations == Orientations::both;
    if (*top < 1) throw Error("--top must be >= 1 (got " + std::to_string(*top) + ")");
    if (!fallback->empty() && *fallback != "static") throw Error("unknown --fallback '" + *fallback + "' (expected static)");
    finish_selector_options(*sel_opts, *exhaustive);
    const auto t0 = Clock::now();
    const std::string path = model->empty() ? Selector::default_model_path() : *model;
    std::unique_ptr<Selector> selector;
    if (*fallback == "static" && !model->empty()) throw Error("--fallback static ranks without a model: drop --model");
    if (*fallback == "static") {
      selector = std::make_unique<Selector>(Selector::static_score(default_hw(), *sel_opts));
      std::cerr << "cks: note: ranking by the static score (--fallback static)\n";
    } else if (fs::exists(path)) {
      selector = std::make_unique<Selector>(path, *sel_opts);
    } else if (!model->empty()) {
      throw Error("cannot read model file '" + path + "'");
    } else {
      throw Error("no default model (" + path +
                  " missing): train it on the H200 corpus with `cks train --out models/default.json`, pass --model "
                  "FILE, or rank by the static score with --fallback static");
    }
    const double load_s = seconds_since(t0);
    if (selector->training_groups(layout) == 0u)
      std::cerr << "cks: note: the model was trained on no " << to_string(layout)
                << " groups: its ranking of this layout extrapolates from the others\n";
    const auto t1 = Clock::now();
    selector->prepare(layout);  // and swap_layout(layout) with both orientations
    const double prepare_s = seconds_since(t1);
    const Problem problem{p->m, p->n, p->k, layout};
    const auto t2 = Clock::now();
    const Ranking ranking = selector->select(problem, static_cast<size_t>(*top));
    const double cold_s = seconds_since(t2);
    if (*timing) {
      constexpr int kRepeats = 100000;
      const auto t3 = Clock::now();
      size_t sink = 0;
      for (int i = 0; i < kRepeats; ++i) sink += selector->select(problem, static_cast<size_t>(*top)).size();
      const double cached_s = seconds_since(t3) / kRepeats;
      std::cerr << "cks: " << selector->description() << " [" << selector->mode() << "]: load " << load_s * 1e3
                << " ms, layout set-up " << prepare_s * 1e3 << " ms, cold select " << cold_s * 1e3 << " ms ("
                << Catalogue::get(layout).candidates().size() << " candidates, 1 thread), cached select "
                << cached_s * 1e6 << " us" << (sink ? "" : " (empty)") << "\n";
    }
    // md keeps the table readable: the (multi-line) CUTLASS type only on request, as code blocks.
    const bool type_column = f != Format::md;
    std::vector<std::string> columns{"rank", "kernel_id", "canonical", "knobs", "score"};
    if (both) columns.push_back("swapped");  // not with --orientations own: its table is the one before session 31
    const bool sliced_rule = sel_opts->sliced.max_tiles > 0;
    if (sliced_rule) columns.push_back("sliced");  // not with --sliced-max-tiles 0
    if (type_column) columns.push_back("cutlass_type");
    Table t(columns);
    // The knobs printed: the ranking's, with the nondeterministic reduction on stream-K picks when asked.
    std::vector<std::string> knobs(ranking.size());
    for (size_t i = 0; i < ranking.size(); ++i)
      knobs[i] = *nondeterministic ? with_reduction(KernelDesc::from_canonical(ranking[i].canonical), ranking[i].knobs,
                                                    Reduction::nondeterministic)
                                         .canonical()
                                   : ranking[i].knobs_text;
    if (*nondeterministic)
      std::cerr << "cks: note: --nondeterministic: stream-K picks run the nondeterministic reduction (',x=n'): their "
                   "results may differ in the last bits from run to run\n";
    for (size_t i = 0; i < ranking.size(); ++i) {
      const Selection& s = ranking[i];
      std::vector<Cell> row{static_cast<int64_t>(i + 1), s.kernel_id, s.canonical, knobs[i], s.score};
      if (both) row.emplace_back(static_cast<int64_t>(s.swapped));
      if (sliced_rule) row.emplace_back(static_cast<int64_t>(s.sliced));
      if (type_column) row.emplace_back(one_line(cutlass_type(KernelDesc::from_canonical(s.canonical))));
      t.add_row(std::move(row));
    }
    t.write(std::cout, f);
    // The type alone builds a different kernel without the right flags: say which, and where the
    // complete file comes from (`cks emit`).
    static constexpr const char* kTypeNote =
        "the CUTLASS types need -DNDEBUG -DCUTE_SM90_EXTENDED_MMA_SHAPES_ENABLED before any CUTLASS header and "
        "-arch=sm_90a (without them ptxas serializes WGMMA, and tile N outside {8,16,32,64,96,128,192,256} silently "
        "builds a narrower WGMMA); the knobs are runtime arguments. `cks emit ID --knobs KNOBS` prints a complete "
        ".cu file with the defines, the nvcc line and a run_gemm function applying the knobs";
    if (*show_type && f != Format::md) std::cerr << "cks: note: " << kTypeNote << "\n";
    if (f == Format::md && *show_type) {
      std::cout << "\nNote: " << kTypeNote << ".\n";
      for (size_t i = 0; i < ranking.size(); ++i) {
        const std::string type = cutlass_type(KernelDesc::from_canonical(ranking[i].canonical));
        std::cout << "\n### " << i + 1 << ". " << ranking[i].kernel_id << " (" << knobs[i] << ")\n\n```cpp\n"
                  << "// complete file: cks emit " << ranking[i].kernel_id << " --knobs " << knobs[i]
                  << "\n// needs -DNDEBUG -DCUTE_SM90_EXTENDED_MMA_SHAPES_ENABLED -arch=sm_90a\n"
                  << type << (type.ends_with('\n') ? "" : "\n") << "```\n";
      }
    }
  });
}

}  // namespace

void register_models(CLI::App& app) {
  register_train(app);
  register_eval(app);
  register_select(app);
}

}  // namespace cks::cli
