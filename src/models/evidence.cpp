// The training groups' measured leaders, carried in a model file (cks/models.hpp, "evidence").
#include <algorithm>
#include <numeric>

#include "cks/models.hpp"

namespace cks {

Evidence build_evidence(const Dataset& data, size_t top) {
  Evidence e;
  e.top = top;
  if (top == 0) return e;
  std::vector<size_t> order;
  for (const DataGroup& g : data.groups) {
    const Catalogue& cat = Catalogue::get(g.problem.layout);
    order.resize(g.size());
    std::iota(order.begin(), order.end(), g.begin);
    const size_t keep = std::min(top, order.size());
    // Fastest first; ties by row (deterministic).
    std::partial_sort(order.begin(), order.begin() + static_cast<std::ptrdiff_t>(keep), order.end(), [&](size_t a, size_t b) {
      return data.tflops[a] > data.tflops[b] || (data.tflops[a] == data.tflops[b] && a < b);
    });
    EvidenceGroup eg{g.problem, {}};
    for (size_t i = 0; i < keep; ++i) {
      const Candidate& c = data.candidates[order[i]];
      eg.leaders.emplace_back(cat.kernels()[c.kernel].id(), c.knobs.canonical());
    }
    e.groups.push_back(std::move(eg));
  }
  return e;
}

nlohmann::json Evidence::to_json() const {
  if (groups.empty()) return nullptr;
  nlohmann::json list = nlohmann::json::array();
  for (const EvidenceGroup& g : groups) {
    nlohmann::json leaders = nlohmann::json::array();
    for (const auto& [id, knobs] : g.leaders) leaders.push_back({id, knobs});
    list.push_back({to_string(g.problem.layout), g.problem.m, g.problem.n, g.problem.k, std::move(leaders)});
  }
  return {{"top", top}, {"groups", std::move(list)}};
}

Evidence Evidence::from_json(const nlohmann::json& j) {
  Evidence e;
  if (j.is_null()) return e;
  auto bad = [](const std::string& why) { return Error("\"evidence\": " + why); };
  if (!j.is_object() || !j.contains("top") || !j["top"].is_number_unsigned() || !j.contains("groups") ||
      !j["groups"].is_array())
    throw bad("expected {\"top\": N, \"groups\": [...]}");
  e.top = j["top"].get<size_t>();
  for (const auto& g : j["groups"]) {
    if (!g.is_array() || g.size() != 5 || !g[0].is_string() || !g[4].is_array())
      throw bad("a group must be [layout, m, n, k, [[kernel ID, knobs], ...]]");
    EvidenceGroup eg;
    eg.problem.layout = parse_layout(g[0].get<std::string>());
    long* dims[] = {&eg.problem.m, &eg.problem.n, &eg.problem.k};
    for (int d = 0; d < 3; ++d) {
      if (!g[d + 1].is_number_integer() || g[d + 1].get<long>() <= 0) throw bad("group dimensions must be positive integers");
      *dims[d] = g[d + 1].get<long>();
    }
    for (const auto& l : g[4]) {
      if (!l.is_array() || l.size() != 2 || !l[0].is_string() || !l[1].is_string())
        throw bad("a leader must be [kernel ID, knobs]");
      eg.leaders.emplace_back(l[0].get<std::string>(), l[1].get<std::string>());
    }
    e.groups.push_back(std::move(eg));
  }
  return e;
}

}  // namespace cks
