// `cks data stats`: counts over a registry, as one JSON object (docs/registry.md).
#include <algorithm>
#include <map>
#include <vector>

#include "cks/registry.hpp"
#include "registry/schema.hpp"
#include "registry/sqlite_util.hpp"

namespace cks {

using json = nlohmann::ordered_json;
using reg::Stmt;

namespace {

// {"<key>": count, ...} from a "SELECT key, count(*) ... GROUP BY key" query.
json counts_by(sqlite3* db, const std::string& sql) {
  json out = json::object();
  Stmt s(db, sql);
  while (s.step()) out[s.col_text(0)] = s.col_int(1);
  return out;
}

// A group is "reached" when a worker attempted something in it. The collector also writes
// kernel-level dispositions (`quarantined`, `compile_error`) into every group still pending for
// that kernel, without setting those groups up on a GPU; such rows alone do not make a group
// measured, so they neither count it as measured nor as missing its cuBLAS reference.
std::string reached(const char* alias) {
  const std::string a = alias;
  return "EXISTS (SELECT 1 FROM measurements r INDEXED BY measurements_candidate WHERE r.group_key = " + a +
         ".key AND r.status NOT IN ('quarantined', 'compile_error'))";
}

// Provenance a run must carry for its rows to be usable: the fields named in the issue.
constexpr const char* kProvenanceFields[] = {"gpu_name", "driver_version", "cuda_version", "cutlass_version",
                                             "git_sha"};

json runs_json(sqlite3* db) {
  json list = json::array();
  int64_t complete = 0;
  Stmt s(db,
         "SELECT uuid, kind, gpu_name, driver_version, cuda_version, cutlass_version, git_sha, host, started_at, "
         "ended_at FROM runs ORDER BY started_at, uuid");
  while (s.step()) {
    json run = {{"uuid", s.col_text(0)}, {"kind", s.col_text(1)}};
    json missing = json::array();
    for (int i = 0; i < 5; ++i) {
      run[kProvenanceFields[i]] = s.col_text(2 + i);
      if (s.col_text(2 + i).empty()) missing.push_back(kProvenanceFields[i]);
    }
    run["host"] = s.col_text(7);
    run["started_at"] = s.col_text(8);
    run["ended_at"] = s.col_text(9);
    run["provenance_complete"] = missing.empty();
    run["missing_provenance"] = missing;
    complete += missing.empty();
    list.push_back(std::move(run));
  }
  const auto total = static_cast<int64_t>(list.size());
  return {{"total", total}, {"with_provenance", complete}, {"list", std::move(list)}};
}

json groups_json(sqlite3* db) {
  json by_set_layout = json::object();
  Stmt s(db, "SELECT set_name, layout, count(*) FROM groups GROUP BY set_name, layout ORDER BY set_name, layout");
  while (s.step()) by_set_layout[s.col_text(0)][s.col_text(1)] = s.col_int(2);
  // Groups with at least one CUTLASS attempt (planned groups a collection has not reached
  // are not training or evaluation data yet).
  json measured = json::object();
  Stmt m(db,
         "SELECT g.set_name, g.layout, count(*) FROM groups g WHERE EXISTS (SELECT 1 FROM measurements x INDEXED BY "
         "measurements_candidate WHERE x.group_key = g.key AND x.kernel_id != 'cublas' AND x.status NOT IN "
         "('quarantined', 'compile_error')) GROUP BY g.set_name, g.layout ORDER BY g.set_name, g.layout");
  while (m.step()) measured[m.col_text(0)][m.col_text(1)] = m.col_int(2);
  // Evaluation groups are meant to be exhaustive over their layout's pool: distinct kernels
  // attempted per group (min, max) shows how far each layout got. A group is "exhaustive" when
  // its plan enumerated a pool (policy 'exhaustive', budget = the pool's size) and every kernel
  // of it has an attempt (any status: ok, cut, launch_error, quarantined, ...).
  json eval_kernels = json::object();
  int64_t exhaustive_total = 0;
  Stmt e(db,
         "SELECT layout, count(*), min(n), max(n), sum(policy = 'exhaustive' AND budget > 0 AND n >= budget) FROM "
         "(SELECT g.layout AS layout, g.policy AS policy, g.budget AS budget, (SELECT count(DISTINCT x.kernel_id) "
         "FROM measurements x INDEXED BY measurements_candidate WHERE x.group_key = g.key AND x.kernel_id != 'cublas') "
         "AS n FROM groups g WHERE g.set_name = 'eval') WHERE n > 0 GROUP BY layout ORDER BY layout");
  while (e.step()) {
    eval_kernels[e.col_text(0)] = {{"groups", e.col_int(1)},
                                   {"min_kernels", e.col_int(2)},
                                   {"max_kernels", e.col_int(3)},
                                   {"exhaustive", e.col_int(4)}};
    exhaustive_total += e.col_int(4);
  }
  // Training groups against their sampling budgets: distinct candidates attempted (any status)
  // over the budget, per layout; "complete" when every planned candidate has an attempt.
  std::map<std::string, std::vector<double>> shares;
  Stmt t(db,
         "SELECT g.layout, g.budget, (SELECT count(*) FROM (SELECT DISTINCT x.kernel_id, x.knobs FROM measurements x "
         "INDEXED BY measurements_candidate WHERE x.group_key = g.key AND x.kernel_id != 'cublas')) FROM groups g "
         "WHERE g.set_name = 'train' AND g.budget > 0 AND " + reached("g"));
  while (t.step())
    if (t.col_int(2) > 0) shares[t.col_text(0)].push_back(static_cast<double>(t.col_int(2)) / static_cast<double>(t.col_int(1)));
  json train_budget = json::object();
  for (auto& [layout, v] : shares) {
    std::sort(v.begin(), v.end());
    double sum = 0;
    int64_t complete = 0;
    for (double x : v) sum += std::min(x, 1.0), complete += x >= 1.0;
    const size_t n = v.size();
    const double median = n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
    train_budget[layout] = {{"groups", static_cast<int64_t>(n)},
                            {"complete", complete},
                            {"budget_share_mean", sum / static_cast<double>(n)},
                            {"budget_share_median", std::min(median, 1.0)}};
  }
  return {
      {"total", reg::query_int(db, "SELECT count(*) FROM groups")},
      {"measured_by_set_layout", std::move(measured)},
      {"eval_exhaustive", exhaustive_total},
      {"eval_kernels_per_group", std::move(eval_kernels)},
      {"train_budget", std::move(train_budget)},
      {"by_set", counts_by(db, "SELECT set_name, count(*) FROM groups GROUP BY set_name ORDER BY set_name")},
      {"by_layout", counts_by(db, "SELECT layout, count(*) FROM groups GROUP BY layout ORDER BY layout")},
      {"by_set_layout", std::move(by_set_layout)},
      // A shape is the paper's (M, N, K) triple, any layout: evaluation shapes must be unseen.
      {"eval_sharing_train_shape",
       reg::query_int(db,
                      "SELECT count(*) FROM groups e WHERE e.set_name = 'eval' AND EXISTS (SELECT 1 FROM groups t "
                      "WHERE t.set_name = 'train' AND t.m = e.m AND t.n = e.n AND t.k = e.k)")},
  };
}

json measurements_json(sqlite3* db) {
  json by_status = json::object();
  for (const char* st : kStatuses) by_status[st] = 0;
  const json seen = counts_by(db, "SELECT status, count(*) FROM measurements GROUP BY status");
  for (const auto& [status, count] : seen.items()) by_status[status] = count;
  return {
      {"attempts", reg::query_int(db, "SELECT count(*) FROM measurements")},
      {"ok", by_status["ok"]},
      {"by_status", std::move(by_status)},
      // Distinct (group, kernel, knobs) triples attempted at least once.
      {"candidates",
       reg::query_int(db, "SELECT count(*) FROM (SELECT DISTINCT group_key, kernel_id, knobs FROM measurements)")},
      {"groups_measured", reg::query_int(db, "SELECT count(*) FROM groups g WHERE " + reached("g"))},
  };
}

}  // namespace

json registry_stats(const Registry& registry) {
  sqlite3* db = registry.handle();
  // One read transaction: every count comes from the same snapshot while a collector writes.
  reg::exec(db, "BEGIN");
  try {
    const int64_t groups = reg::query_int(db, "SELECT count(*) FROM groups");
    const int64_t referenced = reg::query_int(
        db,
        // Without the hint the planner may pick the status index, where 'ok' matches most rows.
        "SELECT count(*) FROM groups g WHERE EXISTS (SELECT 1 FROM measurements m INDEXED BY measurements_candidate "
        "WHERE m.group_key = g.key AND m.kernel_id = 'cublas' AND m.status = 'ok')");
    const int64_t unmeasured = reg::query_int(
        db, "SELECT count(*) FROM groups g WHERE NOT " + reached("g"));
    json out = {
        {"schema_version", reg::file_schema_version(db)},
        {"runs", runs_json(db)},
        {"groups", groups_json(db)},
        {"measurements", measurements_json(db)},
        {"kernels",
         {{"total", reg::query_int(db, "SELECT count(*) FROM kernels")},
          {"ok", reg::query_int(db, "SELECT count(*) FROM kernels WHERE status = 'ok'")},
          {"compile_error", reg::query_int(db, "SELECT count(*) FROM kernels WHERE status = 'compile_error'")}}},
        {"plan_items", reg::query_int(db, "SELECT count(*) FROM plan_items")},
        // Hardware-counter profiles (the counter study): rows, profiled candidates, their groups.
        {"profiles",
         {{"rows", reg::query_int(db, "SELECT count(*) FROM profiles")},
          {"candidates", reg::query_int(db, "SELECT count(*) FROM (SELECT DISTINCT run_uuid, group_key, kernel_id, "
                                            "knobs FROM profiles)")},
          {"groups", reg::query_int(db, "SELECT count(DISTINCT group_key) FROM profiles")},
          {"runs", reg::query_int(db, "SELECT count(DISTINCT run_uuid) FROM profiles")}}},
        {"cublas_referenced_groups", referenced},
        // Reached groups without a cuBLAS reference, and planned groups a collection has not
        // reached yet (no worker attempt: nothing was set up, so nothing is missing).
        {"groups_missing_cublas", groups - referenced - unmeasured},
        {"groups_unmeasured", unmeasured},
    };
    reg::exec(db, "COMMIT");
    return out;
  } catch (...) {
    sqlite3_exec(db, "ROLLBACK", nullptr, nullptr, nullptr);
    throw;
  }
}

}  // namespace cks
