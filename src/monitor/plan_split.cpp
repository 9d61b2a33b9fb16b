// `cks plan split`: one plan cut into parts of about equal estimated GPU time (cks/plan.hpp).
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <set>

#include "cks/common.hpp"
#include "cks/plan.hpp"

namespace cks {

namespace {

namespace fs = std::filesystem;

// A group, or one of the round-robin pieces of a group too costly for one part.
struct Piece {
  size_t group = 0, chunk = 0, chunks = 1;
  size_t candidates = 0;
  double cost = 0;
};

}  // namespace

double split_cost_seconds(const PlanGroup& g, size_t candidates, const SplitCostModel& model) {
  const double flops = 2.0 * static_cast<double>(g.group.m) * static_cast<double>(g.group.n) * static_cast<double>(g.group.k);
  const double launch = model.launch_s + flops / model.flops_per_s;
  return model.per_group_s + static_cast<double>(candidates) * (model.per_measurement_s + model.launches * launch);
}

std::vector<SplitPart> split_plan(const Plan& plan, size_t parts, const std::string& plan_dir, const std::string& out_dir,
                                  const SplitCostModel& model) {
  if (parts < 1) throw Error("--parts must be at least 1");
  if (plan.candidates() == 0) throw Error("plan '" + plan.name + "' has no candidate to split");
  double total = 0;
  for (const auto& g : plan.groups)
    if (!g.candidates.empty()) total += split_cost_seconds(g, g.candidates.size(), model);
  const double share = total / static_cast<double>(parts);

  std::vector<Piece> pieces;
  for (size_t i = 0; i < plan.groups.size(); ++i) {
    const PlanGroup& g = plan.groups[i];
    const size_t n = g.candidates.size();
    if (n == 0) continue;  // nothing to measure: no part needs it
    const double cost = split_cost_seconds(g, n, model);
    size_t chunks = 1;
    if (parts > 1 && !g.whole && cost > share)
      chunks = std::min(n, static_cast<size_t>(std::ceil(cost / share)));
    for (size_t c = 0; c < chunks; ++c) {
      Piece p{i, c, chunks, n / chunks + (c < n % chunks ? 1 : 0), 0};
      p.cost = split_cost_seconds(g, p.candidates, model);
      pieces.push_back(p);
    }
  }
  if (pieces.size() < parts)
    throw Error("cannot split plan '" + plan.name + "' into " + std::to_string(parts) + " parts: it has only " +
                std::to_string(pieces.size()) + " pieces (groups measured whole, or candidates)");

  // Longest processing time first: each piece to the least loaded part.
  std::vector<size_t> order(pieces.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return pieces[a].cost > pieces[b].cost; });
  // The pieces of one group go to distinct parts (a plan holds a group once); there are at most
  // `parts` of them, since a group costs at most the whole.
  std::vector<double> load(parts, 0.0);
  std::vector<std::vector<size_t>> members(parts);
  std::vector<std::set<size_t>> groups_of(parts);
  for (size_t i : order) {
    size_t best = parts;
    for (size_t p = 0; p < parts; ++p)
      if (!groups_of[p].count(pieces[i].group) && (best == parts || load[p] < load[best])) best = p;
    if (best == parts) throw std::logic_error("plan split: no part left for a piece");
    load[best] += pieces[i].cost;
    members[best].push_back(i);
    groups_of[best].insert(pieces[i].group);
  }

  const fs::path dest = fs::absolute(out_dir.empty() ? "." : out_dir);
  const nlohmann::json source_header = nlohmann::json::parse(plan.header_json, nullptr, false);
  std::vector<SplitPart> out(parts);
  for (size_t p = 0; p < parts; ++p) {
    std::sort(members[p].begin(), members[p].end());  // pieces were made in input order
    SplitPart& part = out[p];
    part.estimated_s = load[p];
    part.plan.name = plan.name + "_p" + std::to_string(p + 1) + "of" + std::to_string(parts);
    part.plan.created_by = std::string("cks plan split ") + CKS_VERSION;
    part.plan.header_json =
        nlohmann::ordered_json{{"created_at", utc_now()},
                               {"split", {{"of", plan.name}, {"part", p + 1}, {"parts", parts},
                                          {"estimated_seconds", std::round(load[p])},
                                          {"estimated_seconds_total", std::round(total)}}},
                               {"source_header", source_header.is_discarded() ? nlohmann::json::object() : source_header}}
            .dump();
    for (size_t i : members[p]) {
      const Piece& piece = pieces[i];
      PlanGroup g = plan.groups[piece.group];
      if (piece.chunks == 1) {
        if (!g.pool.empty())
          g.pool = fs::proximate(fs::absolute(fs::path(plan_dir) / g.pool), dest).string();
      } else {
        std::vector<CandidateRef> mine;
        mine.reserve(piece.candidates);
        for (size_t c = piece.chunk; c < g.candidates.size(); c += piece.chunks) mine.push_back(g.candidates[c]);
        g.candidates = std::move(mine);
        g.pool.clear();  // written as an explicit list
        g.default_knobs = false;
      }
      part.plan.groups.push_back(std::move(g));
    }
  }
  return out;
}

}  // namespace cks
