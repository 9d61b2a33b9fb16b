// The counter study (the paper's Table 3): which hardware counters of profiled candidates rank
// candidates within a fixed problem, as opposed to across problems. Definitions in
// include/cks/analysis.hpp; the device side is scripts/device/profile.sh.
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <functional>
#include <limits>
#include <map>
#include <set>
#include <sstream>

#include "cks/analysis.hpp"
#include "cks/models.hpp"
#include "cks/registry.hpp"
#include "cks/sampling.hpp"
#include "common/json_limits.hpp"
#include "shapes/rng.hpp"

namespace cks {

namespace {

namespace fs = std::filesystem;
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// One CSV record (RFC 4180 quoting; no embedded newlines, which neither writer produces).
std::vector<std::string> split_csv(const std::string& line) {
  std::vector<std::string> out;
  std::string cur;
  bool quoted = false;
  for (size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    if (quoted) {
      if (c == '"' && i + 1 < line.size() && line[i + 1] == '"') cur += '"', ++i;
      else if (c == '"') quoted = false;
      else cur += c;
    } else if (c == '"') {
      quoted = true;
    } else if (c == ',') {
      out.push_back(std::move(cur));
      cur.clear();
    } else if (c != '\r') {
      cur += c;
    }
  }
  out.push_back(std::move(cur));
  return out;
}

std::vector<std::string> split_tabs(const std::string& line) {
  std::vector<std::string> f;
  std::stringstream ss(line);
  for (std::string x; std::getline(ss, x, '\t');) f.push_back(x);
  return f;
}

// ncu prints numbers with thousands separators in some versions ("1,234.5"); "n/a" is no value.
double parse_number(std::string s) {
  s.erase(std::remove(s.begin(), s.end(), ','), s.end());
  if (s.empty() || s == "n/a" || s == "N/A") return kNaN;
  try {
    size_t used = 0;
    const double v = std::stod(s, &used);
    return used == s.size() ? v : kNaN;
  } catch (const std::exception&) {
    return kNaN;
  }
}

double flops(long m, long n, long k) { return 2.0 * static_cast<double>(m) * static_cast<double>(n) * static_cast<double>(k); }

}  // namespace

// ---------------------------------------------------------------- plan
std::vector<ProfileItem> plan_profiles(const AnalysisData& data, const Registry& reg, const ProfilePlanOptions& o) {
  if (o.groups == 0 || o.per_group < 2) throw Error("a profile plan needs at least 1 group and 2 candidates per group");
  const Catalogue& cat = Catalogue::get(o.layout);
  std::set<uint32_t> allowed;
  if (!o.pool.empty())
    for (const Candidate& c : read_pool_file(o.pool, cat)) allowed.insert(c.kernel);
  std::map<std::string, uint64_t> seeds;
  for (const GroupInfo& g : reg.groups())
    if (g.set == "eval") seeds[g.key] = g.seed;

  struct Eligible {
    const AnalysisGroup* group;
    std::vector<size_t> ok;  // candidate indices, throughput descending
  };
  std::vector<Eligible> eligible;
  for (const AnalysisGroup& g : data.groups) {
    if (g.set != "eval" || g.problem.layout != o.layout || !seeds.count(g.key)) continue;
    Eligible e{&g, {}};
    for (size_t i = 0; i < g.size(); ++i)
      if (!g.cut[i] && g.tflops[i] > 0 && (allowed.empty() || allowed.count(g.candidates[i].kernel))) e.ok.push_back(i);
    if (e.ok.size() < o.per_group) continue;
    std::stable_sort(e.ok.begin(), e.ok.end(), [&](size_t a, size_t b) { return g.tflops[a] > g.tflops[b]; });
    eligible.push_back(std::move(e));
  }
  if (eligible.size() < o.groups)
    throw Error("only " + std::to_string(eligible.size()) + " evaluation groups of layout " +
                std::string(to_string(o.layout)) + " have " + std::to_string(o.per_group) +
                " status-ok candidates in the pool; " + std::to_string(o.groups) + " wanted");
  detail::Rng rng(detail::mix64(o.seed ^ 0x70726f66696c65ULL));  // "profile"
  auto chosen = rng.choose(static_cast<uint32_t>(eligible.size()), static_cast<uint32_t>(o.groups));
  std::sort(chosen.begin(), chosen.end());  // group-key order

  std::vector<ProfileItem> items;
  for (uint32_t gi : chosen) {
    const Eligible& e = eligible[gi];
    const AnalysisGroup& g = *e.group;
    const size_t n = e.ok.size();
    std::set<size_t> picks;  // evenly spaced ranks, best and worst included
    for (size_t j = 0; j < o.per_group; ++j)
      picks.insert(static_cast<size_t>(std::llround(static_cast<double>(j) * static_cast<double>(n - 1) /
                                                    static_cast<double>(o.per_group - 1))));
    for (size_t rank : picks) {
      const size_t i = e.ok[rank];
      ProfileItem it;
      char tag[16];
      std::snprintf(tag, sizeof tag, "p%04zu", items.size() + 1);
      it.tag = tag;
      it.group_key = g.key;
      it.set = g.set;
      it.m = g.problem.m;
      it.n = g.problem.n;
      it.k = g.problem.k;
      it.layout = g.problem.layout;
      it.group_seed = seeds.at(g.key);
      it.kernel_id = cat.kernels()[g.candidates[i].kernel].id();
      it.knobs = g.candidates[i].knobs.canonical();
      it.tflops = g.tflops[i];
      items.push_back(std::move(it));
    }
  }
  return items;
}

Table profile_plan_table(std::span<const ProfileItem> items) {
  Table t({"tag", "group_key", "set", "m", "n", "k", "layout", "seed", "kernel_id", "knobs", "tflops"});
  for (const ProfileItem& it : items)
    t.add_row({it.tag, it.group_key, it.set, int64_t{it.m}, int64_t{it.n}, int64_t{it.k},
               std::string(to_string(it.layout)), std::to_string(it.group_seed), it.kernel_id, it.knobs,
               std::round(it.tflops * 1e3) / 1e3});
  return t;
}

std::vector<ProfileItem> read_profile_plan(const std::string& path) {
  check_input_file(path, "profile plan");
  std::ifstream in(path);
  if (!in) throw Error("cannot read profile plan " + path);
  std::string line;
  if (!std::getline(in, line) || split_csv(line).size() != 11 || split_csv(line)[0] != "tag")
    throw Error(path + ": not a profile plan (expected the CSV header of `cks profile plan`)");
  std::vector<ProfileItem> items;
  std::set<std::string> tags;
  for (long lineno = 2; std::getline(in, line); ++lineno) {
    if (line.empty()) continue;
    const auto f = split_csv(line);
    try {
      if (f.size() != 11) throw Error("expected 11 fields, got " + std::to_string(f.size()));
      ProfileItem it;
      it.tag = f[0];
      it.group_key = f[1];
      it.set = f[2];
      it.m = std::stol(f[3]);
      it.n = std::stol(f[4]);
      it.k = std::stol(f[5]);
      it.layout = parse_layout(f[6]);
      it.group_seed = std::stoull(f[7]);
      it.kernel_id = f[8];
      it.knobs = RuntimeKnobs::from_canonical(f[9]).canonical();
      it.tflops = std::stod(f[10]);
      if (!tags.insert(it.tag).second) throw Error("duplicate tag " + it.tag);
      items.push_back(std::move(it));
    } catch (const std::exception& e) {
      throw Error(path + ":" + std::to_string(lineno) + ": " + e.what());
    }
  }
  if (items.empty()) throw Error(path + ": the profile plan lists no candidates");
  return items;
}

// ---------------------------------------------------------------- import
ProfileImportStats import_profiles(Registry& reg, const std::string& dir, std::span<const ProfileItem> plan,
                                   RunInfo run) {
  std::map<std::string, const ProfileItem*> by_tag;
  for (const ProfileItem& it : plan) by_tag[it.tag] = &it;
  std::vector<fs::path> results;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    const std::string name = e.path().filename().string();
    if (name.size() > 12 && name.ends_with(".results.tsv")) results.push_back(e.path());
  }
  if (ec) throw Error("cannot list profile directory " + dir + ": " + ec.message());
  if (results.empty()) throw Error("no <chunk>.results.tsv files in " + dir);
  std::sort(results.begin(), results.end());

