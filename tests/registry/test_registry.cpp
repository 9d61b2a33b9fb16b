// Registry basics: schema and migrations, WAL, inserts and reads, status checks, resume logic.
#include <gtest/gtest.h>
#include <sqlite3.h>

#include <atomic>
#include <fstream>
#include <set>
#include <thread>

#include "registry/registry_test_util.hpp"

using namespace cks;
using namespace cks::test;

TEST(RegistrySchema, CreatesVersionedSchemaInWalMode) {
  ScratchDir dir;
  Registry r(dir.file("reg.db"));
  EXPECT_EQ(Registry::schema_version(), 2);
  EXPECT_EQ(sql_text(r.path(), "SELECT value FROM meta WHERE key='schema_version'"), "2");
  EXPECT_EQ(sql_text(r.path(), "PRAGMA journal_mode"), "wal");
  for (const char* table : {"runs", "groups", "kernels", "plan_items", "measurements", "profiles"})
    EXPECT_EQ(sql_text(r.path(), std::string("SELECT count(*) FROM sqlite_master WHERE name='") + table + "'"), "1")
        << table;
  EXPECT_EQ(sql_text(r.path(), "SELECT count(*) FROM sqlite_master WHERE type='index' AND name LIKE 'measurements_%'"),
            "2");
}

TEST(RegistrySchema, MigratesAnEmptyVersionZeroFile) {
  ScratchDir dir;
  const std::string path = dir.file("v0.db");
  std::ofstream(path).close();  // a zero-byte file is an empty SQLite database (version 0)
  { Registry r(path); }
  EXPECT_EQ(sql_text(path, "SELECT value FROM meta WHERE key='schema_version'"), "2");
  // Reopening a current file changes nothing.
  Registry again(path);
  EXPECT_EQ(sql_count(path, "measurements"), 0);
}

TEST(RegistrySchema, RefusesNewerVersionsAndForeignFiles) {
  ScratchDir dir;
  const std::string newer = dir.file("newer.db");
  { Registry r(newer); }
  sqlite3* db = nullptr;
  sqlite3_open(newer.c_str(), &db);
  sqlite3_exec(db, "UPDATE meta SET value='99' WHERE key='schema_version'", nullptr, nullptr, nullptr);
  sqlite3_close(db);
  try {
    Registry r(newer);
    FAIL() << "opened a newer registry";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("schema version 99, newer than this cks supports (2)"), std::string::npos)
        << e.what();
  }

  const std::string foreign = dir.file("foreign.db");
  sqlite3_open(foreign.c_str(), &db);
  sqlite3_exec(db, "CREATE TABLE t(x)", nullptr, nullptr, nullptr);
  sqlite3_close(db);
  EXPECT_THROW(Registry{foreign}, Error);

  RegistryOptions existing;
  existing.create = false;
  EXPECT_THROW(Registry(dir.file("missing.db"), existing), Error);
}

TEST(RegistryIds, UuidsAreRandomHexAndTimesSortAsText) {
  std::set<std::string> seen;
  for (int i = 0; i < 1000; ++i) {
    auto u = new_uuid();
    ASSERT_EQ(u.size(), 32u);
    ASSERT_EQ(u.find_first_not_of("0123456789abcdef"), std::string::npos);
    seen.insert(u);
  }
  EXPECT_EQ(seen.size(), 1000u);
  const std::string t = utc_now();
  EXPECT_EQ(t.size(), 24u);  // 2025-06-01T12:34:56.789Z
  EXPECT_EQ(t.back(), 'Z');
  EXPECT_EQ(group_key(4096, 512, 8192, Layout::nt), "4096x512x8192_nt");
}

