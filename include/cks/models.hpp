// cks/models.hpp — the learned selector's training side: labels, the training/evaluation data
// set, the rankers (XGBoost, ridge, MLP), the model file, and the regret evaluation with its
// baselines. Paper sections "Labels" ... "Evaluation"; long form in docs/models.md.
//
// Decision rule (paper eq. 1): for a problem p the selector picks argmax_c f(phi(p, c, h)) over
// the candidates; scores are only compared within one problem.
#pragma once
#include <array>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "cks/catalogue.hpp"
#include "cks/common.hpp"
#include "cks/features.hpp"
#include "cks/hw.hpp"
#include "cks/registry.hpp"

namespace cks {

class Registry;
class Selector;

// ---------------------------------------------------------------- labels
// Within a group g with oracle T*_g = max_c T(c):
//   y(c)     = T(c) / T*_g                                   (1 for a measured maximiser)
//   bands    sort by decreasing T; candidates i, i+1 adjacent in that order share a band when
//            T_i - T_{i+1} < kBandMergeSigmas * sqrt(sigma_i^2 + sigma_{i+1}^2)
//            (single linkage: a band is a maximal run of such merges); band 0 = top band
//   grade    gamma(c) = max(0, kGradeMax - band(c))
//   rel(c)   = max(0, gamma(c) - (kGradeMax - B)) = max(0, B - band(c)): with B = 2 the top band
//            has relevance 2, the second band 1, every other band 0.
// sigma is the throughput's standard deviation over the timed rounds, from the time's:
// sigma_T = T * sigma_t / t (first-order propagation through T = 2MNK / t).
inline constexpr int kGradeMax = 31;
inline constexpr int kRelevanceBands = 2;
inline constexpr double kBandMergeSigmas = 2.0;

struct GroupLabels {
  std::vector<double> y;
  std::vector<int> band, grade;
  std::vector<float> relevance;
};
// Throws Error on sizes that differ, an empty group or a non-positive throughput.
GroupLabels label_group(std::span<const double> throughput, std::span<const double> sigma,
                        int relevance_bands = kRelevanceBands);
inline double throughput_sigma(double tflops, double mean_us, double std_us) {
  return mean_us > 0 ? tflops * std_us / mean_us : 0.0;
}

// ---------------------------------------------------------------- data set
// One shape-layout group of the data set: its rows are [begin, end) of the Dataset.
struct DataGroup {
  std::string key, set;
  Problem problem;
  size_t begin = 0, end = 0;
  // cuBLAS's throughput in the same group (TFLOP/s), NaN when it was not measured.
  double cublas_tflops = std::numeric_limits<double>::quiet_NaN();
  size_t size() const { return end - begin; }
  bool is_eval() const { return set == "eval"; }
};

// Status-ok CUTLASS measurements, rows contiguous per group (group-key order), with the
// features phi(p, c, h) and the labels above. Repeated measurements of one candidate in a group
// are merged: mean of the throughputs, variances pooled (mean of sigma^2).
struct Dataset {
  std::string hw_preset;  // h used for phi
  std::vector<DataGroup> groups;
  FeatureMatrix x;
  std::vector<Candidate> candidates;  // per row; kernel indexes Catalogue::get(group layout)
  std::vector<double> tflops, sigma;  // per row
  std::vector<float> y, relevance;    // per row
  std::vector<int> grade;             // per row
  // Per row: the fewest candidates of this group that one run measuring the row measured (a pool
  // sweep measures hundreds a group; a targeted run, the picks of models or an exploration, a few).
  std::vector<uint32_t> run_rows;
  size_t skipped_unknown = 0;         // measured rows whose kernel/knobs are not in the catalogue
                                      // (or that no feature describes: a nondeterministic reduction)
  size_t skipped_groups = 0;          // groups without a positive throughput
  size_t run_normalized_groups = 0;   // groups with a run scaled by DatasetOptions::run_normalize
  size_t run_normalized_rows = 0;     // rows so scaled
  std::map<std::string, double> run_offsets;  // --run-normalize offset: delta per run uuid (us)