  ProfileImportStats st;
  run.kind = "profile";
  st.run_uuid = reg.begin_run(run);
  std::vector<ProfileRow> rows;
  for (const fs::path& rp : results) {
    ++st.chunks;
    const std::string stem = rp.string().substr(0, rp.string().size() - std::string(".results.tsv").size());
    // Results: tag status mean_us std_us sm_clock_mhz profiled seq cublas_us error
    std::ifstream rin(rp);
    std::string line;
    std::getline(rin, line);  // header
    std::vector<const ProfileItem*> by_seq;
    std::vector<double> harness_us;
    while (std::getline(rin, line)) {
      if (line.empty()) continue;
      const auto f = split_tabs(line);
      if (f.size() < 8) throw Error(rp.string() + ": malformed line '" + line + "'");
      const auto it = by_tag.find(f[0]);
      if (it == by_tag.end()) throw Error(rp.string() + ": tag " + f[0] + " is not in the profile plan");
      ++st.items;
      if (f[5] != "1") continue;
      const long seq = std::stol(f[6]);
      if (seq != static_cast<long>(by_seq.size())) throw Error(rp.string() + ": profiled rows out of sequence");
      by_seq.push_back(it->second);
      harness_us.push_back(parse_number(f[2]));
    }
    // ncu: a header line starting with "ID", a units line, then one line per profiled kernel.
    std::ifstream cin(stem + ".csv");
    std::vector<std::string> header;
    size_t row = 0;
    bool units = false;
    while (cin && std::getline(cin, line)) {
      if (line.empty() || line.starts_with("==")) continue;
      auto f = split_csv(line);
      if (header.empty()) {
        if (!f.empty() && f[0] == "ID") header = std::move(f), units = true;
        continue;
      }
      if (units) {  // the units line: its first cell is empty
        units = false;
        if (f.empty() || f[0].empty()) {
          for (size_t c = 0; c < f.size() && c < header.size(); ++c) header[c] += "\t" + f[c];
          continue;
        }
      }
      if (row >= by_seq.size())
        throw Error(stem + ".csv: more profiled kernels than profiled items (" + std::to_string(by_seq.size()) + ")");
      const ProfileItem& item = *by_seq[row];
      for (size_t c = 0; c < f.size() && c < header.size(); ++c) {
        const std::string& h = header[c];
        const auto tab = h.find('\t');
        const std::string metric = h.substr(0, tab), unit = tab == std::string::npos ? "" : h.substr(tab + 1);
        // ID, names and grid/block text columns have no "__"; device attributes and the C2C link
        // are the same for every row of a GPU (its provenance has them).
        if (metric.find("__") == std::string::npos || metric.starts_with("device__attribute") ||
            metric.starts_with("c2clink__"))
          continue;
        rows.push_back({st.run_uuid, item.group_key, item.kernel_id, item.knobs, metric, unit, parse_number(f[c])});
      }
      const double us = harness_us[row];
      rows.push_back({st.run_uuid, item.group_key, item.kernel_id, item.knobs, "cks__harness_mean_us", "us", us});
      rows.push_back({st.run_uuid, item.group_key, item.kernel_id, item.knobs, "cks__harness_tflops", "TFLOP/s",
                      us > 0 ? flops(item.m, item.n, item.k) / (us * 1e6) : kNaN});
      ++row;
      ++st.profiled;
    }
    st.unpaired += by_seq.size() - row;
  }
  reg.insert_profiles(rows);
  reg.end_run(st.run_uuid);
  st.rows = rows.size();
  return st;
}

