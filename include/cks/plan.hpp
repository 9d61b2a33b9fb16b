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
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "cks/catalogue.hpp"
#include "cks/hw.hpp"
#include "cks/registry.hpp"

namespace cks {


inline constexpr int kPlanVersion = 1;

using CandidateRef = std::pair<std::string, std::string>;  // (kernel_id, RuntimeKnobs::canonical())

struct PlanGroup {
  GroupInfo group;
  std::vector<CandidateRef> candidates;  // explicit, or the expansion of an exhaustive group
  std::string pool;                      // exhaustive groups: the pool file as the plan names it
  bool default_knobs = false;            // exhaustive groups: one knob setting per kernel (its first)
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
// set, policy, budget and seed in both; anything else is an Error.
Plan merge_plans(const std::vector<std::string>& paths, const std::string& out_dir, const std::string& name,
                 bool union_groups = false);

// True for by 16 lowercase hex digits (KernelDesc::id()).
bool is_kernel_id(std::string_view s);

}  // namespace cks
