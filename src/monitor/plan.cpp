// Plan files (cks/plan.hpp): reading with line-numbered validation, atomic writing, pools.
#include "cks/plan.hpp"

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <unordered_map>
#include <unordered_set>

#include "cks/common.hpp"
#include "cks/files.hpp"
#include "common/json_limits.hpp"
#include "cks/sampling.hpp"

namespace cks {

namespace fs = std::filesystem;
using nlohmann::json;
using nlohmann::ordered_json;

namespace {

// Positioned errors: "<path>:<line>: <what>".
struct Where {
  std::string path;
  size_t line = 0;
  [[noreturn]] void fail(const std::string& what) const {
    throw Error(path + ":" + std::to_string(line) + ": " + what);
  }
};

const json* field(const json& obj, const char* key) {
  auto it = obj.find(key);
  return it == obj.end() || it->is_null() ? nullptr : &*it;
}

std::string string_field(const json& obj, const char* key, const Where& w, std::string def = "") {
  const json* v = field(obj, key);
  if (!v) return def;
  if (!v->is_string()) w.fail(std::string("\"") + key + "\" must be a string");
  return v->get<std::string>();
}

// M, N, K: integers; their range and the layout's alignment are cks::check_problem's (below).
long dim_field(const json& g, const char* key, const Where& w) {
  const json* v = field(g, key);
  if (!v || !v->is_number_integer()) w.fail(std::string("group needs an integer \"") + key + "\"");
  if (v->is_number_unsigned() && v->get<uint64_t>() > static_cast<uint64_t>(INT64_MAX))
    w.fail(std::string("group \"") + key + "\" is too large (got " + v->dump() + ")");
  return v->get<long>();
}

GroupInfo parse_group_info(const json& g, const Where& w) {
  if (!g.is_object()) w.fail("\"group\" must be an object");
  GroupInfo info;
  info.m = dim_field(g, "m", w);
  info.n = dim_field(g, "n", w);
  info.k = dim_field(g, "k", w);
  try {
    info.layout = parse_layout(string_field(g, "layout", w));
    check_problem(info.m, info.n, info.k, info.layout);
  } catch (const Error& e) {
    w.fail(std::string("group: ") + e.what());
  }
  info.key = group_key(info.m, info.n, info.k, info.layout);
  // A key is its shape's, or its shape's with a variant suffix "~<letters/digits>" (the
  // repetitions of cks plan sidebyside).
  if (const std::string key = string_field(g, "key", w); !key.empty() && key != info.key) {
    if (!is_group_key_of(key, info.m, info.n, info.k, info.layout))
      w.fail("group key '" + key + "' does not match its shape (expected '" + info.key + "' or '" + info.key +
             "~<variant>')");
    info.key = key;
  }
  info.set = string_field(g, "set", w, "train");
  if (info.set.empty()) w.fail("group \"set\" is empty");
  if (const json* tags = field(g, "tags")) {
    if (!tags->is_object()) w.fail("group \"tags\" must be an object");
    info.tags_json = tags->dump();
  }
  info.policy = string_field(g, "policy", w);
  if (const json* b = field(g, "budget")) {
    if (!b->is_number_integer() || b->get<long>() < 0) w.fail("group \"budget\" must be a non-negative integer");
    info.budget = b->get<long>();
  }
  if (const json* s = field(g, "seed")) {
    if (!s->is_number_unsigned()) w.fail("group \"seed\" must be a non-negative integer");
    info.seed = s->get<uint64_t>();
  }
  return info;
}

// The knob settings a plan may name for a kernel: knob_settings(measurable) of the kernel when it is in the
// group layout's catalogue, or CUTLASS's defaults (r=h,s=1,d=h,k=1: what every kernel runs without
// runtime arguments; older registries measured them); for an ID outside the catalogue (the fake
// backend's tests) any setting that some catalogue kernel admits. Out-of-range knobs (s=-1,
// s=999, k=-4) are refused either way.
class KnobCheck {
 public:
  explicit KnobCheck(Layout layout) : layout_(layout) {}
  // Empty when allowed, else why not.
  std::string check(const std::string& kernel_id, const RuntimeKnobs& knobs) {
    auto [it, fresh] = by_kernel_.try_emplace(kernel_id);
    if (fresh) {
      // A kernel of the layout's catalogue or a swapped kernel of the layout (find_kernel).
      if (const auto desc = find_kernel(layout_, kernel_id)) it->second = knob_settings(*desc, KnobScope::measurable);
    }
    if (!it->second.empty()) {
      if (knobs == RuntimeKnobs{}) return "";
      for (const auto& k : it->second)
        if (k == knobs) return "";
      return "knobs " + knobs.canonical() + " are not a setting of kernel " + kernel_id + " (it admits " +
             join(it->second) + ")";
    }
    static const std::vector<RuntimeKnobs> any = all_settings();
    for (const auto& k : any)
      if (k == knobs) return "";
    return "knobs " + knobs.canonical() + " are not a setting of any catalogue kernel (raster m or n; swizzle 1, 2, 4 "
           "or 8; split-K 2, 4, 8, 16 or 32 only with d=sk; the default r=h,s=1,d=h,k=1)";
  }

