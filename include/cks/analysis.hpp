// cks/analysis.hpp — retrospective studies of the measured corpus (issue 7, parts 2 and 3):
// how candidate parameters and derived features correlate with measured throughput, globally
// and within shape-layout groups (the paper's "Table 4" study), and how well the sampling
// policies expose near-optimal kernels on the exhaustively measured evaluation groups (the
// paper's "Figs. 3-4" study and its alpha ablation). Long form and results: docs/analysis.md.
//
// The paper's equations were lost in extraction; the definitions used here are:
//   T(c)        measured throughput of candidate c in group g (TFLOP/s; repeats: their mean)
//   T*_g        max over the group's status-ok candidates of T(c)
//   y(c)        T(c) / T*_g
//   cut rows    candidates stopped after their warm-up round because they were > 5x slower than
//               the group's best so far; they keep the throughput of that round (always far from
//               the oracle) and are never "within eps"
//   rho         Spearman's rank correlation: Pearson's correlation of the average ranks (ties
//               share the mean of their ranks); undefined when either side is constant
//   rho_global  rho(feature, y) over the rows of every group of a partition pooled together;
//               rho_global_raw the same against raw T (the paper's pooled counter correlation)
//   rho_g       rho(feature, T) over the candidates of one group (the same for y: monotone);
//               a group is "computable" for a feature when neither the feature nor T is
//               constant over its candidates
//   regret      R_B(g) = 1 - max_{c in S_B(g)} T(c) / T*_g for a sample S_B(g) of B candidates
//   within eps  y(c) >= 1 - eps;  P_eps(B) = probability that S_B(g) holds such a candidate
#pragma once
#include <cstddef>
#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "cks/catalogue.hpp"
#include "cks/common.hpp"
#include "cks/features.hpp"
#include "cks/hw.hpp"
#include "cks/models.hpp"
#include "cks/plan.hpp"
#include "cks/registry.hpp"
#include "cks/sampling.hpp"
#include "cks/shapes.hpp"