  size_t rows() const { return tflops.size(); }
  // The groups selected by index (in the given order), rows copied.
  Dataset subset(std::span<const size_t> group_indices) const;
  // Indices of the evaluation groups (set 'eval') and of all the others (training).
  std::vector<size_t> eval_groups() const;
  std::vector<size_t> train_groups() const;
  // The training groups of these layouts only (all of them when `layouts` is empty).
  std::vector<size_t> train_groups(std::span<const Layout> layouts) const;
};

// Per group, at most `max_candidates` rows: the `keep_top` highest throughputs (ties by row) and
// a uniformly random rest (seeded by fnv1a64("<seed>:<group key>")), in their original row
// order; labels are kept as computed on the whole group (y, bands, relevance against the
// group's T*). Groups with at most `max_candidates` rows are copied whole. For fast tuning.
// With keep_targeted T > 0 the rows of runs that measured at most T candidates of the group
// (Dataset::run_rows: the picks of models in active-learning rounds, explorations) are kept too, then
// the random rest fills the cap (a group keeps all of its targeted rows even beyond it). Without it,
// a slow pick that a model put first is one of the random rest's draws (lease 35: ~15 % of groups'
// rows are kept), so the confident mistakes active learning measures mostly never reach training.
Dataset subsample_candidates(const Dataset& d, size_t max_candidates, size_t keep_top, uint64_t seed,
                             size_t keep_targeted = 0);
// Whole shapes (every layout of one (m, n, k)), taken in the order of fnv1a64("<seed>:sub:MxNxK")
// while they fit in `max_groups` groups (a shape whose layouts would overshoot is skipped):
// indices into `groups`, ascending.
std::vector<size_t> subsample_groups(std::span<const DataGroup> groups, size_t max_groups, uint64_t seed);

using Progress = std::function<void(std::string_view what, size_t done, size_t total)>;

// How load_dataset merges a group's rows measured in different runs (leases). Hosts and clocks
// differ between leases: tiny problems ran ~7.6 % faster on lease 10's host than on the earlier
// ones (cuBLAS's median, NOTES.md), so a kernel first measured there looked better than the
// group's older rows. With `run_normalize` (the default) each run's rows of a group are scaled
// by cublas_ref / cublas_run, the ratio of the group's cuBLAS throughput in its reference run
// (the run with the most of the group's candidates that measured cuBLAS) to that in their own
// run; a run without a cuBLAS row in the group, or a ratio within `dead_band` of 1, keeps
// factor 1, and a ratio is clamped to [1/max_factor, max_factor].
//
// With `run_offset` as well (`--run-normalize offset`), a run's rows are instead corrected by one
// constant time per run, estimated over the whole registry: the corpus showed (session 22,
// docs/models.md) that later hosts measure short problems faster by a near-constant ~0.6 us per
// call (+13 % at 5 us, +4 % at 20 us, ~0 above 100-200 us), while one group's cuBLAS row scatters by
// ~4 % around that trend, so the per-group ratio adds more noise than it removes (a candidate
// measured in two runs of a group agreed to 1.0 % median raw, 1.7 % after the per-group ratio).
struct DatasetOptions {
  bool run_normalize = true;
  double dead_band = 0.01;
  double max_factor = 1.25;
  bool run_offset = false;
};

// The per-run time offsets of `--run-normalize offset`: for every run with cuBLAS rows in at least
// `min_groups` groups that another run also measured (groups whose fastest cuBLAS time is at most
// `max_us`), delta_r in microseconds such that t(g, r) + delta_r ~ tau_g for every such group g,
// fitted by alternating medians and anchored at the run with the most such groups (delta 0; ties:
// the smaller uuid). A run's rows are then read as taking t + delta_r. Runs not listed keep 0.
std::map<std::string, double> estimate_run_offsets(std::span<const Observation> cublas_rows, double max_us = 100,
                                                   size_t min_groups = 5);

// Reads a registry. Throws Error when it holds no usable measurement.
Dataset load_dataset(const Registry& registry, const HardwareDesc& hw, const Progress& progress = {});
Dataset load_dataset(const Registry& registry, const HardwareDesc& hw, const DatasetOptions& options,
                     const Progress& progress = {});

// A loaded data set as one binary file (native byte order; the corpus cache keeps one beside its
// entry, so `cks train` and `cks eval` skip the scan and the feature computation when the shards
// have not changed). write_dataset_file writes atomically; read_dataset_file returns nullopt for
// a missing file, or one that is truncated, of another format or of another feature schema.
void write_dataset_file(const Dataset& d, const std::string& path);
std::optional<Dataset> read_dataset_file(const std::string& path);
// Identifies what a data set depends on besides the registry: the hardware descriptor, the
// options and the feature schema (16 hex digits).
std::string dataset_fingerprint(const HardwareDesc& hw, const DatasetOptions& options);

// ---------------------------------------------------------------- rankers
enum class ModelKind : uint8_t { xgboost = 0, ridge = 1, mlp = 2 };
std::string_view to_string(ModelKind k);
ModelKind parse_model_kind(std::string_view s);  // throws Error "unknown model kind 'x' (...)"

// Objectives per kind (the first is the kind's default):
//   xgboost  rank:ndcg | rank:pairwise (targets rel) | reg:squarederror (target y, ablation)
//   ridge    squared (target y)
//   mlp      lambdarank-exp | lambdarank-linear | ranknet | mse
std::vector<std::string_view> objectives(ModelKind k);
// "" selects the default; throws Error naming the valid ones.
std::string resolve_objective(ModelKind k, std::string_view objective);

struct TrainOptions {
  ModelKind kind = ModelKind::xgboost;
  std::string objective;  // "" = the kind's default
  uint64_t seed = 0;
  int threads = 0;        // 0 = every core
  // Feature set (feature_mask()): "full" = every schema column; otherwise the masked columns are
  // left out of training and the model never reads them.
  std::string features = "full";
  // XGBoost (hist trees, native categoricals).
  int rounds = 300;        // with early stopping: the most rounds
  double eta = 0.1;
  int max_depth = 8;
  double min_child_weight = 1.0;
  double subsample = 0.8;
  double colsample = 0.8;  // colsample_bytree
  double l2 = 1.0;         // XGBoost lambda
  double l1 = 0.0;         // XGBoost alpha
  double gamma = 0.0;      // XGBoost min_split_loss
  int max_bin = 256;
  int max_cat_to_onehot = 4;   // XGBoost's default: one-hot splits up to 4 levels
  int max_cat_threshold = 64;  // XGBoost's default (partition splits)
  // Early stopping (0 = off): hold out `early_stopping_fraction` of the training shapes (every
  // layout of a shape together, chosen by hash), train on the rest, score the held-out groups'
  // mean top-1 regret after every round, stop after `early_stopping` rounds without a strict
  // improvement; the best round (earliest of equals) is the round count. With
  // `early_stopping_refit` the model is then retrained on every group with that many rounds,
  // otherwise the trees up to the best round are kept.
  int early_stopping = 0;
  double early_stopping_fraction = 0.2;
  bool early_stopping_refit = true;
  // Ranking objectives only (rank:ndcg, rank:pairwise): relevance = max(0, B - band) with
  // B = relevance_bands (cks/models.hpp labels); XGBoost 1.7's num_pairsample.
  int relevance_bands = kRelevanceBands;
  int num_pairsample = 1;
  // reg:squarederror only: each row weighs y^top_weight (y = throughput / the group's best), so the
  // loss spends the trees near the top of each group, where the pick is made (0 = unweighted).
  double top_weight = 0.0;
  // Ridge: ell2 shrinkage lambda on the standardised features.
  double ridge_lambda = 1.0;
  // MLP.
  std::vector<int> hidden{128, 64};
  int epochs = 30;
  double learning_rate = 1e-3;
  double dropout = 0.0;       // after every hidden ReLU (training only)
  double weight_decay = 0.0;  // > 0: AdamW with this decoupled weight decay, else Adam
  int batch_rows = 2048;      // whole groups are added to a mini-batch until it holds this many rows
  int pair_cap = 2048;     // sampled pairs per group per epoch
  int needle_top = 8;      // pairs touching the top-8 y are always kept

