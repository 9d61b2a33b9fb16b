// Cross-check against CUTLASS's generator listing (see cutlass_check.hpp).
#include "catalogue/cutlass_check.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>

#include "catalogue/model.hpp"
#include "cks/common.hpp"
#include "common/subprocess.hpp"

namespace cks::catalogue {

namespace fs = std::filesystem;

namespace {

constexpr const char* kListingFile = "cutlass_listing_sm90_bf16.json";

std::string cutlass_python_dir() {
  const char* env = std::getenv("CKS_CUTLASS_DIR");
  return (env && *env ? std::string(env) : std::string(CKS_CUTLASS_DIR)) + "/python";
}

// Names as cutlass_library.library spells the enum members (KernelScheduleType.X etc.).
std::string map_schedules(const nlohmann::json& e, KernelDesc& k) {
  const auto ks = e.at("kernel_schedule").get<std::string>();
  const auto es = e.at("epilogue_schedule").get<std::string>();
  const auto ts = e.at("tile_scheduler").get<std::string>();
  // KernelScheduleAuto: sm90_gmma_builder.inl picks ping-pong for a 64-row tile, else cooperative;
  // EpilogueScheduleAuto: sm90_builder.inl picks NoSmemWarpSpecialized.
  if (ks == "ScheduleAuto") k.mainloop = k.tm == 64 ? MainloopSchedule::pingpong : MainloopSchedule::cooperative;
  else if (ks == "TmaWarpSpecialized") k.mainloop = MainloopSchedule::tma_ws;
  else if (ks == "TmaWarpSpecializedPingpong") k.mainloop = MainloopSchedule::pingpong;
  else if (ks == "TmaWarpSpecializedCooperative") k.mainloop = MainloopSchedule::cooperative;
  else return "kernel schedule " + ks + " is not modelled";
  if (es == "ScheduleAuto" || es == "NoSmemWarpSpecialized") k.epilogue = EpilogueSchedule::no_smem;
  else if (es == "TmaWarpSpecialized") k.epilogue = EpilogueSchedule::tma_ws;
  else if (es == "TmaWarpSpecializedCooperative") k.epilogue = EpilogueSchedule::tma_ws_cooperative;
  else return "epilogue schedule " + es + " is not modelled";
  // Default: the basic kernel's void scheduler or the persistent one (library.py TileSchedulerTag).
  if (ts == "Default" || ts == "Persistent") k.scheduler = TileSchedulerKind::persistent;
  else if (ts == "StreamK") k.scheduler = TileSchedulerKind::stream_k;
  else return "tile scheduler " + ts + " is not modelled";
  return "";
}

CutlassKernel map_entry(const nlohmann::json& e) {
  CutlassKernel ck;
  ck.name = e.at("name").get<std::string>();
  KernelDesc& k = ck.desc;
  k.layout = parse_layout(e.at("layout").get<std::string>());
  const auto tile = e.at("tile").get<std::vector<int>>();
  const auto cluster = e.at("cluster").get<std::vector<int>>();
  if (tile.size() != 3 || cluster.size() != 3) throw Error("malformed tile or cluster in listing entry " + ck.name);
  k.tm = tile[0], k.tn = tile[1], k.tk = tile[2];
  k.cm = cluster[0], k.cn = cluster[1];
  k.stages = e.at("stages").get<int>();
  ck.unmapped = map_schedules(e, k);
  if (ck.unmapped.empty() && cluster[2] != 1) ck.unmapped = "cluster K " + std::to_string(cluster[2]) + " is not modelled";
  return ck;
}

}  // namespace

std::string listing_path_for_bin_dir(std::string_view bin_dir) {
  return (fs::path(bin_dir).parent_path() / kListingFile).string();
}

void generate_cutlass_listing(const std::string& path) {
  const std::string script = std::string(CKS_SOURCE_DIR) + "/tools/cutlass_listing.py";
  std::fprintf(stderr, "cks: generating the CUTLASS kernel listing (cutlass_library, about 80 s, cached in %s)\n",
               path.c_str());
  const std::vector<std::string> argv{"python3", script, "--cutlass-python", cutlass_python_dir(), path};
  RunOptions o;
  o.capture_stdout = false;
  o.discard_stderr = false;
  const RunResult r = run_argv(argv, o);
  if (!r.ok())
    throw Error("generating the CUTLASS listing failed (python3 " + script + " " +
                (!r.started ? std::string("could not be started")
                 : r.signal ? "was killed by signal " + std::to_string(r.signal)
                            : "exited with status " + std::to_string(r.exit_code)) +
                ")");
}

CutlassListing read_cutlass_listing(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw Error("cannot read CUTLASS listing " + path);
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(in);
    CutlassListing listing;
    listing.generator = j.at("generator").get<std::string>();
    for (const auto& e : j.at("kernels")) listing.kernels.push_back(map_entry(e));
    return listing;
  } catch (const nlohmann::json::exception& e) {
    throw Error("malformed CUTLASS listing " + path + ": " + e.what());
  }
}

CutlassListing load_or_generate_cutlass_listing(const std::string& path) {
  if (!fs::exists(path)) generate_cutlass_listing(path);
  return read_cutlass_listing(path);
}

const std::vector<std::string_view>& documented_exclusions() {
  static const std::vector<std::string_view> rules{"stages_min", "smem_capacity"};
  return rules;
}

CutlassCheck check_against_cutlass(const CutlassListing& listing, const HardwareDesc& hw) {
  CutlassCheck check;
  for (Layout layout : kLayouts) {
    const Catalogue cat = Catalogue::build(layout, hw);
    CutlassCheck::Counts& c = check.layouts[layout];
    std::set<std::string> seen_ids, matched_ids;
    for (const auto& ck : listing.kernels) {
      if (ck.desc.layout != layout) continue;
      ++c.emitted;
      if (!ck.unmapped.empty()) {
        ++c.unexplained;
        check.unexplained.push_back(ck.name + ": " + ck.unmapped);
        continue;
      }
      const std::string id = ck.desc.id();
      seen_ids.insert(id);
      if (cat.find(id)) {
        ++c.matched;
        matched_ids.insert(id);
        continue;
      }
      const Violation v = first_violation(ck.desc, hw);
      const auto& allowed = documented_exclusions();
      if (!v.rule.empty() && std::find(allowed.begin(), allowed.end(), v.rule) != allowed.end()) {
        ++c.excluded;
        ++c.excluded_by_rule[v.rule];
      } else {
        ++c.unexplained;
        check.unexplained.push_back(ck.name + " -> " + ck.desc.canonical() + ": " +
                                    (v.rule.empty() ? "valid but not enumerated" : v.reason));
      }
    }
    c.distinct = static_cast<long>(seen_ids.size());
    c.ours_not_emitted = static_cast<long>(cat.kernels().size() - matched_ids.size());
    CutlassCheck::Counts& t = check.total;
    t.emitted += c.emitted, t.matched += c.matched, t.excluded += c.excluded, t.unexplained += c.unexplained;
    t.distinct += c.distinct, t.ours_not_emitted += c.ours_not_emitted;
    for (const auto& [rule, n] : c.excluded_by_rule) t.excluded_by_rule[rule] += n;
  }
  return check;
}

}  // namespace cks::catalogue