 private:
  static std::string join(const std::vector<RuntimeKnobs>& v) {
    std::string s;
    for (const auto& k : v) s += (s.empty() ? "" : "; ") + k.canonical();
    return s;
  }
  static std::vector<RuntimeKnobs> all_settings() {
    std::vector<RuntimeKnobs> out;
    for (auto ml : {MainloopSchedule::tma_ws, MainloopSchedule::cooperative})
      for (auto sched : {TileSchedulerKind::persistent, TileSchedulerKind::stream_k}) {
        KernelDesc k;
        k.mainloop = ml;
        k.scheduler = sched;
        for (const auto& kn : knob_settings(k, KnobScope::measurable))
          if (std::find(out.begin(), out.end(), kn) == out.end()) out.push_back(kn);
      }
    return out;
  }
  Layout layout_;
  // Knob settings by kernel ID; empty for an ID that is no kernel of the layout.
  std::unordered_map<std::string, std::vector<RuntimeKnobs>> by_kernel_;
};

std::vector<CandidateRef> parse_candidate_list(const json& list, Layout layout, const Where& w) {
  KnobCheck knob_check(layout);
  std::vector<CandidateRef> out;
  std::set<CandidateRef> seen;
  out.reserve(list.size());
  for (size_t i = 0; i < list.size(); ++i) {
    const json& c = list[i];
    const std::string at = "candidate " + std::to_string(i + 1) + ": ";
    if (!c.is_array() || c.size() != 2 || !c[0].is_string() || !c[1].is_string())
      w.fail(at + "expected [\"<kernel_id>\", \"<knobs>\"]");
    const std::string id = c[0].get<std::string>();
    if (!is_kernel_id(id)) w.fail(at + "bad kernel id '" + id + "' (expected k + 16 hex digits)");
    std::string knobs;
    try {
      const RuntimeKnobs parsed = RuntimeKnobs::from_canonical(c[1].get<std::string>());
      if (const std::string why = knob_check.check(id, parsed); !why.empty()) w.fail(at + why);
      knobs = parsed.canonical();
    } catch (const Error& e) {
      if (std::string_view(e.what()).starts_with(w.path + ":")) throw;
      w.fail(at + e.what());
    }
    CandidateRef ref{id, knobs};
    if (!seen.insert(ref).second) w.fail(at + "duplicate candidate " + id + " " + knobs);
    out.push_back(std::move(ref));
  }
  return out;
}

PlanGroup parse_group_line(const json& j, const fs::path& plan_dir, const Where& w) {
  if (!j.is_object() || !j.contains("group") || !j.contains("candidates"))
    w.fail("expected a group line {\"group\":{...},\"candidates\":...}");
  PlanGroup pg;
  pg.group = parse_group_info(j["group"], w);
  if (const json* whole = field(j["group"], "whole")) {
    if (!whole->is_boolean()) w.fail("group \"whole\" must be true or false");
    pg.whole = whole->get<bool>();
  }
  if (const json* pr = field(j["group"], "priority")) {
    if (!pr->is_number_integer() || pr->get<long>() < 0 || pr->get<long>() > 1000)
      w.fail("group \"priority\" must be an integer from 0 to 1000");
    pg.priority = pr->get<int>();
  }
  const json& cands = j["candidates"];
  if (cands.is_array()) {
    pg.candidates = parse_candidate_list(cands, pg.group.layout, w);
    return pg;
  }
  if (cands != "exhaustive") w.fail("\"candidates\" must be a list or \"exhaustive\"");
  pg.pool = string_field(j, "pool", w);
  if (pg.pool.empty()) w.fail("an exhaustive group needs \"pool\": the pool file to enumerate");
  const std::string knobs = string_field(j, "knobs", w, "all");
  if (knobs != "all" && knobs != "default") w.fail("\"knobs\" must be \"all\" or \"default\" (got '" + knobs + "')");
  pg.default_knobs = knobs == "default";
  const fs::path pool_path = fs::path(pg.pool).is_absolute() ? fs::path(pg.pool) : plan_dir / pg.pool;
  try {
    pg.candidates = exhaustive_candidates(pool_path.string(), pg.group.layout, pg.default_knobs);
  } catch (const Error& e) {
    w.fail(e.what());
  }
  return pg;
}

}  // namespace

bool is_kernel_id(std::string_view s) {
  if (s.size() != 17 || s[0] != 'k') return false;
  for (char c : s.substr(1))
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  return true;
}

size_t Plan::candidates() const {
  size_t n = 0;
  for (const auto& g : groups) n += g.candidates.size();
  return n;
}

Plan read_plan(const std::string& path) {
  std::error_code ec;
  if (!fs::exists(path, ec)) throw Error("cannot open plan '" + path + "'");
  check_input_file(path, "plan");  // a regular file of at most 1 GiB (not /dev/zero, not a FIFO)
  std::ifstream in(path);
  if (!in) throw Error("cannot open plan '" + path + "'");
  const fs::path plan_dir = fs::path(path).parent_path();
  Plan plan;
  std::unordered_set<std::string> keys;
  Where w{path, 0};
  bool have_header = false;
  std::string line;
  while (std::getline(in, line)) {
    ++w.line;
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    json j;
    try {
      j = parse_json_limited(line, "line");
    } catch (const Error& e) {
      w.fail(std::string("not valid JSON (") + e.what() + ")");
    }
    if (!have_header) {
      if (!j.is_object() || !j.contains("plan_version")) w.fail("the first line must be the plan header {\"plan_version\":1,...}");
      if (j["plan_version"] != kPlanVersion)
        w.fail("unsupported plan_version " + j["plan_version"].dump() + " (this cks reads version " +
               std::to_string(kPlanVersion) + ")");
      plan.name = string_field(j, "name", w);
      plan.created_by = string_field(j, "created_by", w);
      json extra = j;
      for (const char* k : {"plan_version", "name", "created_by"}) extra.erase(k);
      plan.header_json = extra.dump();
      have_header = true;
      continue;
    }
    PlanGroup g = parse_group_line(j, plan_dir, w);
    if (!keys.insert(g.group.key).second) w.fail("group " + g.group.key + " appears twice");
    plan.groups.push_back(std::move(g));
  }
  if (!have_header) throw Error(path + ": empty plan (no header line)");
  return plan;
}

void write_plan(const Plan& plan, const std::string& path) {
  // Built in memory, then written through a new temp file renamed onto `path` (cks/files.hpp).
  std::ostringstream out;
  {
    ordered_json header{{"plan_version", kPlanVersion}, {"name", plan.name}, {"created_by", plan.created_by}};
    const json extra = json::parse(plan.header_json);
    for (auto it = extra.begin(); it != extra.end(); ++it) header[it.key()] = *it;
    out << header.dump() << '\n';
    for (const auto& pg : plan.groups) {
      const GroupInfo& g = pg.group;
      ordered_json line;
      line["group"] = {{"key", g.key},       {"m", g.m},
                       {"n", g.n},           {"k", g.k},
                       {"layout", std::string(to_string(g.layout))},
                       {"set", g.set},       {"tags", json::parse(g.tags_json)},
                       {"policy", g.policy}, {"budget", g.budget},
                       {"seed", g.seed}};
      if (pg.whole) line["group"]["whole"] = true;
      if (pg.priority) line["group"]["priority"] = pg.priority;
      if (pg.pool.empty()) {
        json cands = json::array();
        for (const auto& [id, knobs] : pg.candidates) cands.push_back({id, knobs});
        line["candidates"] = std::move(cands);
      } else {
        line["candidates"] = "exhaustive";
        line["pool"] = pg.pool;
        line["knobs"] = pg.default_knobs ? "default" : "all";
      }
      out << line.dump() << '\n';
    }
  }
  write_file_atomic(path, out.view());
}

std::vector<CandidateRef> exhaustive_candidates(const std::string& pool_path, Layout layout, bool default_knobs) {
  const Catalogue& cat = Catalogue::get(layout);
  std::vector<CandidateRef> out;
  for (const Candidate& c : read_pool_file(pool_path, cat)) {
    const KernelDesc& k = cat.kernels()[c.kernel];
    if (!default_knobs || c.knobs == knob_settings(k).front()) out.emplace_back(k.id(), c.knobs.canonical());
  }
  return out;
}

Plan merge_plans(const std::vector<std::string>& paths, const std::string& out_dir, const std::string& name,
                 bool union_groups) {
  if (paths.empty()) throw Error("no plans to merge");
  Plan out;
  out.name = name;
  out.created_by = std::string("cks plan merge ") + CKS_VERSION;
  nlohmann::ordered_json sources = nlohmann::json::array();
  std::unordered_map<std::string, size_t> index;  // group key -> position in out.groups
  size_t unioned = 0, mixed = 0;  // joined groups; of them, with another policy or budget
  const fs::path dest = fs::absolute(out_dir.empty() ? "." : out_dir);
  for (const auto& path : paths) {
    Plan p = read_plan(path);
    sources.push_back({{"plan", path}, {"name", p.name}, {"groups", p.groups.size()},
                       {"header", nlohmann::json::parse(p.header_json, nullptr, false)}});
    for (auto& g : p.groups) {
      const auto seen = index.find(g.group.key);
      if (seen == index.end()) {
        if (!g.pool.empty())
          g.pool = fs::proximate(fs::absolute(fs::path(path).parent_path() / g.pool), dest).string();
        index.emplace(g.group.key, out.groups.size());
        out.groups.push_back(std::move(g));
        continue;
      }
      if (!union_groups)
        throw Error("plan merge: group " + g.group.key + " appears twice (again in " + path + "; --union joins them)");
      PlanGroup& first = out.groups[seen->second];
      const GroupInfo &a = first.group, &b = g.group;
      if (!first.pool.empty() || !g.pool.empty())
        throw Error("plan merge --union: group " + b.key + " is exhaustive in one plan (make it explicit with cks plan remaining)");
      // The operand data (seed) and the set make a group's identity; the policy and budget say how
      // its candidates were chosen, and a union joins candidates chosen several ways (the first
      // plan's are kept).
      if (a.set != b.set || a.seed != b.seed)
        throw Error("plan merge --union: group " + b.key + " differs between plans (set " + a.set + "/" + b.set +
                    ", seed " + std::to_string(a.seed) + "/" + std::to_string(b.seed) + ")");
      if (a.policy != b.policy || a.budget != b.budget) ++mixed;
      first.whole = first.whole || g.whole;
      first.priority = std::min(first.priority, g.priority);
      std::set<CandidateRef> have(first.candidates.begin(), first.candidates.end());
      for (auto& c : g.candidates)
        if (have.insert(c).second) first.candidates.push_back(std::move(c));
      ++unioned;
    }
  }
  out.header_json = nlohmann::ordered_json{{"created_at", utc_now()}, {"merged", sources}, {"unioned_groups", unioned},
                                           {"unioned_with_other_policy_or_budget", mixed}}.dump();
  return out;
}

}  // namespace cks