  // The options added for tuning (issue 6) are written only when they differ from their
  // defaults, so that a model trained with the defaults keeps its bytes.
  nlohmann::json to_json() const;
  static TrainOptions from_json(const nlohmann::json& j);  // missing keys keep defaults
};

// ---------------------------------------------------------------- feature sets
// The feature families of phi (docs/hpo.md), each a set of schema columns:
//   core       structural core: schema groups problem and kernel, and the runtime knob settings
//              (raster, max_swizzle, log2_swizzle, decomposition, splits)
//   arch       architecture descriptors (group hardware)
//   waves      waves and quantization: groups grid, waves, cluster (but multicast_load_ratio),
//              and the knobs as the scheduler resolves them (raster_along_m, swizzle_eff)
//   intensity  intensity and cache: groups intensity, cache, and multicast_load_ratio
//   smem       shared memory and residency: groups smem, residency, registers
//   balance    producer/consumer balance: t_tma_ns, t_wgmma_ns, consumer_producer_ratio
//   fill       pipeline fill and amortization: pipeline_fill, pipeline_amortization
//   estimate   the static time estimate (group estimate)
std::vector<std::string_view> feature_families();
// The family of schema column `column`.
std::string_view feature_family(size_t column);
// A feature set: "full" (every family) or families joined by '+', e.g. "core+arch+waves".
// Returns the canonical spelling (families in the order above; every family = "full").
// Throws Error naming the families on an unknown one.
std::string canonical_feature_set(std::string_view set);
// kept[c] for every schema column c.
std::vector<bool> feature_mask(std::string_view set);

// ---------------------------------------------------------------- evidence
// The measured leaders of the training groups: per group its problem and its fastest measured
// candidates (kernel ID, canonical knobs), best first. A model file carries them ("evidence",
// written by train_model); the selector adds the leaders of the problem's nearest training
// groups to the candidates its prefilter keeps (SelectorOptions::evidence_groups), so that what
// was measured fast on similar shapes is always scored by the model (docs/models.md,
// "Deployment").
struct EvidenceGroup {
  Problem problem;
  std::vector<std::pair<std::string, std::string>> leaders;  // (kernel ID, knobs), fastest first
};
struct Evidence {
  size_t top = 0;  // leaders kept per group
  std::vector<EvidenceGroup> groups;
  bool empty() const { return groups.empty(); }
  // {"top": T, "groups": [["tn", m, n, k, [[id, knobs], ...]], ...]}; empty: null.
  nlohmann::json to_json() const;
  // Throws Error on a malformed object.
  static Evidence from_json(const nlohmann::json& j);
};
inline constexpr size_t kEvidenceTop = 16;
// The `top` fastest candidates (throughput as load_dataset scaled it) of every group of `data`.
Evidence build_evidence(const Dataset& data, size_t top = kEvidenceTop);

// What a model file records besides its parameters.
struct ModelInfo {
  ModelKind kind = ModelKind::xgboost;
  std::string objective;
  uint64_t schema_hash = 0;
  std::string schema_version;
  std::string hw_preset;
  TrainOptions options;
  nlohmann::json provenance;  // data source, groups, rows, data hash, tool version
  Evidence evidence;          // the training groups' leaders (empty in models trained before it)
  // A hash of the model file's bytes the model was read from (Model::load, Model::deserialize);
  // 0 for a model trained in this process. It keys the caches of what is derived from the model
  // (the parsed model itself, the selector's per-layout set-up: docs/models.md, "Start-up").
  uint64_t source_hash = 0;
};

// A trained scorer f(phi): higher is better, compared within one problem only.
class Model {
 public:
  virtual ~Model() = default;
  const ModelInfo& info() const { return info_; }
  ModelInfo& info() { return info_; }
  // Scores raw feature rows (schema order). out.size() == x.rows. Thread-safe.
  virtual void predict(const FeatureMatrix& x, std::span<float> out) const = 0;
  // The kind-specific parameter object of the model file.
  virtual nlohmann::json parameters() const = 0;
  // Threads predict() may use (default 1: the selector's one-core latency target). An execution
  // setting, not part of the model, hence const.
  virtual void set_threads(int threads) const {}

