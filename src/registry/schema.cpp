// Registry schema and its migrations.
//
// The version lives in meta(key='schema_version'); a file without a meta table is version 0
// (empty). kMigrations[i] takes a file from version i to version i + 1. Steps are append-only:
// a released step is never edited, a change to the schema is a new step (e.g. a `profiles`
// table for Nsight counters, or a rebuilt `measurements` table when a status is added to
// kStatuses, since SQLite cannot alter a CHECK constraint in place).
#include "registry/schema.hpp"

#include <string>
#include <vector>

#include "cks/common.hpp"
#include "registry/sqlite_util.hpp"

namespace cks::reg {
namespace {

struct Migration {
  const char* what;
  const char* sql;
};

// Version 1. The status list is spelled out (not generated from kStatuses) so a file's
// constraint never silently differs from the step that created it.
constexpr const char* kV1 = R"sql(
CREATE TABLE runs(
  uuid TEXT PRIMARY KEY,
  kind TEXT NOT NULL DEFAULT 'collect',
  gpu_name TEXT NOT NULL DEFAULT '', gpu_uuid TEXT NOT NULL DEFAULT '',
  driver_version TEXT NOT NULL DEFAULT '', cuda_version TEXT NOT NULL DEFAULT '',
  cublas_version TEXT NOT NULL DEFAULT '', cutlass_version TEXT NOT NULL DEFAULT '',
  git_sha TEXT NOT NULL DEFAULT '', host TEXT NOT NULL DEFAULT '', command TEXT NOT NULL DEFAULT '',
  started_at TEXT NOT NULL DEFAULT '', ended_at TEXT NOT NULL DEFAULT '',
  extra_json TEXT NOT NULL DEFAULT '{}');

CREATE TABLE groups(
  key TEXT NOT NULL, set_name TEXT NOT NULL,
  m INTEGER NOT NULL, n INTEGER NOT NULL, k INTEGER NOT NULL, layout TEXT NOT NULL,
  tags_json TEXT NOT NULL DEFAULT '{}', policy TEXT NOT NULL DEFAULT '',
  budget INTEGER NOT NULL DEFAULT 0, seed INTEGER NOT NULL DEFAULT 0,
  PRIMARY KEY(key, set_name));

CREATE TABLE kernels(
  kernel_id TEXT PRIMARY KEY, canonical TEXT NOT NULL,
  layout TEXT NOT NULL, tm INTEGER NOT NULL, tn INTEGER NOT NULL, tk INTEGER NOT NULL,
  cm INTEGER NOT NULL, cn INTEGER NOT NULL, stages INTEGER NOT NULL,
  mainloop TEXT NOT NULL, epilogue TEXT NOT NULL, scheduler TEXT NOT NULL,
  status TEXT NOT NULL CHECK(status IN ('ok', 'compile_error')), error TEXT NOT NULL DEFAULT '',
  lib_hash TEXT NOT NULL DEFAULT '', lib_index INTEGER NOT NULL DEFAULT -1,
  registers INTEGER NOT NULL DEFAULT -1, spill_store_bytes INTEGER NOT NULL DEFAULT -1,
  spill_load_bytes INTEGER NOT NULL DEFAULT -1, smem_bytes INTEGER NOT NULL DEFAULT -1,
  compile_seconds REAL NOT NULL DEFAULT 0, host TEXT NOT NULL DEFAULT '',
  nvcc_version TEXT NOT NULL DEFAULT '', flags TEXT NOT NULL DEFAULT '',
  updated_at TEXT NOT NULL DEFAULT '');

CREATE TABLE plan_items(
  group_key TEXT NOT NULL, kernel_id TEXT NOT NULL, knobs TEXT NOT NULL,
  PRIMARY KEY(group_key, kernel_id, knobs));

CREATE TABLE measurements(
  uuid TEXT PRIMARY KEY, run_uuid TEXT NOT NULL, group_key TEXT NOT NULL,
  kernel_id TEXT NOT NULL, knobs TEXT NOT NULL DEFAULT '',
  status TEXT NOT NULL CHECK(status IN ('ok', 'compile_error', 'cannot_implement', 'launch_error',
                                        'incorrect', 'crash', 'timeout', 'cut', 'quarantined')),
  mean_us REAL NOT NULL DEFAULT 0, std_us REAL NOT NULL DEFAULT 0, n INTEGER NOT NULL DEFAULT 0,
  tflops REAL NOT NULL DEFAULT 0,
  sm_clock_mhz REAL NOT NULL DEFAULT 0, mem_clock_mhz REAL NOT NULL DEFAULT 0,
  temp_c REAL NOT NULL DEFAULT 0, power_w REAL NOT NULL DEFAULT 0,
  max_rel_err REAL NOT NULL DEFAULT -1, error TEXT NOT NULL DEFAULT '',
  started_at TEXT NOT NULL DEFAULT '', finished_at TEXT NOT NULL DEFAULT '',
  attempt INTEGER NOT NULL DEFAULT 1, worker TEXT NOT NULL DEFAULT '');
CREATE INDEX measurements_candidate ON measurements(group_key, kernel_id, knobs);
CREATE INDEX measurements_status ON measurements(status);
)sql";

// v2: hardware-counter profiles (the counter study, docs/analysis.md): one row per profiled
// candidate and metric, from an Nsight Compute run recorded in `runs` (kind 'profile', its
// ncu version, clock control and metric list in extra_json).
constexpr const char* kV2 = R"sql(
CREATE TABLE profiles(
  run_uuid TEXT NOT NULL, group_key TEXT NOT NULL, kernel_id TEXT NOT NULL, knobs TEXT NOT NULL DEFAULT '',
  metric TEXT NOT NULL, value REAL, unit TEXT NOT NULL DEFAULT '',
  PRIMARY KEY(run_uuid, group_key, kernel_id, knobs, metric));
)sql";

