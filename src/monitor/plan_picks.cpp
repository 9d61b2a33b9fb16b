// `cks plan picks` and `cks plan sidebyside` (issue 16): plans built from what the selection
// methods really return (cks::Selector, the code path of `cks select`), so that an evaluation
// scores the real pick and compares like with like.
#include <algorithm>
#include <atomic>
#include <cstdio>
#include <exception>
#include <functional>
#include <map>
#include <mutex>
#include <set>
#include <thread>
#include <unordered_map>

#include <nlohmann/json.hpp>

#include "cks/common.hpp"
#include "cks/plan.hpp"
#include "cks/registry.hpp"
#include "cks/sampling.hpp"
#include "cks/selector.hpp"

namespace cks {

namespace {

CandidateRef ref_of(const Selection& s) { return {s.kernel_id, s.knobs_text}; }

// The candidates of one layout's catalogue grouped by kernel (catalogue indices).
const std::vector<std::vector<uint32_t>>& candidates_by_kernel(Layout layout) {
  static std::map<Layout, std::vector<std::vector<uint32_t>>> cache;
  static std::mutex mu;
  std::lock_guard lock(mu);
  auto& v = cache[layout];
  if (v.empty()) {
    const Catalogue& cat = Catalogue::get(layout);
    v.resize(cat.kernels().size());
    for (uint32_t i = 0; i < cat.candidates().size(); ++i) v[cat.candidates()[i].kernel].push_back(i);
  }
  return v;
}

// Appends `c` unless already listed.
struct OrderedSet {
  std::vector<CandidateRef> list;
  std::set<CandidateRef> seen;
  bool add(const CandidateRef& c) {
    if (!seen.insert(c).second) return false;
    list.push_back(c);
    return true;
  }
};

void check_methods(const std::vector<PickMethod>& methods) {
  if (methods.empty()) throw Error("plan picks: no selection method");
  for (const auto& m : methods) {
    if (!m.selector) throw Error("plan picks: method '" + m.name + "' has no selector");
    if (m.top == 0) throw Error("plan picks: method '" + m.name + "' needs top >= 1");
  }
}

// Each method's ranking of every group's problem, to the depth depth(method) (its own top by
// default), the groups shared out to every core (an exhaustive ranking takes seconds per
// problem); progress on stderr.
std::vector<std::vector<Ranking>> rankings(const std::vector<GroupInfo>& groups, const std::vector<PickMethod>& methods,
                                           const std::function<size_t(const PickMethod&)>& depth = {}) {
  std::vector<std::vector<Ranking>> out(groups.size());
  std::atomic<size_t> next{0}, done{0};
  std::mutex mu;
  std::exception_ptr error;
  auto work = [&] {
    for (size_t i; (i = next.fetch_add(1)) < groups.size();) {
      try {
        const GroupInfo& g = groups[i];
        const Problem p{g.m, g.n, g.k, g.layout};
        for (const auto& m : methods) out[i].push_back(m.selector->select(p, depth ? depth(m) : m.top));
      } catch (...) {
        std::lock_guard lock(mu);
        if (!error) error = std::current_exception();
        next = groups.size();
      }
      const size_t d = done.fetch_add(1) + 1;
      if (d % 100 == 0 || d == groups.size()) {
        std::lock_guard lock(mu);
        std::fprintf(stderr, "\rcks plan: ranked %zu/%zu groups", d, groups.size());
        if (d == groups.size()) std::fprintf(stderr, "\n");
      }
    }
  };
  const unsigned threads = std::max(1u, std::thread::hardware_concurrency());
  std::vector<std::thread> pool;
  for (unsigned t = 1; t < std::min<size_t>(threads, groups.size()); ++t) pool.emplace_back(work);
  work();
  for (auto& t : pool) t.join();
  if (error) std::rethrow_exception(error);
  return out;
}

// Per group key: each kernel's best ok throughput and the knobs that gave it.
struct Measured {
  std::map<std::string, std::pair<double, std::string>> best;  // kernel -> (TFLOP/s, knobs)
};

}  // namespace

Plan make_picks_plan(const std::vector<GroupInfo>& groups, const Registry* reg, const std::vector<PickMethod>& methods,
                     const PicksOptions& o) {
  check_methods(methods);
  if (o.max_attempts < 1) throw Error("--max-attempts must be at least 1");
  Plan plan;
  plan.name = o.name;
  plan.created_by = std::string("cks plan picks ") + CKS_VERSION;
  size_t picks = 0, already = 0;
  std::set<std::string> kernels;
  const auto all_ranked = rankings(groups, methods);
  for (size_t gi = 0; gi < groups.size(); ++gi) {
    const GroupInfo& g = groups[gi];
    const std::vector<Ranking>& ranked = all_ranked[gi];
    OrderedSet order;
    const size_t first = std::min(o.knob_top, ranked[0].size());
    for (size_t r = 0; r < first; ++r) order.add(ref_of(ranked[0][r]));
    for (size_t r = 0; r < first; ++r) {
      // A swapped pick's index is into swap_layout's catalogue; its knobs are that kernel's.
      const Selection& s = ranked[0][r];
      if (s.sliced) {
        // A sliced-K pick (SelectorOptions::sliced): its own settings (the slice counts and rasters).
        for (const RuntimeKnobs& k : knob_settings(selected_kernel(s, g.layout))) order.add({s.kernel_id, k.canonical()});
        continue;
      }
      const Layout l = s.swapped ? swap_layout(g.layout) : g.layout;
      const Catalogue& cat = Catalogue::get(l);
      for (uint32_t c : candidates_by_kernel(l)[s.kernel]) order.add({s.kernel_id, cat.candidates()[c].knobs.canonical()});
    }
    for (size_t r = 0; r < o.knob_top; ++r)
      for (size_t m = 1; m < ranked.size(); ++m)
        if (r < ranked[m].size()) order.add(ref_of(ranked[m][r]));
    size_t depth = 0;
    for (const auto& m : methods) depth = std::max(depth, m.top);
    for (size_t r = o.knob_top; r < depth; ++r)
      for (size_t m = 0; m < ranked.size(); ++m)
        if (r < ranked[m].size()) order.add(ref_of(ranked[m][r]));
    std::set<CandidateRef> finished;
    if (reg && !o.include_measured) {
      const auto done = reg->final_items(g.key, o.max_attempts);
      finished.insert(done.begin(), done.end());
    }
    PlanGroup pg{g, {}, "", false, false, o.priority};
    for (auto& c : order.list) {
      ++picks;
      if (finished.count(c)) {
        ++already;
        continue;
      }
      kernels.insert(c.first);
      pg.candidates.push_back(std::move(c));
    }
    if (!pg.candidates.empty()) plan.groups.push_back(std::move(pg));
  }
  nlohmann::ordered_json ms = nlohmann::json::array();
  for (const auto& m : methods) ms.push_back({{"name", m.name}, {"ranking", m.selector->description() + " [" + m.selector->mode() + "]"}, {"top", m.top}});
  plan.header_json = nlohmann::ordered_json{{"created_at", utc_now()},
                                            {"policy", "picks"},
                                            {"methods", ms},
                                            {"knob_top", o.knob_top},
                                            {"groups_in_source", groups.size()},
                                            {"distinct_picks", picks},
                                            {"already_final", already},
                                            {"kernels", kernels.size()},
                                            {"max_attempts", o.max_attempts}}
                         .dump();
  return plan;
}

Plan make_active_plan(const std::vector<GroupInfo>& groups, const Registry& reg, const std::vector<PickMethod>& methods,
                      const Selector& explorer, const ActiveOptions& o) {
  check_methods(methods);
  if (o.top == 0 && o.explore == 0) throw Error("plan active: --top and --explore are both 0");
  if (o.explore > 0 && o.explore_depth < o.explore) throw Error("--explore-depth must be at least --explore");
  // Evidence: ok rows per kernel over every group.
  std::unordered_map<std::string, size_t> evidence;
  MeasurementFilter f;
  f.include_cublas = false;
  scan_ok_measurements(reg, f, [&](const Observation& ob) { ++evidence[ob.kernel_id]; });
  struct Planned {
    GroupInfo group;
    std::vector<CandidateRef> candidates;
  };
  std::vector<Planned> planned;
  std::map<std::string, size_t> wanted;  // kernel -> groups wanting it
  size_t explored = 0;
  // The methods' rankings, and with exploration the explorer's as one more method (its picks are
  // the explorer's first `top`: one ranking of the whole catalogue per group, seconds each;
  // --explore 0 leaves it out, so that only the methods' picks are planned).
  std::vector<PickMethod> all = methods;
  if (o.explore > 0) all.push_back({"explorer", &explorer, std::max(o.explore_depth, o.top)});
  const auto all_ranked = rankings(groups, all, [&](const PickMethod& m) {
    return m.name == "explorer" && m.selector == &explorer ? std::max(o.explore_depth, o.top) : std::max<size_t>(1, o.top);
  });
  for (size_t gi = 0; gi < groups.size(); ++gi) {
    const GroupInfo& g = groups[gi];
    const auto done = reg.final_items(g.key, o.max_attempts);
    const std::set<CandidateRef> finished(done.begin(), done.end());
    OrderedSet list;
    const std::vector<Ranking>& ranked = all_ranked[gi];  // the methods', then the explorer's
    for (size_t r = 0; r < o.top; ++r)
      for (const Ranking& rk : ranked)
        if (r < rk.size() && !finished.count(ref_of(rk[r]))) list.add(ref_of(rk[r]));
    if (o.explore > 0) {
      const Ranking& deep = all_ranked[gi].back();
      std::vector<std::pair<std::pair<size_t, size_t>, CandidateRef>> by_evidence;  // ((evidence, rank), c)
      for (size_t r = 0; r < deep.size(); ++r) {
        const CandidateRef c = ref_of(deep[r]);
        if (finished.count(c) || list.seen.count(c)) continue;
        const auto it = evidence.find(c.first);
        by_evidence.push_back({{it == evidence.end() ? 0 : it->second, r}, c});
      }
      std::sort(by_evidence.begin(), by_evidence.end());
      for (size_t i = 0; i < std::min(o.explore, by_evidence.size()); ++i) explored += list.add(by_evidence[i].second);
    }
    std::set<std::string> kernels;
    for (const auto& c : list.list) kernels.insert(c.first);
    for (const auto& k : kernels) ++wanted[k];
    if (!list.list.empty()) planned.push_back({g, std::move(list.list)});
  }
  std::set<std::string> keep;
  if (o.max_kernels > 0 && wanted.size() > o.max_kernels) {
    std::vector<std::pair<size_t, std::string>> order;
    for (const auto& [k, n] : wanted) order.push_back({n, k});
    std::sort(order.begin(), order.end(), [](const auto& a, const auto& b) { return a.first > b.first || (a.first == b.first && a.second < b.second); });
    for (size_t i = 0; i < o.max_kernels; ++i) keep.insert(order[i].second);
  } else {
    for (const auto& [k, n] : wanted) keep.insert(k);
  }
  Plan plan;
  plan.name = o.name;
  plan.created_by = std::string("cks plan active ") + CKS_VERSION;
  size_t candidates = 0, dropped = 0;
  for (auto& pl : planned) {
    PlanGroup pg{pl.group, {}, "", false, false, o.priority};
    for (auto& c : pl.candidates) {
      if (keep.count(c.first)) pg.candidates.push_back(std::move(c));
      else ++dropped;
    }
    candidates += pg.candidates.size();
    if (!pg.candidates.empty()) plan.groups.push_back(std::move(pg));
  }
  size_t new_kernels = 0;
  for (const auto& k : keep) new_kernels += !evidence.count(k);
  nlohmann::ordered_json ms = nlohmann::json::array();
  for (const auto& m : methods) ms.push_back({{"name", m.name}, {"ranking", m.selector->description() + " [" + m.selector->mode() + "]"}});
  plan.header_json = nlohmann::ordered_json{{"created_at", utc_now()},
                                            {"policy", "active"},
                                            {"methods", ms},
                                            {"explorer", explorer.description() + " [" + explorer.mode() + "]"},
                                            {"top", o.top},
                                            {"explore", o.explore},
                                            {"explore_depth", o.explore_depth},
                                            {"groups_in_source", groups.size()},
                                            {"candidates", candidates},
                                            {"exploration_picks", explored},
                                            {"kernels", keep.size()},
                                            {"kernels_without_evidence", new_kernels},
                                            {"kernels_wanted", wanted.size()},
                                            {"candidates_dropped_by_max_kernels", dropped},
                                            {"max_kernels", o.max_kernels}}
                         .dump();
  return plan;
}

Plan make_fill_plan(const std::vector<GroupInfo>& groups, const Registry& reg,
                    const std::map<Layout, std::set<std::string>>& kernels, const FillOptions& o) {
  std::vector<std::pair<uint64_t, size_t>> order;
  for (size_t i = 0; i < groups.size(); ++i) order.push_back({fnv1a64(std::to_string(o.seed) + ":" + groups[i].key), i});
  std::sort(order.begin(), order.end());
  Plan plan;
  plan.name = o.name;
  plan.created_by = std::string("cks plan fill ") + CKS_VERSION;
  size_t unknown = 0;
  for (const auto& [hash, i] : order) {
    const GroupInfo& g = groups[i];
    const auto it = kernels.find(g.layout);
    if (it == kernels.end()) continue;
    const auto done = reg.final_items(g.key, o.max_attempts);
    const std::set<CandidateRef> finished(done.begin(), done.end());
    std::set<std::string> measured;  // kernels with any final row here (another knob setting counts)
    for (const auto& c : finished) measured.insert(c.first);
    PlanGroup pg{g, {}, "", false, false, o.priority};
    for (const std::string& id : it->second) {
      if (measured.count(id)) continue;
      const auto desc = find_kernel(g.layout, id);  // swapped kernels included
      if (!desc) {
        ++unknown;
        continue;
      }
      pg.candidates.push_back({id, knob_settings(*desc).front().canonical()});
    }
    if (!pg.candidates.empty()) plan.groups.push_back(std::move(pg));
  }
  size_t n = 0;
  for (const auto& [l, ks] : kernels) n += ks.size();
  plan.header_json = nlohmann::ordered_json{{"created_at", utc_now()},
                                            {"policy", "fill"},
                                            {"kernels", n},
                                            {"kernels_not_in_catalogue", unknown},
                                            {"groups_in_source", groups.size()},
                                            {"seed", o.seed},
                                            {"max_attempts", o.max_attempts}}
                         .dump();
  return plan;
}

std::string sidebyside_base_key(const std::string& key) {
  const size_t tilde = key.rfind('~');
  return tilde == std::string::npos ? key : key.substr(0, tilde);
}

size_t sidebyside_round(const std::string& key) {
  const size_t tilde = key.rfind('~');
  if (tilde == std::string::npos || tilde + 2 > key.size()) return 0;
  auto digits = [&](size_t from, size_t to) {
    return from < to && std::all_of(key.begin() + static_cast<std::ptrdiff_t>(from),
                                     key.begin() + static_cast<std::ptrdiff_t>(to), [](char c) { return c >= '0' && c <= '9'; });
  };
  if (key[tilde + 1] == 'r') return digits(tilde + 2, key.size()) ? 1 : 0;
  if (key[tilde + 1] != 's') return 0;
  const size_t r = key.find('r', tilde + 2);
  if (r == std::string::npos || !digits(tilde + 2, r) || !digits(r + 1, key.size()) || r - tilde - 2 > 6) return 0;
  return static_cast<size_t>(std::stoul(key.substr(tilde + 2, r - tilde - 2)));
}

std::string sidebyside_rep_key(const std::string& base, size_t round, size_t rep) {
  return base + (round <= 1 ? "~r" : "~s" + std::to_string(round) + "r") + std::to_string(rep);
}

Plan make_sidebyside_plan(const std::vector<GroupInfo>& groups, const Registry* reg,
                          const std::vector<PickMethod>& methods, const SideBySidePlanOptions& o) {
  check_methods(methods);
  if (o.reps < 2 || o.reps > 16) throw Error("--reps must be between 2 and 16 (got " + std::to_string(o.reps) + ")");
  std::map<std::string, Measured> measured;  // base group key -> its fastest kernels
  if (reg && o.measured_top > 0) {
    MeasurementFilter f;  // group by group: an indexed lookup each
    f.include_cublas = false;
    for (const auto& g : groups) {
      f.group_key = g.key;
      scan_ok_measurements(*reg, f, [&](const Observation& ob) {
        auto& [tflops, knobs] = measured[ob.group_key].best[ob.kernel_id];
        if (ob.tflops > tflops) tflops = ob.tflops, knobs = ob.knobs;
      });
    }
  }
  if (o.round < 1 || o.round > 999) throw Error("--round must be between 1 and 999");
  Plan plan;
  plan.name = o.name;
  plan.created_by = std::string("cks plan sidebyside ") + CKS_VERSION;
  size_t compared = 0, skipped_same = 0;
  std::set<std::string> kernels;
  const auto all_ranked = rankings(groups, methods);
  for (size_t gi = 0; gi < groups.size(); ++gi) {
    const GroupInfo& g = groups[gi];
    const std::vector<Ranking>& ranked = all_ranked[gi];
    if (o.only_differing) {
      bool differs = false;
      for (size_t m = 1; m < ranked.size(); ++m)
        differs |= !ranked[m].empty() && !ranked[0].empty() && ref_of(ranked[m][0]) != ref_of(ranked[0][0]);
      if (!differs) {
        ++skipped_same;
        continue;
      }
    }
    OrderedSet set;
    for (size_t r = 0; r < std::min(o.pick_top, ranked[0].size()); ++r) set.add(ref_of(ranked[0][r]));
    for (size_t m = 1; m < ranked.size(); ++m)
      for (size_t r = 0; r < std::min(o.other_top, ranked[m].size()); ++r) set.add(ref_of(ranked[m][r]));
    if (const auto it = measured.find(g.key); it != measured.end()) {
      std::vector<std::pair<double, CandidateRef>> top;  // (-TFLOP/s, candidate)
      for (const auto& [kernel, best] : it->second.best) top.push_back({-best.first, {kernel, best.second}});
      std::sort(top.begin(), top.end());
      for (size_t i = 0; i < std::min(o.measured_top, top.size()); ++i) set.add(top[i].second);
    }
    compared += set.list.size();
    for (const auto& c : set.list) kernels.insert(c.first);
    const size_t n = set.list.size();
    for (size_t rep = 1; rep <= o.reps; ++rep) {
      PlanGroup pg{g, {}, "", false, true, o.priority};
      pg.group.key = sidebyside_rep_key(g.key, o.round, rep);
      pg.group.set = "sbs";
      pg.group.policy = "sidebyside";
      pg.group.budget = static_cast<long>(n);
      auto tags = nlohmann::json::parse(g.tags_json, nullptr, false);
      if (!tags.is_object()) tags = nlohmann::json::object();
      tags["base_key"] = g.key;
      tags["base_set"] = g.set;
      tags["rep"] = rep;
      tags["reps"] = o.reps;
      tags["round"] = o.round;
      pg.group.tags_json = tags.dump();
      const size_t shift = (rep - 1) * n / o.reps;
      for (size_t i = 0; i < n; ++i) pg.candidates.push_back(set.list[(i + shift) % n]);
      plan.groups.push_back(std::move(pg));
    }
  }
  nlohmann::ordered_json ms = nlohmann::json::array();
  for (const auto& m : methods) ms.push_back({{"name", m.name}, {"ranking", m.selector->description() + " [" + m.selector->mode() + "]"}});
  nlohmann::ordered_json header{{"created_at", utc_now()},
                                {"policy", "sidebyside"},
                                {"methods", ms},
                                {"reps", o.reps},
                                {"round", o.round},
                                {"measured_top", o.measured_top},
                                {"pick_top", o.pick_top},
                                {"other_top", o.other_top},
                                {"base_groups", groups.size() - skipped_same},
                                {"candidates_per_rep", compared},
                                {"kernels", kernels.size()}};
  if (o.only_differing) header["base_groups_same_first_pick_skipped"] = skipped_same;
  plan.header_json = header.dump();
  return plan;
}

}  // namespace cks