  // Additive models (XGBoost: a sum of trees) can be scored in pieces; the selector's cascade
  // ranks many candidates by a prefix of the terms and adds the rest only for the best few.
  // terms() == 0: not additive (predict() only). Otherwise out = terms_base() followed by
  // add_terms(x, out, b, e) for consecutive ranges covering [0, terms()) equals predict() bit
  // for bit. add_terms runs on the calling thread.
  virtual size_t terms() const { return 0; }
  virtual float terms_base() const { return 0; }
  virtual void add_terms(const FeatureMatrix& x, std::span<float> out, size_t begin, size_t end) const {
    throw Error("this model is not additive");
  }
  // The terms one by one: out[r * (end - begin) + (t - begin)] = term t of row r (out.size() ==
  // x.rows * (end - begin)). Adding them to a row's score in term order is add_terms() bit for bit,
  // so threads can split a few rows' terms among them. false (out untouched): not available for
  // this model, use add_terms.
  virtual bool term_values(const FeatureMatrix& x, std::span<float> out, size_t begin, size_t end) const {
    return false;
  }

  // Model file (JSON, see docs/models.md): {"format", "kind", "objective", "schema", "hw_preset",
  // "options", "provenance", "parameters"} and, when it has any, "evidence". Written deterministically (same model, same bytes).
  std::string serialize() const;
  void save(const std::string& path) const;
  // Throws Error on a missing/unreadable file, another format, or a schema hash mismatch.
  static std::unique_ptr<Model> load(const std::string& path);
  static std::unique_ptr<Model> deserialize(std::string_view text, const std::string& origin = "model");