TEST(RegistryRows, InsertsAndReadsEveryTable) {
  ScratchDir dir;
  Registry r(dir.file("reg.db"));
  const std::string run = r.begin_run(test_run());
  EXPECT_EQ(run.size(), 32u);
  EXPECT_EQ(sql_text(r.path(), "SELECT gpu_name || '|' || cutlass_version || '|' || (started_at <> '') FROM runs"),
            "NVIDIA H200|4.2.0|1");
  r.end_run(run);
  EXPECT_NE(sql_text(r.path(), "SELECT ended_at FROM runs"), "");
  EXPECT_THROW(r.end_run("nope"), Error);

  GroupInfo g = test_group(4096, 4096, 512);
  r.upsert_group(g);
  r.upsert_group(g);  // idempotent
  EXPECT_EQ(sql_text(r.path(), "SELECT key || ' ' || set_name || ' ' || layout FROM groups"), "4096x4096x512_tn train tn");
  g.key = "1x1x1_tn";
  EXPECT_THROW(r.upsert_group(g), Error);

  const KernelDesc d = test_kernel(3);
  r.upsert_kernel(test_compile(d, "compile_error"));
  r.upsert_kernel(test_compile(d, "ok"));  // latest compile wins
  auto k = r.kernel(d.id());
  ASSERT_TRUE(k);
  EXPECT_EQ(k->status, "ok");
  EXPECT_EQ(k->canonical, d.canonical());
  EXPECT_EQ(k->registers, 168);
  EXPECT_EQ(sql_text(r.path(), "SELECT tn || ',' || mainloop || ',' || scheduler FROM kernels"),
            std::to_string(d.tn) + ",cooperative,persistent");
  EXPECT_FALSE(r.kernel("k0000000000000000"));
  auto bad = test_compile(d);
  bad.kernel_id = "k0000000000000000";
  EXPECT_THROW(r.upsert_kernel(bad), Error);  // id must match the descriptor
  bad = test_compile(d);
  bad.canonical = "not a kernel";
  EXPECT_THROW(r.upsert_kernel(bad), Error);

  auto row = test_row(run, "4096x4096x512_tn", d.id(), "ok", 42.5);
  row.uuid = new_uuid();
  r.insert_measurement(row);
  EXPECT_EQ(sql_text(r.path(), "SELECT mean_us || ' ' || n || ' ' || worker || ' ' || (finished_at <> '') FROM "
                               "measurements WHERE uuid='" + row.uuid + "'"),
            "42.5 15 gpu0 1");
  EXPECT_THROW(r.insert_measurement(row), Error);  // a uuid is recorded once
  std::vector<MeasurementRow> batch(5, test_row(run, "4096x4096x512_tn", "cublas", "ok"));
  r.insert_measurements(batch);
  EXPECT_EQ(sql_count(r.path(), "measurements"), 6);
  EXPECT_EQ(r.attempts("4096x4096x512_tn", "cublas", ""), 5);
}

TEST(RegistryRows, StatusCheckRejectsUnknownStatuses) {
  ScratchDir dir;
  Registry r(dir.file("reg.db"));
  const std::string run = r.begin_run(test_run());
  for (const char* st : kStatuses) r.insert_measurement(test_row(run, "8x8x8_tn", "k1", st));
  EXPECT_EQ(sql_count(r.path(), "measurements"), static_cast<long>(std::size(kStatuses)));

  EXPECT_THROW(r.insert_measurement(test_row(run, "8x8x8_tn", "k1", "slow")), Error);
  // The CHECK constraint guards the file itself, not just this API.
  char* msg = nullptr;
  int rc = sqlite3_exec(r.handle(),
                        "INSERT INTO measurements(uuid, run_uuid, group_key, kernel_id, status) "
                        "VALUES('x', 'r', 'g', 'k', 'slow')",
                        nullptr, nullptr, &msg);
  EXPECT_EQ(rc & 0xff, SQLITE_CONSTRAINT);
  sqlite3_free(msg);
  // A failed batch is rolled back as a whole.
  std::vector<MeasurementRow> batch{test_row(run, "8x8x8_tn", "k1", "ok"), test_row(run, "8x8x8_tn", "k1", "ok")};
  batch[1].uuid = batch[0].uuid = new_uuid();
  EXPECT_THROW(r.insert_measurements(batch), Error);
  EXPECT_EQ(sql_count(r.path(), "measurements"), static_cast<long>(std::size(kStatuses)));
}