// ---------------------------------------------------------------- study
namespace {

using Metrics = std::map<std::string, double>;  // one profile: ncu metric -> value

double get(const Metrics& m, std::initializer_list<const char*> names) {
  for (const char* n : names)
    if (auto it = m.find(n); it != m.end() && std::isfinite(it->second)) return it->second;
  return kNaN;
}

constexpr std::string_view kStallPrefix = "smsp__average_warps_issue_stalled_";
constexpr std::string_view kStallSuffix = "_per_issue_active.ratio";

// A stall reason's share of all stalled-warp samples (reasons: every stall metric present).
double stall_share(const Metrics& m, std::string_view reason) {
  double total = 0, mine = kNaN;
  for (const auto& [name, v] : m) {
    if (!name.starts_with(kStallPrefix) || !name.ends_with(kStallSuffix) || !std::isfinite(v)) continue;
    const std::string_view r =
        std::string_view(name).substr(kStallPrefix.size(), name.size() - kStallPrefix.size() - kStallSuffix.size());
    if (r == "selected") continue;  // issuing, not stalled
    total += v;
    if (r == reason) mine = v;
  }
  return total > 0 && std::isfinite(mine) ? mine / total : kNaN;
}

struct CounterDef {
  const char* name;
  const char* definition;
  double (*eval)(const Metrics&);
  double paper_global, paper_within, paper_share;
};

// The paper's counters first (its GH200 values, NaN where the text gives none), then the rest of
// the fixed metric set. Percentages are of the peak sustained rate over the kernel's duration.
const std::vector<CounterDef>& counter_defs() {
  static const std::vector<CounterDef> defs = {
      {"sm_active_pct", "100 * sm__cycles_active.avg / sm__cycles_elapsed.avg",
       [](const Metrics& m) {
         const double a = get(m, {"sm__cycles_active.avg"}), e = get(m, {"sm__cycles_elapsed.avg"});
         return e > 0 ? 100 * a / e : kNaN;
       },
       0.910, -0.001, kNaN},
      {"l2_read_sectors", "lts__t_sectors_op_read.sum", [](const Metrics& m) { return get(m, {"lts__t_sectors_op_read.sum"}); },
       0.942, -0.102, kNaN},
      {"dram_read_bytes", "dram__bytes_read.sum", [](const Metrics& m) { return get(m, {"dram__bytes_read.sum"}); }, 0.903,
       -0.055, kNaN},
      {"dram_throughput_pct", "dram__throughput.avg.pct_of_peak_sustained_elapsed",
       [](const Metrics& m) { return get(m, {"dram__throughput.avg.pct_of_peak_sustained_elapsed"}); }, kNaN, 0.408,
       0.837},
      {"tensor_active_pct",
       "sm__pipe_tensor_op_gmma_cycles_active.avg.pct_of_peak_sustained_active (else "
       "sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_active)",
       [](const Metrics& m) {
         return get(m, {"sm__pipe_tensor_op_gmma_cycles_active.avg.pct_of_peak_sustained_active",
                        "sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_active"});
       },
       kNaN, 0.392, 0.837},
      {"barrier_stall_share", "stalled_barrier / sum of stall reasons (smsp__average_warps_issue_stalled_*)",
       [](const Metrics& m) { return stall_share(m, "barrier"); }, 0.894, 0.156, kNaN},
      {"long_scoreboard_stall_share", "stalled_long_scoreboard / sum of stall reasons",
       [](const Metrics& m) { return stall_share(m, "long_scoreboard"); }, -0.679, 0.193, kNaN},
      {"wait_stall_share", "stalled_wait / sum of stall reasons", [](const Metrics& m) { return stall_share(m, "wait"); },
       kNaN, kNaN, kNaN},
      {"math_pipe_throttle_stall_share", "stalled_math_pipe_throttle / sum of stall reasons",
       [](const Metrics& m) { return stall_share(m, "math_pipe_throttle"); }, kNaN, kNaN, kNaN},
      {"mio_throttle_stall_share", "stalled_mio_throttle / sum of stall reasons",
       [](const Metrics& m) { return stall_share(m, "mio_throttle"); }, kNaN, kNaN, kNaN},
      {"short_scoreboard_stall_share", "stalled_short_scoreboard / sum of stall reasons",
       [](const Metrics& m) { return stall_share(m, "short_scoreboard"); }, kNaN, kNaN, kNaN},
      {"l2_write_sectors", "lts__t_sectors_op_write.sum", [](const Metrics& m) { return get(m, {"lts__t_sectors_op_write.sum"}); },
       kNaN, kNaN, kNaN},
      {"l2_hit_rate_pct", "lts__t_sector_hit_rate.pct", [](const Metrics& m) { return get(m, {"lts__t_sector_hit_rate.pct"}); },
       kNaN, kNaN, kNaN},
      {"dram_write_bytes", "dram__bytes_write.sum", [](const Metrics& m) { return get(m, {"dram__bytes_write.sum"}); }, kNaN,
       kNaN, kNaN},
      {"sm_throughput_pct", "sm__throughput.avg.pct_of_peak_sustained_elapsed",
       [](const Metrics& m) { return get(m, {"sm__throughput.avg.pct_of_peak_sustained_elapsed"}); }, kNaN, kNaN, kNaN},
      {"memory_throughput_pct", "gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed",
       [](const Metrics& m) { return get(m, {"gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed"}); }, kNaN,
       kNaN, kNaN},
      {"achieved_occupancy_pct", "sm__warps_active.avg.pct_of_peak_sustained_active",
       [](const Metrics& m) { return get(m, {"sm__warps_active.avg.pct_of_peak_sustained_active"}); }, kNaN, kNaN, kNaN},
      {"tensor_inst_executed", "sm__inst_executed_pipe_tensor_op_gmma.sum (else sm__inst_executed_pipe_tensor.sum)",
       [](const Metrics& m) { return get(m, {"sm__inst_executed_pipe_tensor_op_gmma.sum", "sm__inst_executed_pipe_tensor.sum"}); },
       kNaN, kNaN, kNaN},
      {"duration_us", "gpu__time_duration.sum / 1000 (ns)",
       [](const Metrics& m) {
         const double ns = get(m, {"gpu__time_duration.sum"});
         return ns / 1000;
       },
       kNaN, kNaN, kNaN},
      {"registers_per_thread", "launch__registers_per_thread",
       [](const Metrics& m) { return get(m, {"launch__registers_per_thread"}); }, kNaN, kNaN, kNaN},
      {"grid_size", "launch__grid_size", [](const Metrics& m) { return get(m, {"launch__grid_size"}); }, kNaN, kNaN, kNaN},
  };
  return defs;
}

struct Profile {
  std::string group_key, kernel_id, knobs;
  Layout layout = Layout::tn;
  double tflops = kNaN;
  bool from_corpus = false;
  Metrics metrics;
  int stages = 0;
};

std::vector<Profile> load_profiles(const Registry& reg, const AnalysisData& data, const HardwareDesc& hw) {
  // Corpus throughput by (group, kernel, knobs).
  std::map<std::tuple<std::string, std::string, std::string>, double> corpus;
  for (const AnalysisGroup& g : data.groups) {
    const Catalogue& cat = Catalogue::get(g.problem.layout);
    for (size_t i = 0; i < g.size(); ++i)
      if (!g.cut[i] && g.tflops[i] > 0)
        corpus[{g.key, cat.kernels()[g.candidates[i].kernel].id(), g.candidates[i].knobs.canonical()}] = g.tflops[i];
  }
  std::map<std::tuple<std::string, std::string, std::string, std::string>, Profile> by_key;  // run, group, kernel, knobs
  for (const ProfileRow& r : reg.profiles()) {
    Profile& p = by_key[{r.run_uuid, r.group_key, r.kernel_id, r.knobs}];
    p.group_key = r.group_key;
    p.kernel_id = r.kernel_id;
    p.knobs = r.knobs;
    p.metrics[r.metric] = r.value;
  }
  std::vector<Profile> out;
  for (auto& [key, p] : by_key) {
    const auto us = p.group_key.rfind('_');
    p.layout = parse_layout(p.group_key.substr(us + 1));
    if (const auto it = corpus.find({p.group_key, p.kernel_id, p.knobs}); it != corpus.end()) {
      p.tflops = it->second;
      p.from_corpus = true;
    } else {
      p.tflops = get(p.metrics, {"cks__harness_tflops"});
    }
    const Catalogue& cat = Catalogue::get(p.layout);
    if (const auto k = cat.find(p.kernel_id)) p.stages = resources(cat.kernels()[*k], hw).stages;
    if (std::isfinite(p.tflops)) out.push_back(std::move(p));
  }
  return out;
}

// rho over the pooled profiles and within each group, for x(profile) against y(profile).
CounterCorrelation correlate(const std::vector<Profile>& profiles, const std::function<double(const Profile&)>& x,
                             const std::function<double(const Profile&)>& y) {
  CounterCorrelation c;
  std::vector<double> xs, ys;
  std::map<std::string, std::pair<std::vector<double>, std::vector<double>>> groups;
  for (const Profile& p : profiles) {
    const double a = x(p), b = y(p);
    if (!std::isfinite(a) || !std::isfinite(b)) continue;
    xs.push_back(a);
    ys.push_back(b);
    groups[p.group_key].first.push_back(a);
    groups[p.group_key].second.push_back(b);
  }
  c.profiles = xs.size();
  c.groups = groups.size();
  c.rho_global = spearman(xs, ys);
  std::vector<double> within;
  size_t positive = 0;
  for (const auto& [key, v] : groups) {
    const double r = spearman(v.first, v.second);
    if (std::isnan(r)) continue;
    within.push_back(r);
    positive += r > 0;
  }
  c.groups_computable = within.size();
  if (within.empty()) {
    c.rho_within_mean = c.rho_within_median = c.share_positive = kNaN;
  } else {
    double sum = 0;
    for (double r : within) sum += r;
    c.rho_within_mean = sum / static_cast<double>(within.size());
    c.rho_within_median = quantile(within, 0.5);
    c.share_positive = static_cast<double>(positive) / static_cast<double>(within.size());
  }
  return c;
}

}  // namespace