namespace cks {


// Progress callback (what, done, total); total 0 when unknown.
using AnalysisProgress = std::function<void(std::string_view what, size_t done, size_t total)>;

// ---------------------------------------------------------------- data
// Which groups a study reads: set 'eval' (exhaustive), set 'train', or every group.
enum class GroupSelection : uint8_t { eval = 0, train = 1, all = 2 };
std::string_view to_string(GroupSelection s);
GroupSelection parse_group_selection(std::string_view s);  // throws Error "unknown --groups 'x' (...)"

// One shape-layout group: its measured candidate universe (status ok, plus cut rows when asked).
struct AnalysisGroup {
  std::string key, set;               // a key listed under several sets counts as 'eval' if any is
  Problem problem;
  ShapeTags tags;                     // tags_for(problem, hw)
  std::vector<Candidate> candidates;  // catalogue order (kernel, then knob_settings() order)
  std::vector<double> tflops;         // T(c): mean over status-ok repeats; cut: the warm-up round's
  std::vector<uint8_t> cut;           // 1 for a cut candidate (no status-ok row)
  double oracle = 0;                  // T*_g (status-ok candidates only)
  size_t size() const { return candidates.size(); }
  size_t cut_count() const;
};

struct AnalysisData {
  std::string hw_preset;
  std::vector<AnalysisGroup> groups;  // group-key order
  size_t skipped_unknown = 0;         // measured rows whose kernel/knobs are not in the catalogue
  size_t skipped_groups = 0;          // selected groups without a positive status-ok throughput
};

struct AnalysisLoadOptions {
  GroupSelection groups = GroupSelection::eval;
  bool include_cut = true;  // add the cut candidates to each group's universe
  std::vector<Layout> layouts;  // only groups of these layouts (empty: every layout)
};
// Reads the CUTLASS measurements of the selected groups (cuBLAS rows are left out). Throws Error
// when no selected group has a usable measurement.
AnalysisData load_analysis_data(const Registry& reg, const HardwareDesc& hw, const AnalysisLoadOptions& options,
                                const AnalysisProgress& progress = {});

// ---------------------------------------------------------------- statistics
// Average (fractional) ranks, 1-based: ties share the mean of the ranks they span.
std::vector<double> average_ranks(std::span<const double> values);
// Spearman's rho of paired samples (pairs with a NaN on either side dropped). NaN when fewer
// than two pairs remain or either side is constant.
double spearman(std::span<const double> x, std::span<const double> y);

// ---------------------------------------------------------------- feature study
// A partition of the groups by one shape tag of tags_for(): "all" (one value "all"), "size"
// (small, medium, large), "geometry" (square, tall, wide, skinny_k), "regime" (memory_bound,
// balanced, compute_bound).
inline constexpr std::string_view kPartitions[] = {"all", "size", "geometry", "regime"};
// The value of a partition for a group's tags ("all" for the partition "all").
std::string partition_value(std::string_view partition, const ShapeTags& tags);

// Extra, non-schema candidate quantity studied next to the schema's numeric columns.
inline constexpr std::string_view kStaticScoreFeature = "static_score";

struct FeatureCorrelation {
  std::string feature;       // schema column, or kStaticScoreFeature
  std::string feature_group; // schema group ("kernel", "waves", ...; "sampling" for the score)
  std::string partition, value;
  size_t groups = 0;         // groups in the partition value
  size_t rows = 0;           // candidates pooled (non-NaN feature)
  double rho_global = 0;     // rho(feature, y) pooled; NaN if not computable
  double rho_global_raw = 0; // rho(feature, T) pooled
  size_t groups_computable = 0;
  double rho_within_mean = 0;    // mean of rho_g over the computable groups; NaN if none
  double rho_within_median = 0;  // median of the same
  double share_positive = 0;     // share of computable groups with rho_g > 0; NaN if none
};
// Every numeric schema column and the static score, for every partition value present (rows
// in schema order, then partition order, then value order). Deterministic.
std::vector<FeatureCorrelation> feature_study(const AnalysisData& data, const HardwareDesc& hw,
                                              const AnalysisProgress& progress = {});
// Columns: feature, feature_group, partition, value, groups, rows, rho_global, rho_global_raw,
// rho_within_mean, rho_within_median, share_positive, groups_computable.
Table feature_table(std::span<const FeatureCorrelation> rows);

// ---------------------------------------------------------------- sampling study
struct SamplingStudyOptions {
  std::vector<int> budgets{8, 16, 32, 64, 128, 256, 512, 1024, 2000};  // regret/P_eps curves
  std::vector<double> eps{0.01, 0.05, 0.10};
  int reps = 100;            // repetitions of the stochastic policies (seeds seed .. seed+reps-1)
  uint64_t seed = 0;
  double alpha = 0.75;       // biased-diverse in the budget curves
  std::vector<double> alphas{0.0, 0.25, 0.5, 0.75, 1.0};  // the alpha ablation ...
  std::vector<int> alpha_budgets{200};  // ... at each of these budgets (10% of the 2,000-kernel eval pool)
};
// Throws Error on an empty or non-positive budget list, eps outside (0, 1), reps < 1, an alpha
// outside [0, 1] or a non-positive alpha budget.
void validate(const SamplingStudyOptions& o);

// The sparse tail of one group: the share of its universe within eps of the oracle.
struct GroupTail {
  std::string key;
  ShapeTags tags;
  size_t candidates = 0, cut = 0;
  double oracle_tflops = 0;
  std::vector<double> within;            // per eps: #{c : y(c) >= 1 - eps} / candidates
  long oracle_static_rank = 0;           // static rank (1-based) of the best measured candidate
  std::vector<long> first_static_rank;   // per eps: best static rank among the within-eps candidates
};

// One point of a curve: a policy at a budget (and alpha), aggregated over the groups.
struct SamplingPoint {
  std::string study;       // "budget" (regret vs B) or "alpha" (ablation at the alpha budgets)
  Policy policy = Policy::uniform;
  double alpha = 0;        // NaN for uniform and top
  int budget = 0;          // requested B (capped per group at its universe size)
  double budget_fraction = 0;  // mean over groups of min(B, |C_g|) / |C_g|
  int reps = 0;            // 1 for the deterministic top-B
  size_t groups = 0;
  // Per group: mean over the repetitions; then over groups: mean, median, p95, max.
  double regret_mean = 0, regret_median = 0, regret_p95 = 0, regret_max = 0;
  std::vector<double> p_within;  // per eps: mean over groups of the share of repetitions whose
                                 // sample holds a candidate within eps (P_eps(B))
};

struct SamplingStudy {
  SamplingStudyOptions options;
  std::vector<GroupTail> tails;       // group-key order
  std::vector<SamplingPoint> points;  // budget curves (uniform, top, biased-diverse), then alpha
};
// Every group of `data` is a universe: its measured candidates (ok and cut; a cut candidate is
// never within eps). Samples come from sample_candidates() on the pool restricted to that
// universe (catalogue order, static score of cks/sampling.hpp), so a policy here is exactly the
// one that chose the training measurements. Deterministic for a seed.
SamplingStudy sampling_study(const AnalysisData& data, const HardwareDesc& hw, const SamplingStudyOptions& options,
                             const AnalysisProgress& progress = {});

// Per group (key, geometry, size, regime, candidates, cut, oracle_tflops, within_<eps>...,
// oracle_static_rank, first_static_rank_<eps>...), then the summary rows "mean", "median", "min"
// and "max" over groups of the within columns.
Table sampling_tail_table(const SamplingStudy& s);
// Columns: study, policy, alpha, budget, budget_fraction, reps, groups, regret_mean,
// regret_median, regret_p95, regret_max, p_within_<eps>...
Table sampling_curve_table(const SamplingStudy& s);

// "1pct", "5pct", "10pct": the column suffix of an eps.
std::string eps_label(double eps);

// ---------------------------------------------------------------- counter study (Table 3)
// Hardware counters of profiled candidates (Nsight Compute, `ncu --clock-control none`), paired
// with the throughput the harness measured for the same candidate in the same group. The
// pipeline: `cks profile plan` picks the candidates (below), scripts/device/profile.sh runs
// `cks-worker --profile` under ncu on the H200, `cks profile import` stores the counters in the
// registry's `profiles` table, and `cks analyze counters` computes the correlations.

struct ProfilePlanOptions {
  Layout layout = Layout::tn;
  size_t groups = 17;      // exhaustive ('eval') groups of the layout, a seeded choice
  size_t per_group = 24;   // candidates per group, evenly spaced over the group's throughput ranks
  std::string pool;        // kernel-ID file restricting the candidates (e.g. the kernels a lease compiles)
  uint64_t seed = 0;
};
struct ProfileItem {
  std::string tag;         // "p0001", ... unique in a plan
  std::string group_key, set;
  long m = 0, n = 0, k = 0;
  Layout layout = Layout::tn;
  uint64_t group_seed = 0; // the group's operand-data seed (the registry's groups.seed)
  std::string kernel_id, knobs;
  double tflops = 0;       // the corpus measurement that chose it
};
// Throws Error when fewer than `groups` groups have `per_group` status-ok candidates in the pool.
std::vector<ProfileItem> plan_profiles(const AnalysisData& data, const Registry& reg, const ProfilePlanOptions& o);
// Columns: tag, group_key, set, m, n, k, layout, seed, kernel_id, knobs, tflops.
Table profile_plan_table(std::span<const ProfileItem> items);
// Reads a plan written as CSV by profile_plan_table (throws Error naming the line on bad input).
std::vector<ProfileItem> read_profile_plan(const std::string& path);

struct ProfileImportStats {
  std::string run_uuid;
  size_t chunks = 0, items = 0, profiled = 0, rows = 0;
  size_t unpaired = 0;     // profiled items without an ncu row (a chunk cut short)
};
// Imports the chunks of a profile directory: for each `<chunk>.results.tsv` (cks-worker
// --profile) the matching `<chunk>.csv` (ncu --csv --page raw --print-units base); the i-th ncu
// kernel row is the results row with seq = i. Every metric becomes a profiles row, plus the
// harness's own timing under the profiler (cks__harness_mean_us, cks__harness_tflops). `run`
// (kind 'profile') carries the provenance. Throws Error on a tag not in `plan`, a CSV without
// the ID column, or more ncu rows than profiled items.
ProfileImportStats import_profiles(Registry& reg, const std::string& dir, std::span<const ProfileItem> plan,
                                   RunInfo run);

// A counter of the study: a raw ncu metric or one derived from several (e.g. a stall share).
struct CounterCorrelation {
  std::string counter;       // e.g. "dram_throughput_pct"
  std::string definition;    // how it is computed from the ncu metrics
  size_t profiles = 0;       // profiles with a finite value and a throughput
  size_t groups = 0, groups_computable = 0;
  double rho_global = 0;     // rho(counter, T) over every profile pooled (NaN if constant)
  double rho_within_mean = 0, rho_within_median = 0, share_positive = 0;  // over computable groups
  double paper_global = 0, paper_within = 0, paper_share = 0;  // the paper's GH200 values (NaN: not given)
};
struct CounterStudy {
  size_t profiles = 0, groups = 0;
  size_t paired_corpus = 0;  // profiles whose T is the corpus measurement (else the harness's under ncu)
  std::vector<CounterCorrelation> counters;
  // Parameters against counters within groups (the paper: stages vs long-scoreboard stalls).
  std::vector<CounterCorrelation> parameter_counter;
};
// Pairs each profile with T from `data` (the corpus), else with its own harness timing.
CounterStudy counter_study(const Registry& reg, const AnalysisData& data, const HardwareDesc& hw);
// Columns: counter, profiles, groups, groups_computable, rho_global, rho_within_mean,
// rho_within_median, share_positive, paper_rho_global, paper_rho_within, paper_share_positive,
// definition.
Table counter_table(std::span<const CounterCorrelation> rows);
// Per profile: group_key, kernel_id, knobs, tflops, then every counter of the study.
Table counter_profile_table(const Registry& reg, const AnalysisData& data, const HardwareDesc& hw);

// ---------------------------------------------------------------- repeatability
// Candidates measured status-ok in two runs (a `cks plan remeasure` sample, collected in a later
// command or lease). A pair is the candidate's first ok row in the earlier run (runs ordered by
// their start) against its first ok row in the next run that measured it. With t the mean time:
//   d      = |t_b - t_a| / t_a   (reported in %), signed: (t_b - t_a) / t_a
//   rho_g  = Spearman's rho of t_a and t_b over a group's kernel pairs (ordering stability)
//   clocks "differ" when the two rows' SM clocks are further apart than clock_tolerance_mhz;
//   the study compares that share among the largest top_share of d with the share among all.
struct RepeatabilityOptions {
  std::vector<Layout> layouts;       // only groups of these layouts (empty: every layout)
  double small_us = 20;              // "small problems": t_a below this many microseconds
  size_t min_group_pairs = 5;        // kernel pairs a group needs for its rho_g
  double clock_tolerance_mhz = 15;
  double top_share = 0.05;
};
// Throws Error on a non-positive small_us, min_group_pairs < 2, a negative tolerance or a
// top_share outside (0, 1].
void validate(const RepeatabilityOptions& o);

struct RepeatabilityRow {
  std::string run_a, run_b;          // 8-character run prefixes; "all" for the pooled row
  std::string layouts;               // layouts present, e.g. "nt" or "nt,tn"
  size_t kernel_pairs = 0, cublas_pairs = 0, groups = 0;
  // Over kernel pairs, in %: median, p90, p99, max of d; median of the signed difference.
  double median_pct = 0, p90_pct = 0, p99_pct = 0, max_pct = 0, signed_median_pct = 0;
  size_t small_pairs = 0;
  double median_small_pct = 0, median_large_pct = 0;  // t_a below / at or above small_us
  double cublas_median_pct = 0;
  size_t same_worker_pairs = 0;
  double median_same_worker_pct = 0, median_other_worker_pct = 0;
  size_t rho_groups = 0;
  double rho_median = 0;             // median rho_g over groups with min_group_pairs kernel pairs
  double clock_differs_all = 0, clock_differs_top = 0;  // shares (0..1)
};
// One row per (earlier run, later run) with kernel pairs, in run order, then the pooled "all" row
// when there is more than one. NaN where a statistic has no data. Throws Error when no candidate
// of the selected layouts was measured ok in two runs.
std::vector<RepeatabilityRow> repeatability_study(const Registry& reg, const RepeatabilityOptions& o,
                                                  const AnalysisProgress& progress = {});
// Columns: run_a, run_b, layouts, kernel_pairs, groups, median_pct, p90_pct, p99_pct, max_pct,
// signed_median_pct, small_pairs, median_small_pct, median_large_pct, cublas_pairs,
// cublas_median_pct, same_worker_pairs, median_same_worker_pct, median_other_worker_pct,
// rho_groups, rho_median, clock_differs_all, clock_differs_top.
Table repeatability_table(std::span<const RepeatabilityRow> rows);

// ---------------------------------------------------------------- noise
// Noise within one measurement (issue 4): each status-ok row times kRounds rounds of launches
// (docs/harness-gpu.md); its std_us is the sample standard deviation of the round means, so
//   cv = std_us / mean_us   (reported in %)
// is the coefficient of variation of that row. Rows with fewer than two rounds (n < 2) or a
// non-positive mean have no cv and are counted as skipped.
struct NoiseOptions {
  std::vector<Layout> layouts;       // only groups of these layouts (empty: every layout)
  std::string set;                   // only groups of this set (empty: every set)
  double small_us = 20;              // "small problems": mean below this many microseconds
  double high_pct = 5;               // a row is "noisy" when its cv exceeds this (%)
};
// Throws Error on a non-positive small_us or high_pct.
void validate(const NoiseOptions& o);

struct NoiseRow {
  std::string layout, set;           // "all" pools layouts / sets
  std::string kind;                  // "kernel" (CUTLASS candidates) or "cublas"
  size_t rows = 0;
  double median_pct = 0, p90_pct = 0, p99_pct = 0, max_pct = 0;
  size_t small_rows = 0;
  double median_small_pct = 0, median_large_pct = 0;  // mean below / at or above small_us
  double noisy_share = 0;            // share (0..1) of rows with cv > high_pct
};
struct NoiseStudy {
  std::vector<NoiseRow> rows;        // per (layout, set, kind), layouts in catalogue order and sets
                                     // by name; then per layout with several sets (layout, "all",
                                     // kind); then, with several layouts, ("all", "all", kind)
  size_t skipped = 0;                // ok rows without a cv
};
// Throws Error when no status-ok row of the selected layouts and set has a cv.
NoiseStudy noise_study(const Registry& reg, const NoiseOptions& o, const AnalysisProgress& progress = {});
// Columns: layout, set, kind, rows, median_pct, p90_pct, p99_pct, max_pct, small_rows,
// median_small_pct, median_large_pct, noisy_share.
Table noise_table(std::span<const NoiseRow> rows);

// ---------------------------------------------------------------- failures
// Attempts of the CUTLASS candidates (cuBLAS rows left out) by status and catalogue axis: which
// configurations fail to compile, fault, hang, compute wrong results or are cut (issue 4). Per
// (layout, axis, value), with attempts = measurement rows:
//   other_fail  compile_error + cannot_implement + incorrect + crash + timeout
//   cut_pct     100 cut / attempts;  fail_pct  100 (launch_error + quarantined + other_fail) / attempts
//   never_ok    kernels with attempts and no status-ok row
// Axes: "all" (one value "all"), the catalogue's kKernelAxes, tile_mn ("128x256"), spills (ptxas
// -v of the registry's kernels row: "yes" if it stores or loads spill bytes, "no", "unknown"),
// mainloop_tile_m ("pingpong/256").
inline constexpr std::string_view kFailureAxes[] = {"all",     "tile_m",   "tile_n",   "tile_k",
                                                    "tile_mn", "cluster",  "stages",   "mainloop",
                                                    "epilogue", "scheduler", "spills", "mainloop_tile_m"};
struct FailureOptions {
  std::vector<Layout> layouts;       // only groups of these layouts (empty: every layout)
  std::string set;                   // only groups of this set: train, eval, ... (empty: every set)
  size_t min_attempts = 1;           // rows with fewer attempts are left out
};
// Throws Error on min_attempts < 1.
void validate(const FailureOptions& o);

struct FailureRow {
  std::string layout;                // "tn", ...; "all" pools the layouts
  std::string axis, value;
  size_t kernels = 0, attempts = 0;  // kernels with attempts, and their attempts
  size_t ok = 0, cut = 0, launch_error = 0, quarantined = 0, other_fail = 0;
  double cut_pct = 0, fail_pct = 0;
  size_t never_ok_kernels = 0;
};
struct FailureStudy {
  std::vector<FailureRow> rows;      // layouts in catalogue order, then "all" when more than one;
                                     // axes in kFailureAxes order; values in natural order
  FailureRow total;                  // every selected attempt (layout, axis and value "all")
  std::vector<KernelAttempts> never_ok;  // kernels without an ok row: most failed (not cut) attempts
                                         // first, then most attempts, then kernel id
  size_t skipped_unknown = 0;        // kernels neither in the registry's kernels table nor the catalogue
};
// Throws Error when no CUTLASS row of the selected layouts and set was measured.
FailureStudy failure_study(const Registry& reg, const FailureOptions& o, const AnalysisProgress& progress = {});
// Columns: layout, axis, value, kernels, attempts, ok, cut, launch_error, quarantined, other_fail,
// cut_pct, fail_pct, never_ok_kernels.
Table failure_table(std::span<const FailureRow> rows);
// Columns: kernel_id, canonical, layout, attempts, one per status but ok (kStatuses order),
// first_error.
Table never_ok_table(std::span<const KernelAttempts> kernels);

// ---------------------------------------------------------------- side by side
// The regret of the real picks measured like with like (issue 16): `cks plan sidebyside` plans,
// per base group, the compared candidates C_g (the selection methods' first picks and the
// group's fastest measured candidates) R times in one stretch, as groups "<key>~r<i>" of set
// "sbs". From those rows:
//   clock_ref_g   median SM clock of the base group's ok rows (every repetition, cuBLAS too)
//   flagging      with clock_reference "candidate" (the default) a row is flagged when its clock
//                 is further than clock_tolerance_mhz from the median clock of the same
//                 candidate's repetitions: a drift of the GPU's state between repetitions. With
//                 "group", when it is that far from clock_ref_g. Under the power limit (large
//                 problems) the clock a kernel runs at is a property of the kernel (a kernel that
//                 draws more power runs at a lower clock, in every repetition); "group" flags
//                 such kernels' rows. Flagged rows are left out; a candidate with fewer than
//                 min_reps unflagged rows is "unsteady" and compared on all its rows (before
//                 session 14 it was dropped, and a dropped pick left its group uncovered: 121 of
//                 127 evaluation groups covered in lease 17's round)
//   T(c)          median over c's unflagged repetitions of its throughput (C_g less candidates
//                 with none); T_cuBLAS likewise over the repetitions' cuBLAS rows
//   T*_g          max over C_g of T(c)
//   R_m(g)        1 - T(pick_m) / T*_g, pick_m the method's first pick (the ranking is recomputed
//                 with the methods' selectors, the code path of cks select; PickMethod::top is
//                 the depth ranked, at least 4); not covered when the
//                 pick is not in C_g; top-k: the best of its first k picks present in C_g
//   floor(g)      the regret of T*_g's own candidate c* against itself: the mean over ordered
//                 pairs (i, j), i != j, of unflagged repetitions of max(0, 1 - T_i(c*) / T_j(c*)):
//                 what a perfect selector would show from single measurements (the noise floor)
//   floor_median(g)  the same at the round's own precision (T is a median over n repetitions, so
//                 its noise shrinks with n, floor's does not): the mean over 400 pairs (X, Y) of
//                 bootstrap resamples of c*'s n unflagged repetitions (n draws with replacement
//                 each; a fixed seed per group) of max(0, 1 - median(X) / median(Y)): the regret a
//                 perfect selector would show when c* is measured again with the same protocol
struct SideBySideOptions {
  std::vector<Layout> layouts;       // only these layouts (empty: every layout)
  double clock_tolerance_mhz = 30;
  std::string clock_reference = "candidate";  // "candidate" or "group" (above)
  size_t min_reps = 2;               // a candidate needs this many unflagged repetitions, else it is
                                     // "unsteady": its median over every repetition is used
  bool drop_unsteady = false;        // leave unsteady candidates out instead (before session 14)
  // Which round of a group's repetitions (cks plan sidebyside --round) is read: -1 its latest,
  // 0 every round pooled, R round R only (a group without it is left out).
  long round = -1;
  std::string base_set;              // only groups whose base group is of this set (empty: all)
};
struct SideBySideGroup {
  std::string base_key, base_set;
  Problem problem;
  // dropped: candidates left out (fewer than min_reps repetitions, or unsteady with drop_unsteady);
  // unsteady: candidates compared on every repetition since fewer than min_reps were unflagged
  size_t reps = 0, compared = 0, rows = 0, flagged = 0, dropped = 0, unsteady = 0;
  double clock_ref_mhz = 0, clock_spread_mhz = 0;  // spread: max - min over unflagged rows
  std::string best_kernel, best_knobs;
  double best_tflops = 0, cublas_tflops = 0, floor = 0, floor_median = 0;
  std::vector<double> tflops;         // T(c) per compared candidate (kept ones)
  std::vector<CandidateRef> candidates;
};
struct SideBySideStudy {
  std::vector<SideBySideGroup> groups;
  std::vector<std::string> methods;
  std::vector<std::vector<GroupOutcome>> outcomes;  // [method][group]
  size_t flagged_rows = 0, rows = 0;
};
// Throws Error when the registry holds no side-by-side group (set sbs) of the selected layouts.
SideBySideStudy sidebyside_study(const Registry& reg, const std::vector<PickMethod>& methods,
                                 const SideBySideOptions& o, const AnalysisProgress& progress = {});
// Columns: base_key, base_set, layout, m, n, k, reps, compared, rows, flagged, dropped, unsteady, clock_ref_mhz,
// clock_spread_mhz, best_kernel, best_knobs, best_tflops, cublas_tflops, floor, floor_median, then per method
// <name>_regret, <name>_top4_regret, <name>_vs_cublas.
Table sidebyside_group_table(const SideBySideStudy& s);

}  // namespace cks
