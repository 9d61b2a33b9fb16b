// `cks plan make`: shape-set groups x sampled candidates -> a plan (cks/plan.hpp).
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <nlohmann/json.hpp>

#include "cks/common.hpp"
#include "cks/plan.hpp"
#include "cks/registry.hpp"
#include "cks/sampling.hpp"
#include "cks/shapes.hpp"
#include "common/json_limits.hpp"

#include "shapes/rng.hpp"

namespace cks {

namespace {

namespace fs = std::filesystem;

}  // namespace

Plan make_plan(const PlanMakeOptions& o, const std::string& plan_dir) {
  if (o.shapes_csv.empty() == o.shape_set.empty()) throw Error("give exactly one of --shapes FILE and --set paper|llm");
  const bool exhaustive = o.policy == "exhaustive";
  SampleOptions so;
  if (!exhaustive) {
    so.policy = parse_policy(o.policy);
    so.alpha = o.alpha;
    so.budget = o.budget;
    so.seed = o.seed;
    validate(so);
  } else if (o.pool.empty()) {
    throw Error("--policy exhaustive needs --pool (the kernel IDs to measure in every group)");
  }
  if (o.group_set.empty()) throw Error("--group-set must not be empty");
  const HardwareDesc hw = hw_preset(o.preset);

  std::vector<ShapeGroup> groups =
      o.shapes_csv.empty() ? make_shape_set(o.shape_set, o.seed, hw) : read_shapes_csv(o.shapes_csv, hw);
  if (!o.layouts.empty())
    std::erase_if(groups, [&](const ShapeGroup& g) {
      return std::find(o.layouts.begin(), o.layouts.end(), g.layout) == o.layouts.end();
    });
  if (!o.exclude_set.empty() || !o.exclude_shapes.empty()) {
    std::set<GemmShape> excluded;
    if (!o.exclude_set.empty())
      for (const auto& g : make_shape_set(o.exclude_set, o.seed, hw)) excluded.insert(g.shape);
    if (!o.exclude_shapes.empty())
      for (const auto& g : read_shapes_csv(o.exclude_shapes, hw)) excluded.insert(g.shape);
    std::erase_if(groups, [&](const ShapeGroup& g) { return excluded.count(g.shape) > 0; });
  }
  if (o.pick > 0) {  // seeded draw, in draw order: any prefix of the plan is a random sample
    detail::Rng rng(detail::mix64(o.seed ^ 0x7069636bULL));  // "pick"
    const auto n = static_cast<uint32_t>(groups.size());
    const auto chosen = rng.choose(n, std::min(n, static_cast<uint32_t>(o.pick)));
    std::vector<ShapeGroup> kept;
    for (uint32_t i : chosen) kept.push_back(std::move(groups[i]));
    groups = std::move(kept);
  }
  if (o.limit_groups > 0 && groups.size() > o.limit_groups) groups.resize(o.limit_groups);
  if (groups.empty()) throw Error("no groups selected (check --layouts and the shape source)");

  Plan plan;
  plan.name = o.name;
  plan.created_by = std::string("cks plan make ") + CKS_VERSION;
  nlohmann::ordered_json header{{"created_at", utc_now()},
                                {"source", o.shapes_csv.empty() ? "set:" + o.shape_set : o.shapes_csv},
                                {"policy", o.policy},
                                {"seed", o.seed},
                                {"group_set", o.group_set},
                                {"preset", o.preset}};
  if (!exhaustive) {
    header["alpha"] = o.alpha;
    header["budget"] = o.budget ? nlohmann::json(*o.budget) : nlohmann::json("auto");
  } else {
    header["knobs"] = o.default_knobs ? "default" : "all";
  }
  if (!o.exclude_set.empty()) header["exclude_set"] = o.exclude_set;
  if (!o.exclude_shapes.empty()) header["exclude_shapes"] = o.exclude_shapes;
  if (o.pick > 0) header["pick"] = o.pick;
  if (!o.pool.empty()) header["pool"] = o.pool;
  plan.header_json = header.dump();

  // An exhaustive group names its pool relative to the plan, so plan + pool move together.
  const std::string pool_ref =
      o.pool.empty() ? "" : fs::proximate(fs::absolute(o.pool), fs::absolute(plan_dir.empty() ? "." : plan_dir)).string();
  std::map<Layout, std::vector<Candidate>> pools;  // per layout: the --pool restriction or the catalogue
  for (size_t i = 0; i < groups.size(); ++i) {
    const ShapeGroup& sg = groups[i];
    PlanGroup pg;
    GroupInfo& g = pg.group;
    g.key = sg.key();
    g.m = sg.shape.m;
    g.n = sg.shape.n;
    g.k = sg.shape.k;
    g.layout = sg.layout;
    g.set = o.group_set;
    g.tags_json = tags_json(sg);
    g.policy = o.policy;
    g.seed = sample_stream_seed(o.seed, sg.shape, sg.layout);  // also seeds the operand data
    const Catalogue& cat = Catalogue::get(sg.layout);
    if (exhaustive) {
      pg.pool = pool_ref;
      pg.default_knobs = o.default_knobs;
      pg.candidates = exhaustive_candidates(o.pool, sg.layout, o.default_knobs);
      g.budget = static_cast<long>(pg.candidates.size());
    } else {
      auto pool = pools.find(sg.layout);
      if (pool == pools.end())
        pool = pools.emplace(sg.layout, o.pool.empty() ? cat.candidates() : read_pool_file(o.pool, cat)).first;
      const Sample s = sample_candidates(sg.shape, sg.layout, cat.kernels(), pool->second, so, hw);
      g.budget = s.budget;
      pg.candidates.reserve(s.rows.size());
      for (const auto& r : s.rows)  // by static rank: the most promising are measured first
        pg.candidates.emplace_back(cat.kernels()[r.candidate.kernel].id(), r.candidate.knobs.canonical());
    }
    plan.groups.push_back(std::move(pg));
    progress("cks plan make: groups", i + 1, groups.size());
  }
  return plan;
}

}  // namespace cks