 protected:
  ModelInfo info_;
};

// Trains on every row of `data` (the caller selects the groups). Deterministic for a fixed
// seed and thread count. Throws Error on an empty data set or an option out of range.
std::unique_ptr<Model> train_model(const Dataset& data, const TrainOptions& options, const Progress& progress = {});
// A seed ensemble (docs/models.md, "Ensembles"): one XGBoost model whose score is the mean of the
// members' scores. The members must share kind, objective, schema, hardware preset and feature
// set (typically one recipe trained with several seeds); needs libxgboost (the members' boosters
// are merged through it). The trees are those of member 1, then member 2, ...: the selector's
// cascade (the first cascade_terms trees) and prior then read member 1's first trees. The
// model's options and evidence are member 1's; its provenance is member 1's with "ensemble"
// listing every member (seed, data hash, groups, source hash). One member: the model itself,
// rewritten as `cks train` writes models today (node statistics zeroed, booster xz-compressed).
std::unique_ptr<Model> average_models(const std::vector<const Model*>& members);
// Whether Model B can be trained in this build (libtorch found at configure time).
bool mlp_training_available();

// ---------------------------------------------------------------- evaluation
// Regret of a pick c in group g: R = 1 - T(c) / T*_g. Top-k regret: 1 - max over the first k
// picks of T / T*_g. Rank of the pick: 1 + #{c' : T(c') > T(c)} (minimum-rank ties).
inline constexpr std::array<int, 5> kTopK{1, 2, 4, 8, 16};

struct GroupOutcome {
  bool covered = false;  // the method picked a measured candidate in this group
  double regret = 0;
  std::array<double, kTopK.size()> topk_regret{};
  double rank = 0;
  double hit = 0;        // 1 when the pick is a measured maximiser (expected value for random)
  double vs_cublas = std::numeric_limits<double>::quiet_NaN();  // T(pick) / T_cuBLAS
  // max(best of the first 4 picks, T_cuBLAS) / T_cuBLAS: time four picks and cuBLAS once at
  // deployment and keep the fastest (NaN without cuBLAS, and for the random baseline).
  double top4_or_cublas = std::numeric_limits<double>::quiet_NaN();
  int64_t pick = -1;  // row offset (within the group) of the first pick; -1: none, or an expectation
  double pick_score = std::numeric_limits<double>::quiet_NaN();  // the method's score of its first pick (real picks)
};
// Outcome of ranking the group's rows by `order` (row offsets within the group, best first;
// may be shorter than the group: a method that suggests only a few candidates).
GroupOutcome outcome_of_order(std::span<const double> tflops, std::span<const uint32_t> order, double cublas_tflops);
// Outcome of scores (higher is better; ties broken by the lower row offset).
GroupOutcome outcome_of_scores(std::span<const double> tflops, std::span<const float> scores, double cublas_tflops);
// Exact expectation for a uniformly random order (top-k: k draws without replacement).
GroupOutcome outcome_of_random(std::span<const double> tflops, double cublas_tflops);

// Linear-interpolated quantile (numpy's default) of unsorted values; q in [0, 1].
double quantile(std::vector<double> values, double q);

// Per-group outcomes of one method on the evaluated groups (same order as EvalInput::groups).
struct MethodOutcomes {
  std::string method;
  std::string note;  // e.g. "unavailable: <reason>"
  std::vector<GroupOutcome> groups;
};

// The regime slices reported besides "all": size (small/medium/large), geometry
// (square/tall/wide/skinny_k) and M (m<=16, m<=256, m>256), from tags_for() on hw.
std::vector<std::string> regime_slices(const Problem& p, const HardwareDesc& hw);

// One table row per method x slice ("all", the regime slices, and "layout=<l>" per layout when
// the groups span several layouts): method, slice, groups, covered, regret_mean,
// regret_median, regret_p95, regret_max, top1_hit, rank_mean, top{1,2,4,8,16}_regret,
// vs_cublas_geomean, top4_or_cublas_geomean, note. Slices: "all" then the regime slices present, sorted.
Table summarize(const std::vector<MethodOutcomes>& methods, std::span<const DataGroup> groups, const HardwareDesc& hw);
// One row per method x group (`cks eval --per-group`): method, group, set, layout, m, n, k,
// covered, regret, top4_regret, rank, vs_cublas, the pick (kernel_id, knobs, TFLOP/s; empty for
// an expectation such as random, or cuBLAS), the group's best measured candidate, cuBLAS's
// TFLOP/s and the method's score of its pick (real picks; a reg:squarederror model's predicted
// T/T*, to compare with pick_tflops / best_tflops). `eval` holds the groups the outcomes were computed on, in the same order.
Table per_group_table(const std::vector<MethodOutcomes>& methods, const Dataset& eval);

// ---------------------------------------------------------------- baselines
// Static-score top-k: the measured candidates ranked by static_score(), ties broken as cks select
// --fallback static breaks them (the lower catalogue position first).
MethodOutcomes static_score_baseline(const Dataset& eval);
// Best single configuration: configurations (kernel + knobs) measured in at least half of the
// training groups of their layout, ordered by mean regret over those groups; in an evaluated
// group the first k configurations of that order that were measured there are the top-k picks
// (a group with none is not covered).
MethodOutcomes best_single_baseline(const Dataset& train, const Dataset& eval);
// Uniformly random pick (exact expectation).
MethodOutcomes random_baseline(const Dataset& eval);
// cuBLAS itself: regret 1 - T_cuBLAS / T*_g (negative when cuBLAS beats every CUTLASS candidate).
MethodOutcomes cublas_baseline(const Dataset& eval);
// A model's ranking.
MethodOutcomes model_outcomes(const std::string& name, const Model& model, const Dataset& eval);

// Rankings that reduce a problem's catalogue to a subset scored by the full model (the deployed
// selector, cks/selector.hpp), on measured groups. In each group the model picks among the
// measured candidates in the set `kept(problem)` returns (catalogue indices, ascending); a group
// none of whose measured candidates is in it is not covered. Regret is against the group's best
// measured candidate, as for model_outcomes(): the rows show what the reduction changes.
MethodOutcomes kept_outcomes(const std::string& name, const Model& model, const Dataset& eval,
                             const std::function<std::vector<uint32_t>(const Problem&)>& kept);
// The two-stage selector's prefilter (Selector::prefiltered) and, like for like, the exhaustive
// ranking's top-N with N = the prefilter's size. The first row's note also says how often the
// selector's top-1 and top-8 over the whole catalogue (prefilter and cascade) equal the
// exhaustive ranking's (`exhaustive`: the same model without a prefilter). Both selectors rank the
// own orientation (SelectorOptions::orientations = own; Error otherwise).
std::vector<MethodOutcomes> selector_outcomes(const std::string& name, const Model& model, const Selector& selector,
                                              const Selector& exhaustive, const Dataset& eval);

// The real picks (issue 16): what `selector.select(problem, 16)` returns over the whole catalogue
// (the code path of cks select: prefilter, cascade and all), scored on measured groups against
// the group's best measured candidate T*_g. A group is covered when the first pick has a
// measurement in it; top-k regret is the best of the measured picks among the first k (an
// unmeasured pick counts as absent, so top-k regret is an upper bound while picks are missing).
// The note gives the coverage: groups whose first pick, and whose first four picks, were measured.
// A swapped pick (both orientations) is no candidate of the data set: unscored, and the note
// counts the groups whose first pick is one.
MethodOutcomes real_pick_outcomes(const std::string& name, const Selector& selector, const Dataset& eval);
// Position of a candidate in its layout's catalogue (Catalogue::candidates()); the order cks
// select breaks score ties by. Throws Error for a candidate the catalogue does not hold.
uint32_t catalogue_position(Layout layout, const Candidate& c);
// The same, or nothing for a measured candidate the catalogue does not enumerate (a knob variant
// outside the catalogue's knob set, e.g. an exploration plan's split-K 8): cks select never
// returns such a candidate.
std::optional<uint32_t> find_catalogue_position(Layout layout, const Candidate& c);

// nvMatmulHeuristics (PyPI nvidia-matmul-heuristics) queried through tools/nvmmh_query.py for
// H200 SXM, CUTLASS3 target, BF16 "TST" precision. A suggestion (tile, cluster, split-K) maps,
// as in CUTLASS's integration (generate_sm90_from_heuristics_configs), onto every schedule and
// tile scheduler of that tile/cluster with CUTLASS's automatic stage count; the profiler then
// keeps the best of them, so a suggestion's value is the best measured candidate it maps to.
// Top-k: the best over the first k suggestions that map to a measured candidate. When the
// package (or Python) is missing the row's note is "unavailable: <reason>".
struct NvmmhSuggestion {
  int tm = 0, tn = 0, tk = 0, cm = 1, cn = 1, stages = 0, split_k = 1;
};
struct NvmmhResult {
  bool available = false;
  std::string reason;  // why not available
  std::vector<std::vector<NvmmhSuggestion>> suggestions;  // per evaluated group
};
NvmmhResult query_nvmmh(std::span<const DataGroup> groups, int count = 16);
MethodOutcomes nvmmh_baseline(const Dataset& eval, const NvmmhResult& result);

// Cross-validation folds grouped by shape: every layout of one (m, n, k) lands in the same fold.
// The distinct shapes, sorted by fnv1a64("<seed>:<m>x<n>x<k>"), are dealt round-robin into the
// folds. Returns the fold of each group. Throws Error with fewer shapes than folds.
std::vector<int> shape_folds(std::span<const DataGroup> groups, int folds, uint64_t seed);

}  // namespace cks