CounterStudy counter_study(const Registry& reg, const AnalysisData& data, const HardwareDesc& hw) {
  const std::vector<Profile> profiles = load_profiles(reg, data, hw);
  if (profiles.empty()) throw Error("the registry holds no hardware-counter profiles (cks profile import)");
  CounterStudy s;
  s.profiles = profiles.size();
  std::set<std::string> groups;
  for (const Profile& p : profiles) {
    groups.insert(p.group_key);
    s.paired_corpus += p.from_corpus;
  }
  s.groups = groups.size();
  const auto tflops = [](const Profile& p) { return p.tflops; };
  for (const CounterDef& d : counter_defs()) {
    CounterCorrelation c = correlate(profiles, [&](const Profile& p) { return d.eval(p.metrics); }, tflops);
    if (c.profiles == 0) continue;  // a metric this profiler did not collect
    c.counter = d.name;
    c.definition = d.definition;
    c.paper_global = d.paper_global;
    c.paper_within = d.paper_within;
    c.paper_share = d.paper_share;
    s.counters.push_back(std::move(c));
  }
  // Parameters against counters (the paper: pipeline depth vs long-scoreboard stalls, mean
  // within-group rho -0.357, median -0.439).
  for (const CounterDef& d : counter_defs()) {
    if (std::string_view(d.name) != "long_scoreboard_stall_share" && std::string_view(d.name) != "barrier_stall_share")
      continue;
    CounterCorrelation c = correlate(
        profiles, [](const Profile& p) { return p.stages > 0 ? static_cast<double>(p.stages) : kNaN; },
        [&](const Profile& p) { return d.eval(p.metrics); });
    if (c.profiles == 0) continue;
    c.counter = std::string("stages~") + d.name;
    c.definition = std::string("rho(resolved stage count, ") + d.name + ")";
    const bool ls = std::string_view(d.name) == "long_scoreboard_stall_share";
    c.paper_global = kNaN;
    c.paper_within = ls ? -0.357 : kNaN;
    c.paper_share = kNaN;
    s.parameter_counter.push_back(std::move(c));
  }
  return s;
}

