// `cks plan leaders`: every runtime-knob variant of each measured group's fastest kernels.
#include <algorithm>
#include <map>
#include <set>

#include "cks/common.hpp"
#include "cks/plan.hpp"
#include "cks/registry.hpp"

namespace cks {

namespace {

// A layout catalogue's candidates grouped by kernel (catalogue indices).
struct ByKernel {
  const Catalogue* cat = nullptr;
  std::vector<std::vector<uint32_t>> candidates;  // per kernel index
  explicit ByKernel(Layout layout) : cat(&Catalogue::get(layout)), candidates(cat->kernels().size()) {
    for (uint32_t i = 0; i < cat->candidates().size(); ++i) candidates[cat->candidates()[i].kernel].push_back(i);
  }
};

}  // namespace

Plan make_leaders_plan(const Registry& reg, const LeadersOptions& o) {
  if (o.top == 0) throw Error("--top must be at least 1");
  if (o.max_attempts < 1) throw Error("--max-attempts must be at least 1");
  MeasurementFilter f;
  f.include_cublas = false;
  f.set = o.set;
  // Per (group key, set): each kernel's best ok throughput.
  struct Measured {
    Layout layout = Layout::tn;
    std::map<std::string, double> best;  // kernel -> TFLOP/s
  };
  std::map<std::pair<std::string, std::string>, Measured> groups;
  scan_ok_measurements(reg, f, [&](const Observation& ob) {
    if (!o.layouts.empty() && std::find(o.layouts.begin(), o.layouts.end(), ob.layout) == o.layouts.end()) return;
    Measured& g = groups[{ob.group_key, ob.set}];
    g.layout = ob.layout;
    double& best = g.best[ob.kernel_id];
    best = std::max(best, ob.tflops);
  });
  if (groups.empty()) throw Error("no group with ok measurements (check --set and --layouts)");

  std::map<std::pair<std::string, std::string>, GroupInfo> infos;  // (key, set) -> registry group
  for (auto& g : reg.groups()) infos.emplace(std::make_pair(g.key, g.set), std::move(g));
  Plan plan;
  plan.name = o.name;
  plan.created_by = std::string("cks plan leaders ") + CKS_VERSION;
  std::map<Layout, ByKernel> by_layout;
  size_t leaders = 0, unknown = 0;
  for (const auto& [key_set, g] : groups) {
    std::vector<std::pair<double, std::string>> ranked;  // (throughput desc, kernel asc)
    for (const auto& [kernel, tflops] : g.best) ranked.emplace_back(-tflops, kernel);
    std::sort(ranked.begin(), ranked.end());
    ranked.resize(std::min(ranked.size(), o.top));
    const auto done = reg.final_items(key_set.first, o.max_attempts);
    const std::set<CandidateRef> finished(done.begin(), done.end());
    const ByKernel& cat = by_layout.try_emplace(g.layout, g.layout).first->second;
    const auto info = infos.find(key_set);
    if (info == infos.end()) throw Error("registry: measurements of group '" + key_set.first + "' without its group row");
    PlanGroup pg{info->second, {}, "", false};
    for (const auto& [neg, kernel] : ranked) {
      ++leaders;
      const auto index = cat.cat->find(kernel);
      if (!index) {  // a kernel the catalogue no longer enumerates: nothing to vary
        ++unknown;
        continue;
      }
      for (uint32_t c : cat.candidates[*index]) {
        CandidateRef ref{kernel, cat.cat->candidates()[c].knobs.canonical()};
        if (!finished.count(ref)) pg.candidates.push_back(std::move(ref));
      }
    }
    if (!pg.candidates.empty()) plan.groups.push_back(std::move(pg));
  }
  plan.header_json = nlohmann::ordered_json{{"created_at", utc_now()},
                                            {"policy", "leaders"},
                                            {"top", o.top},
                                            {"set", o.set},
                                            {"groups_in_source", groups.size()},
                                            {"leaders", leaders},
                                            {"leaders_not_in_catalogue", unknown},
                                            {"max_attempts", o.max_attempts}}
                         .dump();
  return plan;
}

}  // namespace cks
