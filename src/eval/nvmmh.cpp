// The nvMatmulHeuristics baseline: tools/nvmmh_query.py asks the (optional, proprietary) PyPI
// package for its suggestions; here they are mapped onto measured candidates (rules in
// cks/models.hpp next to NvmmhSuggestion).
#include <cstdlib>

#include "cks/models.hpp"
#include "common/subprocess.hpp"

namespace cks {

namespace {

std::string bridge_path() {
  if (const char* p = std::getenv("CKS_NVMMH_BRIDGE")) return p;
  return std::string(CKS_SOURCE_DIR) + "/tools/nvmmh_query.py";
}

// Runs the bridge with the request on its stdin; returns its stdout. An argument vector, no shell:
// $CKS_PYTHON names one executable (no arguments), and no path is ever parsed as shell text.
std::string run_bridge(const std::string& request) {
  const char* python = std::getenv("CKS_PYTHON");
  RunOptions o;
  o.input = request;
  return run_argv({python && *python ? python : "python3", bridge_path()}, o).output;
}

}  // namespace

NvmmhResult query_nvmmh(std::span<const DataGroup> groups, int count) {
  NvmmhResult result;
  nlohmann::json request = {{"gpu", "H200_SXM"}, {"count", count}, {"problems", nlohmann::json::array()}};
  for (const DataGroup& g : groups)
    request["problems"].push_back(
        {{"key", g.key}, {"m", g.problem.m}, {"n", g.problem.n}, {"k", g.problem.k}, {"layout", to_string(g.problem.layout)}});
  const std::string output = run_bridge(request.dump());
  nlohmann::json reply;
  try {
    reply = nlohmann::json::parse(output);
  } catch (const nlohmann::json::exception&) {
    result.reason = "the bridge " + bridge_path() + " did not answer (is python3 installed?)";
    return result;
  }
  if (!reply.value("available", false)) {
    result.reason = reply.value("reason", "unknown reason");
    return result;
  }
  result.available = true;
  const auto& results = reply.at("results");
  for (const DataGroup& g : groups) {
    std::vector<NvmmhSuggestion> list;
    if (results.contains(g.key))
      for (const auto& c : results.at(g.key))
        list.push_back({c.at("tile")[0].get<int>(), c.at("tile")[1].get<int>(), c.at("tile")[2].get<int>(),
                        c.at("cluster")[0].get<int>(), c.at("cluster")[1].get<int>(), c.at("stages").get<int>(),
                        std::max(1, c.at("split_k").get<int>())});
    result.suggestions.push_back(std::move(list));
  }
  return result;
}

MethodOutcomes nvmmh_baseline(const Dataset& eval, const NvmmhResult& result) {
  MethodOutcomes m{"nvmmh", "", {}};
  if (!result.available) {
    m.note = "unavailable: " + result.reason;
    m.groups.resize(eval.groups.size());
    return m;
  }
  size_t first_mapped = 0;
  for (size_t gi = 0; gi < eval.groups.size(); ++gi) {
    const DataGroup& g = eval.groups[gi];
    const auto& kernels = Catalogue::get(g.problem.layout).kernels();
    const auto tflops = std::span<const double>(eval.tflops).subspan(g.begin, g.size());
    std::vector<uint32_t> order;
    const auto& suggestions = gi < result.suggestions.size() ? result.suggestions[gi] : std::vector<NvmmhSuggestion>{};
    for (size_t s = 0; s < suggestions.size(); ++s) {
      const NvmmhSuggestion& sg = suggestions[s];
      // Best measured candidate of this tile/cluster over every schedule and tile scheduler, with
      // CUTLASS's automatic stage count (or the suggested one) and the suggested split-K.
      std::optional<uint32_t> best;
      for (size_t r = 0; r < g.size(); ++r) {
        const Candidate& c = eval.candidates[g.begin + r];
        const KernelDesc& k = kernels[c.kernel];
        const int splits = c.knobs.decomposition == Decomposition::split_k ? c.knobs.splits : 1;
        if (k.tm != sg.tm || k.tn != sg.tn || k.tk != sg.tk || k.cm != sg.cm || k.cn != sg.cn) continue;
        if (k.stages != 0 && k.stages != sg.stages) continue;
        if (splits != sg.split_k) continue;
        if (!best || tflops[r] > tflops[*best]) best = static_cast<uint32_t>(r);
      }
      if (best && std::find(order.begin(), order.end(), *best) == order.end()) order.push_back(*best);
      if (s == 0 && best) ++first_mapped;
    }
    m.groups.push_back(outcome_of_order(tflops, order, g.cublas_tflops));
  }
  m.note = "first suggestion measured in " + std::to_string(first_mapped) + "/" + std::to_string(eval.groups.size()) +
           " groups; a suggestion = best of its schedules";
  return m;
}

}  // namespace cks
