// Shared helpers for the monitor tests: temp directories, plans of synthetic kernels for the
// fake backend, and reading measurement rows back from a registry file.
#pragma once
#include <gtest/gtest.h>
#include <sqlite3.h>
#include <stdlib.h>

#include <filesystem>
#include <map>
#include <string>
#include <tuple>
#include <vector>

#include "cks/common.hpp"
#include "cks/monitor.hpp"
#include "cks/plan.hpp"
#include "cks/registry.hpp"

namespace cks::test {

namespace fs = std::filesystem;

inline const std::string kDefaultKnobs = RuntimeKnobs{}.canonical();

class TempDir {
 public:
  TempDir() {
    std::string tmpl = (fs::temp_directory_path() / "cks-monitor-XXXXXX").string();
    if (!::mkdtemp(tmpl.data())) throw std::runtime_error("mkdtemp failed");
    path_ = tmpl;
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  std::string operator/(const std::string& name) const { return (path_ / name).string(); }

 private:
  fs::path path_;
};

// Kernel IDs for the fake backend (it needs no descriptor): "k" + hex of fnv1a64("fake<i>").
inline std::string fake_kernel(int i) { return "k" + hex64(fnv1a64("fake" + std::to_string(i))); }

struct TestGroup {
  long m, n, k;
  std::vector<CandidateRef> candidates;
  int priority = 0;  // PlanGroup::priority: the compile tier
};

// `groups[i]` gets the kernels fake_kernel(first + j), j < count, with the default knobs.
inline TestGroup kernel_range_group(long m, long n, long k, int first, int count) {
  TestGroup g{m, n, k, {}};
  for (int j = 0; j < count; ++j) g.candidates.emplace_back(fake_kernel(first + j), kDefaultKnobs);
  return g;
}

inline std::string write_test_plan(const std::string& path, const std::vector<TestGroup>& groups) {
  Plan plan;
  plan.name = "test";
  plan.created_by = "cks_tests";
  for (const auto& tg : groups) {
    PlanGroup pg;
    pg.group.m = tg.m;
    pg.group.n = tg.n;
    pg.group.k = tg.k;
    pg.group.layout = Layout::tn;
    pg.group.key = group_key(tg.m, tg.n, tg.k, Layout::tn);
    pg.group.policy = "test";
    pg.group.budget = static_cast<long>(tg.candidates.size());
    pg.candidates = tg.candidates;
    pg.priority = tg.priority;
    plan.groups.push_back(std::move(pg));
  }
  write_plan(plan, path);
  return path;
}

// Options for a fast in-process collection with the fake backend and the real cks-worker.
inline CollectOptions fake_options(const std::string& plan, const std::string& registry) {
  CollectOptions o;
  o.plan_path = plan;
  o.registry_path = registry;
  o.backend = "fake";
  o.worker_exe = std::string(CKS_BIN_DIR) + "/cks-worker";
  o.gpus = {0};
  o.deadline_s = 2;
  o.heartbeat_timeout_s = 1;
  o.progress_every_s = 0;
  return o;
}

struct CollectedRow {  // not "Row": features_test_util.hpp has a cks::test::Row (an ODR violation ASan caught)
  std::string run, group, kernel, knobs, status, error, worker;
  int attempt = 0;
  double mean_us = 0, max_rel_err = 0;
};

// Every measurement row, in insertion order (read through a separate connection).
inline std::vector<CollectedRow> read_rows(const std::string& db_path) {
  Registry reg(db_path);
  sqlite3_stmt* s = nullptr;
  const char* sql =
      "SELECT run_uuid, group_key, kernel_id, knobs, status, error, worker, attempt, mean_us, max_rel_err "
      "FROM measurements ORDER BY rowid";
  if (sqlite3_prepare_v2(reg.handle(), sql, -1, &s, nullptr) != SQLITE_OK) throw std::runtime_error("prepare failed");
  std::vector<CollectedRow> out;
  const auto text = [&](int i) { return std::string(reinterpret_cast<const char*>(sqlite3_column_text(s, i))); };
  while (sqlite3_step(s) == SQLITE_ROW)
    out.push_back({text(0), text(1), text(2), text(3), text(4), text(5), text(6), sqlite3_column_int(s, 7),
                   sqlite3_column_double(s, 8), sqlite3_column_double(s, 9)});
  sqlite3_finalize(s);
  return out;
}

// One SQL value as text (first column of the first row), "" when no row.
inline std::string query_text(const std::string& db_path, const std::string& sql) {
  Registry reg(db_path);
  sqlite3_stmt* s = nullptr;
  if (sqlite3_prepare_v2(reg.handle(), sql.c_str(), -1, &s, nullptr) != SQLITE_OK)
    throw std::runtime_error("prepare failed: " + sql);
  std::string out;
  if (sqlite3_step(s) == SQLITE_ROW && sqlite3_column_text(s, 0))
    out = reinterpret_cast<const char*>(sqlite3_column_text(s, 0));
  sqlite3_finalize(s);
  return out;
}

// Rows of each candidate (group, kernel, knobs), in insertion order; cuBLAS rows excluded.
using CandidateKey = std::tuple<std::string, std::string, std::string>;
inline std::map<CandidateKey, std::vector<CollectedRow>> rows_by_candidate(const std::vector<CollectedRow>& rows) {
  std::map<CandidateKey, std::vector<CollectedRow>> out;
  for (const auto& r : rows)
    if (r.kernel != "cublas") out[{r.group, r.kernel, r.knobs}].push_back(r);
  return out;
}

}  // namespace cks::test
