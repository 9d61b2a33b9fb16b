// `cks plan remeasure`: a seeded random sample of ok measurements, planned again (repeatability).
#include <algorithm>
#include <fstream>
#include <cmath>
#include <map>
#include <set>
#include <tuple>

#include "cks/common.hpp"
#include "cks/plan.hpp"
#include "cks/registry.hpp"
#include "common/json_limits.hpp"
#include "shapes/rng.hpp"

namespace cks {

namespace {

// Kernel IDs of a pool file (one per line, '#' comments).
std::set<std::string> read_ids(const std::string& path) {
  check_input_file(path, "pool file");
  std::ifstream in(path);
  if (!in) throw Error("cannot read pool file " + path);
  std::set<std::string> ids;
  for (std::string line; std::getline(in, line);) {
    if (auto hash = line.find('#'); hash != std::string::npos) line.erase(hash);
    const auto b = line.find_first_not_of(" \t\r"), e = line.find_last_not_of(" \t\r");
    if (b == std::string::npos) continue;
    const std::string id = line.substr(b, e - b + 1);
    if (!is_kernel_id(id)) throw Error(path + ": '" + id + "' is not a kernel ID");
    ids.insert(id);
  }
  if (ids.empty()) throw Error("pool file " + path + " lists no kernels");
  return ids;
}

}  // namespace

Plan make_remeasure_plan(const Registry& reg, const RemeasureOptions& o) {
  if (!(o.fraction > 0 && o.fraction <= 1)) throw Error("--fraction must be in (0, 1]");
  const std::set<std::string> pool = o.pool.empty() ? std::set<std::string>{} : read_ids(o.pool);

  MeasurementFilter f;
  f.include_cublas = false;
  f.set = o.set;
  size_t total = 0;
  std::vector<Observation> eligible;
  // A candidate measured more than once (an earlier re-measure) is eligible once: a plan lists a
  // candidate of a group once.
  std::set<std::tuple<std::string, std::string, std::string, std::string>> seen;
  scan_ok_measurements(reg, f, [&](const Observation& ob) {
    ++total;
    if (!o.layouts.empty() && std::find(o.layouts.begin(), o.layouts.end(), ob.layout) == o.layouts.end()) return;
    if (!pool.empty() && !pool.count(ob.kernel_id)) return;
    if (!seen.emplace(ob.group_key, ob.set, ob.kernel_id, ob.knobs).second) return;
    eligible.push_back(ob);
  });
  if (eligible.empty()) throw Error("no eligible ok measurements to re-measure (check --set, --layouts and --pool)");
  size_t kernels_drawn = 0;
  if (o.kernels > 0) {
    std::set<std::string> ids;
    for (const auto& ob : eligible) ids.insert(ob.kernel_id);
    const std::vector<std::string> all(ids.begin(), ids.end());  // sorted: the draw depends on the seed only
    kernels_drawn = std::min(o.kernels, all.size());
    detail::Rng krng(detail::mix64(o.seed ^ 0x6b65726e656c7321ULL));  // "kernels!"
    std::set<std::string> keep;
    for (uint32_t i : krng.choose(static_cast<uint32_t>(all.size()), static_cast<uint32_t>(kernels_drawn)))
      keep.insert(all[i]);
    std::erase_if(eligible, [&](const Observation& ob) { return !keep.count(ob.kernel_id); });
  }
  const size_t want = std::max(o.min_rows, static_cast<size_t>(std::ceil(o.fraction * static_cast<double>(total))));
  const size_t take = std::min(want, eligible.size());
  detail::Rng rng(detail::mix64(o.seed ^ 0x72656d6561737572ULL));  // "remeasur"
  auto chosen = rng.choose(static_cast<uint32_t>(eligible.size()), static_cast<uint32_t>(take));
  std::sort(chosen.begin(), chosen.end());  // scan order: by group, kernel, knobs

  std::map<std::pair<std::string, std::string>, GroupInfo> infos;  // (key, set) -> registry group
  for (auto& g : reg.groups()) infos.emplace(std::make_pair(g.key, g.set), std::move(g));
  Plan plan;
  plan.name = o.name;
  plan.created_by = std::string("cks plan remeasure ") + CKS_VERSION;
  nlohmann::ordered_json header{{"created_at", utc_now()}, {"policy", "remeasure"},    {"seed", o.seed},
                                {"fraction", o.fraction},  {"ok_rows_in_source", total}, {"eligible", eligible.size()},
                                {"rows", take}};
  if (!o.pool.empty()) header["pool"] = o.pool;
  if (o.kernels > 0) header["kernels"] = kernels_drawn;
  if (!o.set.empty()) header["set"] = o.set;
  plan.header_json = header.dump();
  for (uint32_t i : chosen) {
    const Observation& ob = eligible[i];
    if (plan.groups.empty() || plan.groups.back().group.key != ob.group_key || plan.groups.back().group.set != ob.set) {
      const auto it = infos.find({ob.group_key, ob.set});
      if (it == infos.end()) throw Error("registry: measurement of group '" + ob.group_key + "' without its group row");
      plan.groups.push_back({it->second, {}, "", false});
    }
    plan.groups.back().candidates.emplace_back(ob.kernel_id, ob.knobs);
  }
  if (want > take)
    std::fprintf(stderr, "cks plan remeasure: only %zu eligible rows, %zu wanted\n", eligible.size(), want);
  return plan;
}

Plan remaining_plan(const Plan& plan, const Registry& reg, int max_attempts, const std::string& name) {
  if (max_attempts < 1) throw Error("--max-attempts must be at least 1");
  Plan out;
  out.name = name;
  out.created_by = std::string("cks plan remaining ") + CKS_VERSION;
  size_t before = 0, after = 0;
  for (const auto& pg : plan.groups) {
    const auto done = reg.final_items(pg.group.key, max_attempts);
    const std::set<CandidateRef> finished(done.begin(), done.end());
    PlanGroup g{pg.group, {}, "", false, pg.whole, pg.priority};
    for (const auto& c : pg.candidates)
      if (!finished.count(c)) g.candidates.push_back(c);
    before += pg.candidates.size();
    after += g.candidates.size();
    if (!g.candidates.empty()) out.groups.push_back(std::move(g));
  }
  out.header_json = nlohmann::ordered_json{{"created_at", utc_now()},
                                           {"remaining_of", plan.name},
                                           {"source_header", nlohmann::json::parse(plan.header_json, nullptr, false)},
                                           {"candidates_before", before},
                                           {"candidates_left", after},
                                           {"max_attempts", max_attempts}}
                        .dump();
  return out;
}

}  // namespace cks
