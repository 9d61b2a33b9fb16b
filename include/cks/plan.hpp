// cks/plan.hpp — collection plans: which candidates to measure on which shape-layout groups.
//
// A plan is a JSON Lines file. The first line is a header, every further line one group:
//   {"plan_version":1,"name":"...","created_by":"...", ...free-form provenance...}
//   {"group":{"key":"4096x4096x4096_tn","m":4096,"n":4096,"k":4096,"layout":"tn","set":"train",
//             "tags":{...},"policy":"biased-diverse","budget":2000,"seed":7},
//    "candidates":[["k0123456789abcdef","r=h,s=1,d=h,k=1"], ...]}
// A group may instead say "candidates":"exhaustive","pool":"<pool file>": every kernel of the
// pool (a file of kernel IDs of the group's layout) times each of its knob settings, or only
// its first setting with "knobs":"default". Candidates are listed in measurement order (best
// static rank first); key, set, tags, policy, budget and seed are optional.
#pragma once
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "cks/catalogue.hpp"
#include "cks/hw.hpp"
#include "cks/registry.hpp"

namespace cks {

class Selector;

inline constexpr int kPlanVersion = 1;

using CandidateRef = std::pair<std::string, std::string>;  // (kernel_id, RuntimeKnobs::canonical())

struct PlanGroup {
  GroupInfo group;
  std::vector<CandidateRef> candidates;  // explicit, or the expansion of an exhaustive group
  std::string pool;                      // exhaustive groups: the pool file as the plan names it
  bool default_knobs = false;            // exhaustive groups: one knob setting per kernel (its first)
  // Measured in one stretch: the monitor sets the group up only once every candidate left in it
  // is compiled (or final), so its rows are not spread over the lease ("whole": true in the
  // file; side-by-side repetitions, cks plan sidebyside).
  bool whole = false;
  // Compile priority tier ("priority": N in the file, default 0): the kernels of tier-0 groups are
  // compiled before any kernel only tier-1 groups need, and so on (within a tier, by the best
  // position in any group's list). A lease's evaluation picks go before its active-learning picks.
  int priority = 0;
};

struct Plan {
  std::string name, created_by;
  std::string header_json = "{}";  // further header fields (sampling parameters, provenance)
  std::vector<PlanGroup> groups;
  size_t candidates() const;
};

// Reads and validates a plan. Errors are cks::Error "<path>:<line>: <what>". Pool paths are
// relative to the plan's directory.
Plan read_plan(const std::string& path);
// Writes a plan atomically (temp file + rename). Exhaustive groups are written in their
// exhaustive form.
void write_plan(const Plan& plan, const std::string& path);

// The candidates of an exhaustive group: every catalogue candidate (kernel x knob setting) of
// the kernels a pool file lists (read_pool_file in cks/sampling.hpp: kernel IDs of `layout`),
// in catalogue order; with default_knobs only each kernel's first knob setting (knob_settings()
// order: raster along M, swizzle 1, the scheduler's heuristic decomposition).
std::vector<CandidateRef> exhaustive_candidates(const std::string& pool_path, Layout layout, bool default_knobs);

// `cks plan make`: the groups of a shape set (or a `cks shapes` CSV) x the candidates a
// sampling policy picks for each (cks/sampling.hpp), or exhaustive groups over a pool.
struct PlanMakeOptions {
  std::string shapes_csv;            // a `cks shapes` CSV (columns m, n, k, layout; class, detail, seed optional) ...
  std::string shape_set;             // ... or a shape set: paper | heldout | llm
  std::string exclude_set;           // drop groups whose (M, N, K) is a shape of this set (same seed)
  std::string exclude_shapes;        // ... or of this `cks shapes` CSV (any layout)
  size_t pick = 0;                   // keep a seeded random N of the groups left (0: all), in draw order
  uint64_t seed = 0;                 // shape-set construction and sampling draws
  std::vector<Layout> layouts;       // empty => every layout of the source
  size_t limit_groups = 0;           // 0 => every group
  std::string policy = "biased-diverse";  // uniform | top | biased-diverse | exhaustive
  double alpha = 0.75;
  std::optional<int> budget;         // nullopt => the paper's budget rule per group
  std::string pool;                  // kernel-ID file restricting the pool (exhaustive: required)
  bool default_knobs = false;        // exhaustive: each kernel at its default knobs only (--knobs default)
  std::string group_set = "train";   // train | eval | proof | ...
  std::string preset = kDefaultPreset;
  std::string name;                  // plan name (header)
};
// Builds the plan. `plan_dir` is where the plan will be written: an exhaustive group names its
// pool relative to it. Progress on stderr.
Plan make_plan(const PlanMakeOptions& o, const std::string& plan_dir);

// `cks plan remeasure`: a seeded random sample of a registry's ok measurements, as a plan
// that measures exactly those (group, kernel, knobs) again (the repeatability check). Groups
// keep their registry identity (key, set, seed: the same operand data), so the new rows join
// the old ones when the registries are merged.
struct RemeasureOptions {
  double fraction = 0.01;       // of all ok kernel rows in the source (cuBLAS rows excluded)
  size_t min_rows = 0;          // at least this many (when that many are eligible)
  uint64_t seed = 0;
  std::string pool;             // only kernels listed in this kernel-ID file (empty: any)
  std::string set;              // only groups of this set (empty: any)
  std::vector<Layout> layouts;  // only these layouts (empty: any)
  // Two-stage sample: first this many kernels drawn at random (seeded) from those with eligible
  // rows, then the rows from theirs only. A lease compiles what it re-measures, and a uniform
  // row sample touches nearly every kernel of a pool; this bounds the compile (0: no limit).
  size_t kernels = 0;
  std::string name;
};
// Throws Error when nothing is eligible or the fraction is outside (0, 1].
Plan make_remeasure_plan(const Registry& reg, const RemeasureOptions& o);

// `cks plan leaders`: runtime-knob variants around the leaders of measured groups (issue 4's
// "adaptively around the leaders"). In every group of `set` (default the evaluation groups),
// the `top` kernels with the highest ok throughput (a kernel's best over its measured knobs)
// are the leaders; the plan measures every catalogue candidate (runtime-knob variant) of each
// leader that the group has no final row for yet. Groups keep their registry identity, so the
// rows join the group's when the registries are merged.
struct LeadersOptions {
  size_t top = 8;               // leaders per group
  std::string set = "eval";     // groups of this set (empty: any)
  std::vector<Layout> layouts;  // only these layouts (empty: any)
  int max_attempts = 2;         // as cks plan remaining: crash/timeout attempts that make a candidate final
  std::string name;
};
// Throws Error when top is 0 or no group has an ok row.
Plan make_leaders_plan(const Registry& reg, const LeadersOptions& o);

// `cks plan remaining`: `plan` less every candidate the registry already has a final row for
// (Registry::final_items); groups left empty are dropped, exhaustive groups become explicit.
// A lease can then resume a plan without carrying the registry it was partly measured into.
Plan remaining_plan(const Plan& plan, const Registry& reg, int max_attempts, const std::string& name);

// `cks plan merge`: the groups of several plans, in order, as one plan to be written in
// `out_dir` (exhaustive groups' pool paths are re-expressed relative to it). Throws Error when
// two plans hold the same group key, unless `union_groups`: then a group met again keeps its
// first place and gains the candidates it did not list yet (a re-measure sample joined with the
// remainder of the same groups). Union needs explicit candidate lists and the same shape, layout,
// set and operand seed in both (policy and budget may differ: the first plan's are kept, e.g. a
// training group's sampling budget joined with a picks plan's); anything else is an Error.
Plan merge_plans(const std::vector<std::string>& paths, const std::string& out_dir, const std::string& name,
                 bool union_groups = false);

// `cks plan picks` (issue 16): what the selection methods really return for a set of groups,
// planned where the registry has no final row yet, so that one lease closes the evaluation's
// coverage gap. Per group, in this order (duplicates kept at their first place):
//   1. the first `knob_top` picks of the first method (the deployed `cks select`),
//   2. every catalogue knob variant of those picks' kernels,
//   3. every other method's first `knob_top` picks, interleaved by rank,
//   4. every method's remaining picks up to its `top`, interleaved by rank.
struct PickMethod {
  std::string name;            // "deployed", "exhaustive", "static", ...
  const Selector* selector = nullptr;
  size_t top = 16;
};
struct PicksOptions {
  size_t knob_top = 4;          // picks whose kernels get every knob variant (and that go first)
  int max_attempts = 2;         // crash/timeout attempts that make a candidate final (as cks collect)
  bool include_measured = false;  // plan candidates that already have a final row too
  int priority = 0;             // the groups' compile priority tier (PlanGroup::priority)
  std::string name;
};
// `groups`: the groups to plan (registry identity kept, or new groups); `reg` (may be null): the
// registry whose final rows are left out. Throws Error when `methods` is empty.
Plan make_picks_plan(const std::vector<GroupInfo>& groups, const Registry* reg, const std::vector<PickMethod>& methods,
                     const PicksOptions& o);

// `cks plan active` (issue 16, active learning): per group (training groups, or new shapes), the
// methods' first `top` picks (the deployed selector and the model over the whole catalogue: what
// the model would choose, right or wrong) and `explore` exploration picks: among the exhaustive
// ranking's first `explore_depth` candidates, those whose kernel has the least evidence (fewest
// ok measurements in the registry over every group of the layout, unmeasured kernels first):
// where the model extrapolates furthest from what it was trained on. Candidates with a final row
// in the group are left out. A lease compiles every kernel it measures, so at most
// `max_kernels` kernels are planned (0: no limit): those wanted by the most groups first (ties by
// kernel id); candidates of the other kernels are dropped.
struct ActiveOptions {
  size_t top = 2;
  size_t explore = 1;
  size_t explore_depth = 64;
  size_t max_kernels = 0;
  int max_attempts = 2;
  int priority = 0;
  std::string name;
};
// `methods`: whose first `top` picks are planned; `explorer` (the model over the whole catalogue):
// its first `top` picks are planned too, and its ranking
// whose depth-`explore_depth` list is searched for exploration picks (the exhaustive one).
Plan make_active_plan(const std::vector<GroupInfo>& groups, const Registry& reg, const std::vector<PickMethod>& methods,
                      const Selector& explorer, const ActiveOptions& o);

// `cks plan fill` (issue 20, keep the GPU busy): the kernels some plans already compile (`kernels`,
// per layout), measured at their default knobs in every group of `groups` of their layout that has
// no final row for them: GPU work that needs no further compile, for a lease's idle GPU (its own
// priority tier, after the plans it draws on). Groups in the order of fnv1a64("<seed>:<key>"), so
// a partial fill covers shapes of every kind.
struct FillOptions {
  uint64_t seed = 0;
  int max_attempts = 2;
  int priority = 2;
  std::string name;
};
Plan make_fill_plan(const std::vector<GroupInfo>& groups, const Registry& reg,
                    const std::map<Layout, std::set<std::string>>& kernels, const FillOptions& o);

// `cks plan sidebyside` (issue 16, "measure like with like"): per group, the candidates to
// compare (every method's first picks and the group's fastest measured candidates) measured
// `reps` times in one stretch: `reps` groups "<key>~r<i>" (set "sbs", the base group's operand
// seed; tags base_key, base_set, rep, reps), each "whole", each listing the candidates rotated
// by i * n / reps so no candidate always runs first. cuBLAS is timed at every repetition's set-up.
struct SideBySidePlanOptions {
  size_t reps = 3;
  size_t measured_top = 6;      // the group's fastest measured kernels (best knobs each)
  size_t pick_top = 4;          // the first method's picks (the deployed selector)
  size_t other_top = 1;         // every other method's picks
  int priority = 0;             // the groups' compile priority tier (PlanGroup::priority)
  // A later round of the same groups (a new model's picks, another lease): its repetitions are
  // groups of their own, "<key>~s<round>r<i>" (round 1: "<key>~r<i>"), measured afresh.
  size_t round = 1;
  // Only the base groups where some other method's first pick differs from the first method's
  // (a method that changes few picks is then measured where it changes them).
  bool only_differing = false;
  std::string name;
};
// The base group key of a side-by-side repetition ("<key>~r<i>", "<key>~s<R>r<i>" -> "<key>"),
// else the key; and its round (1 for "~r<i>", R for "~s<R>r<i>", 0 for a key of neither form).
std::string sidebyside_base_key(const std::string& key);
size_t sidebyside_round(const std::string& key);
std::string sidebyside_rep_key(const std::string& base, size_t round, size_t rep);
Plan make_sidebyside_plan(const std::vector<GroupInfo>& groups, const Registry* reg,
                          const std::vector<PickMethod>& methods, const SideBySidePlanOptions& o);

// `cks plan split` (issue 19, collection on a cluster): one plan cut into `parts` plans of about
// equal estimated GPU time, one per task of a job array. The cost model (split_cost_seconds) is
// a measurement's fixed cost plus its 20 timed and warm-up launches at a rough throughput, plus
// each group's set-up; calibrated on the committed corpus (docs/cluster.md). Groups go whole to
// the least loaded part, costliest first (LPT); a group costing more than a part's share is
// dealt round-robin into pieces first (its candidates alternate between the pieces, so each
// holds good and poor candidates alike), unless it is "whole" (measured in one stretch). Each
// part lists its groups (or pieces) in the input's order. Every candidate of the input is in
// exactly one part; a group split over parts keeps its key, set and seed in each, so merging the
// parts' registries joins its rows. Throws Error when a part would be empty.
struct SplitCostModel {
  double per_measurement_s = 1.0e-3;  // IPC, set-up, verification of one candidate
  double launches = 20;               // 5 warm-up + 5 x 3 timed
  double launch_s = 10e-6;            // a launch's fixed latency
  double flops_per_s = 120e12;        // the throughput a sampled candidate reaches on average
  double per_group_s = 0.5;           // operands, cuBLAS reference, group set-up
};
double split_cost_seconds(const PlanGroup& g, size_t candidates, const SplitCostModel& model = {});
struct SplitPart {
  Plan plan;
  double estimated_s = 0;
};
// `plan_dir`: where `plan` was read from, `out_dir`: where the parts will be written (exhaustive
// groups kept whole name their pool relative to it).
std::vector<SplitPart> split_plan(const Plan& plan, size_t parts, const std::string& plan_dir, const std::string& out_dir,
                                  const SplitCostModel& model = {});

// True for by 16 lowercase hex digits (KernelDesc::id()).
bool is_kernel_id(std::string_view s);

}  // namespace cks