Table counter_table(std::span<const CounterCorrelation> rows) {
  Table t({"counter", "profiles", "groups", "groups_computable", "rho_global", "rho_within_mean", "rho_within_median",
           "share_positive", "paper_rho_global", "paper_rho_within", "paper_share_positive", "definition"});
  auto num = [](double x) -> Cell { return std::isnan(x) ? Cell{} : Cell{std::round(x * 1e3) / 1e3}; };
  for (const CounterCorrelation& r : rows)
    t.add_row({r.counter, static_cast<int64_t>(r.profiles), static_cast<int64_t>(r.groups),
               static_cast<int64_t>(r.groups_computable), num(r.rho_global), num(r.rho_within_mean),
               num(r.rho_within_median), num(r.share_positive), num(r.paper_global), num(r.paper_within),
               num(r.paper_share), r.definition});
  return t;
}

Table counter_profile_table(const Registry& reg, const AnalysisData& data, const HardwareDesc& hw) {
  const std::vector<Profile> profiles = load_profiles(reg, data, hw);
  std::vector<std::string> cols{"group_key", "kernel_id", "knobs", "stages", "tflops", "tflops_source"};
  for (const CounterDef& d : counter_defs()) cols.emplace_back(d.name);
  Table t(cols);
  for (const Profile& p : profiles) {
    std::vector<Cell> row{p.group_key, p.kernel_id, p.knobs, int64_t{p.stages}, std::round(p.tflops * 1e3) / 1e3,
                          std::string(p.from_corpus ? "corpus" : "harness_under_ncu")};
    for (const CounterDef& d : counter_defs()) {
      const double v = d.eval(p.metrics);
      row.push_back(std::isfinite(v) ? Cell{v} : Cell{});
    }
    t.add_row(std::move(row));
  }
  return t;
}

}  // namespace cks