const std::vector<Migration>& migrations() {
  static const std::vector<Migration> steps = {
      {"runs, groups, kernels, plan items, measurements", kV1},
      {"hardware-counter profiles", kV2},
  };
  return steps;
}

bool has_meta(sqlite3* db) {
  return query_int(db, "SELECT count(*) FROM sqlite_master WHERE type='table' AND name='meta'") > 0;
}

}  // namespace

void drop_secondary_indexes(sqlite3* db) {
  exec(db, "DROP INDEX IF EXISTS measurements_candidate; DROP INDEX IF EXISTS measurements_status;");
}

void ensure_secondary_indexes(sqlite3* db) {
  exec(db,
       "CREATE INDEX IF NOT EXISTS measurements_candidate ON measurements(group_key, kernel_id, knobs);"
       "CREATE INDEX IF NOT EXISTS measurements_status ON measurements(status);");
}

int current_schema_version() { return static_cast<int>(migrations().size()); }

int file_schema_version(sqlite3* db) {
  if (!has_meta(db)) return 0;
  Stmt s(db, "SELECT value FROM meta WHERE key='schema_version'");
  if (!s.step()) return 0;
  const std::string v = s.col_text(0);
  try {
    return std::stoi(v);
  } catch (const std::exception&) {
    throw Error("registry has a malformed schema_version '" + v + "'");
  }
}

void check_not_newer(int version, const std::string& path) {
  if (version > current_schema_version())
    throw Error("registry '" + path + "' has schema version " + std::to_string(version) +
                ", newer than this cks supports (" + std::to_string(current_schema_version()) +
                "): use a newer cks");
}

int checked_schema_version(sqlite3* db, const std::string& path, bool allow_empty) {
  int version = 0;
  bool tables = false;
  int code = SQLITE_OK;  // the primary code of the failed read (extended codes are on)
  try {
    // One read transaction: the version and the tables from one snapshot. Read apart, a registry
    // whose creation (another connection's migrate(), schema and version in one transaction)
    // commits between the reads shows tables without a version, as a foreign file would
    // (RegistrySchema.AnOpenerNeverSeesAHalfCreatedRegistry).
    exec(db, "BEGIN");
    try {
      version = file_schema_version(db);
      tables = query_int(db, "SELECT count(*) FROM sqlite_master WHERE type='table' AND name NOT IN ('meta')") > 0;
    } catch (const Error&) {
      code = sqlite3_errcode(db) & 0xff;
      if (!sqlite3_get_autocommit(db)) sqlite3_exec(db, "ROLLBACK", nullptr, nullptr, nullptr);
      throw;
    }
    exec(db, "COMMIT");
  } catch (const Error&) {
    if (code == SQLITE_OK) code = sqlite3_errcode(db) & 0xff;
    if (code == SQLITE_NOTADB || code == SQLITE_CORRUPT || code == SQLITE_CANTOPEN || code == SQLITE_IOERR)
      throw Error("cannot open registry '" + path + "': " + sqlite3_errstr(code));
    throw;
  }
  check_not_newer(version, path);
  if (version == 0 && tables)
    throw Error("'" + path + "' is an SQLite file but not a cks registry (it has tables and no schema version)");
  if (version == 0 && !allow_empty) throw Error("'" + path + "' is not a cks registry (it is empty)");
  return version;
}

void migrate(sqlite3* db, const std::string& path) {
  int version = file_schema_version(db);
  check_not_newer(version, path);
  if (version == current_schema_version()) return;
  // Re-read under the write lock: another process may have migrated meanwhile.
  Transaction tx(db);
  exec(db, "CREATE TABLE IF NOT EXISTS meta(key TEXT PRIMARY KEY, value TEXT NOT NULL)");
  version = file_schema_version(db);
  check_not_newer(version, path);
  if (version == 0 &&
      query_int(db, "SELECT count(*) FROM sqlite_master WHERE type='table' AND name NOT IN ('meta')") > 0)
    throw Error("'" + path + "' is an SQLite file but not a cks registry (it has tables and no schema version)");
  const auto& steps = migrations();
  for (int v = version; v < current_schema_version(); ++v) exec(db, steps[static_cast<size_t>(v)].sql);
  Stmt set(db, "INSERT OR REPLACE INTO meta(key, value) VALUES('schema_version', ?1)");
  set.bind_all(std::to_string(current_schema_version())).run();
  tx.commit();
}

}  // namespace cks::reg