TEST(RegistryResume, PendingItemsRetryOnlyCrashesAndTimeouts) {
  ScratchDir dir;
  Registry r(dir.file("reg.db"));
  const std::string run = r.begin_run(test_run());
  const std::string g = "256x256x256_tn";
  const std::string knobs = RuntimeKnobs{}.canonical();
  std::vector<std::pair<std::string, std::string>> plan;
  for (const char* id : {"kA", "kB", "kC", "kD", "kE", "kF"}) plan.emplace_back(id, knobs);
  r.add_plan_items(g, plan);
  r.add_plan_items(g, plan);  // idempotent
  EXPECT_EQ(sql_count(r.path(), "plan_items"), 6);
  EXPECT_EQ(r.pending_items(g, 2).size(), 6u);

  r.insert_measurement(test_row(run, g, "kA", "ok"));
  r.insert_measurement(test_row(run, g, "kB", "crash"));
  r.insert_measurement(test_row(run, g, "kC", "timeout"));
  r.insert_measurement(test_row(run, g, "kC", "ok"));  // a retry that succeeded
  r.insert_measurement(test_row(run, g, "kD", "launch_error"));
  r.insert_measurement(test_row(run, g, "kE", "cannot_implement"));
  auto ids = [](const std::vector<std::pair<std::string, std::string>>& v) {
    std::vector<std::string> out;
    for (auto& [k, kn] : v) out.push_back(k);
    return out;
  };
  EXPECT_EQ(ids(r.pending_items(g, 2)), (std::vector<std::string>{"kB", "kF"}));  // plan order
  EXPECT_EQ(ids(r.pending_items(g, 1)), (std::vector<std::string>{"kF"}));       // one crash used it up
  r.insert_measurement(test_row(run, g, "kB", "timeout"));
  EXPECT_EQ(r.attempts(g, "kB", knobs), 2);
  EXPECT_EQ(ids(r.pending_items(g, 2)), (std::vector<std::string>{"kF"}));
  EXPECT_EQ(ids(r.pending_items(g, 3)), (std::vector<std::string>{"kB", "kF"}));
  EXPECT_TRUE(r.pending_items("other_group", 2).empty());
}

TEST(RegistrySchema, NotSqliteIsAClearError) {
  ScratchDir dir;
  const std::string path = dir.file("text.db");
  std::ofstream(path) << "this is not a database, just some text that is long enough to have a header\n";
  try {
    Registry r(path);
    FAIL() << "opened a text file";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("cannot open registry '" + path + "'"), std::string::npos) << e.what();
  }
}

// A registry being created by one connection (another process in the monitor tests: the collect
// a test starts) and opened by another: the opener must see either no registry yet or the whole
// schema, never "tables and no schema version". The schema version and the table count are read
// in one read transaction; read apart, a creation committing between the two reads looked like a
// foreign SQLite file (seen as rare failures of MonitorKillResume.SigtermStopsCleanly and
// RegistryLock.SecondCollectOnOneRegistryFailsAtOnce).
TEST(RegistrySchema, AnOpenerNeverSeesAHalfCreatedRegistry) {
  ScratchDir dir;
  size_t opened = 0;
  for (int i = 0; i < 60; ++i) {
    const std::string path = dir.file("race" + std::to_string(i) + ".db");
    std::ofstream(path).close();  // exists, empty: openers can start before the creator
    std::atomic<bool> created{false};
    std::string bad;
    std::thread opener([&] {
      while (bad.empty()) {
        const bool done = created.load();
        try {
          Registry r(path, RegistryOptions{.read_only = true});
          ++opened;
          return;
        } catch (const Error& e) {
          const std::string what = e.what();
          if (what.find("not a cks registry (it is empty)") == std::string::npos) bad = what;
          if (done) return;
        }
      }
    });
    { Registry r(path); }
    created = true;
    opener.join();
    ASSERT_EQ(bad, "") << "iteration " << i;
  }
  EXPECT_GT(opened, 0u);
}
