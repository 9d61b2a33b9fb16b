// Readers never write what they read (issue 18, defects 5, 8 and 11): every command that only
// reads a registry or shard leaves its bytes and mtime alone (no WAL switch, no migration, no
// registry made out of an empty or foreign file; a checkpoint stays a rollback-journal file),
// a 0-byte or corrupt shard is an error wherever it sorts, and a stop signal during a --data
// command leaves no temporary behind.
#include <gtest/gtest.h>
#include <signal.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <sstream>
#include <thread>

#include "cks/plan.hpp"
#include "registry/registry_test_util.hpp"
#include "registry/sqlite_util.hpp"

extern char** environ;

using namespace cks;
using namespace cks::test;
namespace fs = std::filesystem;

namespace {

struct Snapshot {
  std::string bytes;
  timespec mtime{};
  bool operator==(const Snapshot& o) const {
    return bytes == o.bytes && mtime.tv_sec == o.mtime.tv_sec && mtime.tv_nsec == o.mtime.tv_nsec;
  }
};

Snapshot snapshot(const std::string& path) {
  Snapshot s;
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  s.bytes = ss.str();
  struct stat st {};
  ::stat(path.c_str(), &st);
  s.mtime = st.st_mtim;
  return s;
}

struct CmdRun {
  int code = -1;
  std::string err;
};

// `cks <args>` with stdout discarded and stderr captured.
CmdRun run_cks(const ScratchDir& dir, const std::string& args) {
  const std::string err_file = dir.file("stderr.txt");
  const std::string cmd = std::string(CKS_BIN_DIR) + "/cks " + args + " >/dev/null 2>'" + err_file + "'";
  CmdRun r;
  const int status = std::system(cmd.c_str());
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  std::ifstream e(err_file);
  r.err.assign(std::istreambuf_iterator<char>(e), {});
  return r;
}

// A registry as `cks collect` leaves it (WAL mode), with one run, group, kernel and rows.
std::string make_registry(const ScratchDir& dir, const std::string& name) {
  const std::string path = dir.file(name);
  Registry r(path);
  const std::string run = r.begin_run(test_run());
  r.upsert_group(test_group(512, 512, 512));
  const KernelDesc k = test_kernel(0);
  r.upsert_kernel(test_compile(k));
  r.add_plan_items("512x512x512_tn", {{k.id(), RuntimeKnobs{}.canonical()}});
  r.insert_measurements({test_row(run, "512x512x512_tn", k.id(), "ok"), test_row(run, "512x512x512_tn", "cublas", "ok")});
  r.end_run(run);
  return path;
}

std::string write_one_group_plan(const ScratchDir& dir) {
  Plan p;
  p.name = "p";
  p.created_by = "cks_tests";
  PlanGroup g;
  g.group = test_group(512, 512, 512);
  g.group.key = "512x512x512_tn";
  g.candidates = {{test_kernel(0).id(), RuntimeKnobs{}.canonical()}, {test_kernel(1).id(), RuntimeKnobs{}.canonical()}};
  p.groups.push_back(g);
  write_plan(p, dir.file("plan.jsonl"));
  return dir.file("plan.jsonl");
}

// Every command that only reads its --registry.
std::vector<std::string> reading_commands(const ScratchDir& dir, const std::string& plan, const std::string& db) {
  const std::string model = std::string(CKS_SOURCE_DIR) + "/models/default.json";
  return {
      "data stats --registry " + db,
      "data stats --registry " + db + " --format md",
      "data export --registry " + db,
      "plan remaining " + plan + " --registry " + db + " --out " + dir.file("left.jsonl"),
      "plan remeasure --registry " + db + " --fraction 1 --out " + dir.file("re.jsonl"),
      "plan leaders --registry " + db + " --out " + dir.file("lead.jsonl"),
      "analyze failures --registry " + db,
      "analyze noise --registry " + db,
      "analyze repeatability --registry " + db,
      "analyze features --registry " + db,
      "train --registry " + db + " --model ridge --out " + dir.file("m.json"),
      "eval --registry " + db + " --model " + model,
      "data merge --out " + dir.file("merged.db") + " " + db,
      "data pack --registry " + db + " --out-dir " + dir.file("shards-out"),
  };
}

// A gzip stream of nothing: it decompresses to an empty file.
void reg_gzip_empty(const std::string& path) {
  const std::string empty = path + ".src";
  std::ofstream(empty).close();
  reg::gzip_file(empty, path);
  fs::remove(empty);
}

// `n` ok rows of run `run` in group 512x512x512_tn, one transaction.
void reg_fill(sqlite3* db, const std::string& run, int n) {
  const std::string sql =
      "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < " + std::to_string(n) +
      ") INSERT INTO measurements(uuid, run_uuid, group_key, kernel_id, knobs, status, mean_us) "
      "SELECT printf('%s-%08x', '" + run + "', x), '" + run + "', '512x512x512_tn', printf('k%016x', x * 7919), "
      "'r=m,s=1,d=h,k=1', 'ok', 10.0 + x FROM c";
  ASSERT_EQ(sqlite3_exec(db, sql.c_str(), nullptr, nullptr, nullptr), SQLITE_OK) << sqlite3_errmsg(db);
}

// Header bytes 18-19 of an SQLite file: 1 = rollback journal, 2 = WAL.
int journal_version(const std::string& path) {
  const std::string b = snapshot(path).bytes;
  return b.size() >= 20 ? static_cast<int>(b[18]) : -1;
}

}  // namespace

TEST(RegistryReadOnly, ReadingCommandsLeaveRegistriesCheckpointsAndForeignFilesUntouched) {
  ScratchDir dir;
  const std::string plan = write_one_group_plan(dir);
  const std::string live = make_registry(dir, "live.db");
  const std::string ckpt = dir.file("ckpt.db");
  {
    Registry r(make_registry(dir, "src.db"));
    r.checkpoint(ckpt);
  }
  ASSERT_EQ(journal_version(ckpt), 1) << "a checkpoint is a rollback-journal file";
  const std::string foreign = dir.file("foreign.db"), empty = dir.file("empty.db"), text = dir.file("text.db");
  {
    sqlite3* db = nullptr;
    sqlite3_open(foreign.c_str(), &db);
    sqlite3_exec(db, "CREATE TABLE t(x); INSERT INTO t VALUES(1)", nullptr, nullptr, nullptr);
    sqlite3_close(db);
  }
  std::ofstream(empty).close();
  std::ofstream(text) << "not a database, just text long enough to fill an SQLite header and more\n";

  for (const std::string& db : {live, ckpt, foreign, empty, text}) {
    const Snapshot before = snapshot(db);
    for (const std::string& args : reading_commands(dir, plan, db)) {
      std::this_thread::sleep_for(std::chrono::milliseconds(2));  // a write would move the mtime
      const CmdRun r = run_cks(dir, args);
      EXPECT_TRUE(snapshot(db) == before) << args << " changed " << db << " (exit " << r.code << ": " << r.err << ")";
      if (db == foreign || db == empty || db == text) {
        EXPECT_EQ(r.code, 1) << args << ": " << r.err;
        EXPECT_EQ(r.err.rfind("cks: error: ", 0), 0u) << args << ": " << r.err;
        EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << args << ": " << r.err;
      }
    }
    EXPECT_FALSE(fs::exists(db + "-journal")) << db;
  }
  EXPECT_EQ(journal_version(ckpt), 1) << "still a rollback-journal file";
  EXPECT_EQ(snapshot(foreign).bytes.size(), fs::file_size(foreign));
  EXPECT_EQ(fs::file_size(empty), 0u) << "an empty file never becomes a registry";
  const CmdRun stats = run_cks(dir, "data stats --registry " + empty);
  EXPECT_NE(stats.err.find("is not a cks registry"), std::string::npos) << stats.err;
  const CmdRun fstats = run_cks(dir, "data stats --registry " + foreign);
  EXPECT_NE(fstats.err.find("not a cks registry"), std::string::npos) << fstats.err;
}

TEST(RegistryReadOnly, ReadOnlyOpenRefusesWritesAndMigratesOlderFilesOnACopy) {
  ScratchDir dir;
  const std::string path = make_registry(dir, "r.db");
  const Snapshot before = snapshot(path);
  {
    Registry r(path, RegistryOptions{.read_only = true});
    EXPECT_EQ(r.groups().size(), 1u);
    EXPECT_THROW(r.upsert_group(test_group(1024, 1024, 1024)), Error);
  }
  EXPECT_TRUE(snapshot(path) == before);
  // A version-1 file (no profiles table) reads through a migrated temporary copy.
  {
    sqlite3* db = nullptr;
    sqlite3_open(path.c_str(), &db);
    sqlite3_exec(db, "DROP TABLE profiles; UPDATE meta SET value='1' WHERE key='schema_version'", nullptr, nullptr,
                 nullptr);
    sqlite3_close(db);
  }
  const Snapshot v1 = snapshot(path);
  {
    Registry r(path, RegistryOptions{.read_only = true});
    EXPECT_TRUE(r.profiles().empty());
    EXPECT_EQ(r.groups().size(), 1u);
  }
  EXPECT_TRUE(snapshot(path) == v1);
  EXPECT_EQ(sql_text(path, "SELECT value FROM meta WHERE key='schema_version'"), "1");
  EXPECT_THROW(Registry(dir.file("missing.db"), RegistryOptions{.read_only = true}), Error);
  EXPECT_FALSE(fs::exists(dir.file("missing.db")));
}

// Defect 11: a lone 0-byte shard read as an empty registry; as a second shard it was refused.
TEST(RegistryReadOnly, EmptyTruncatedOrForeignShardIsAnErrorWhereverItSorts) {
  ScratchDir dir;
  const std::string plan = write_one_group_plan(dir);
  const std::string good = pack_shard(make_registry(dir, "a.db"), dir.file("good"), "gz");
  const std::string good_xz = pack_shard(make_registry(dir, "b.db"), dir.file("good_xz"));
  struct Bad {
    std::string name, why;
    std::function<void(const std::string&)> make;
  };
  const std::vector<Bad> bad = {
      {"zero.db.gz", "empty file", [](const std::string& p) { std::ofstream(p).close(); }},
      {"plain.db.gz", "not a gzip file", [](const std::string& p) { std::ofstream(p) << std::string(4096, 'x'); }},
      {"truncated.db.gz", "corrupt shard",
       [&](const std::string& p) {
         fs::copy_file(good, p);
         fs::resize_file(p, fs::file_size(p) / 2);
       }},
      {"gz-of-empty.db.gz", "is not a cks registry", [](const std::string& p) { reg_gzip_empty(p); }},
      {"zero.db.xz", "empty file", [](const std::string& p) { std::ofstream(p).close(); }},
      {"plain.db.xz", "not an xz file", [](const std::string& p) { std::ofstream(p) << std::string(4096, 'x'); }},
      {"truncated.db.xz", "corrupt shard",
       [&](const std::string& p) {
         fs::copy_file(good_xz, p);
         fs::resize_file(p, fs::file_size(p) / 2);
       }},
  };
  for (const auto& b : bad) {
    for (bool alone : {true, false}) {
      const std::string shards = dir.file(std::string(alone ? "alone-" : "second-") + b.name);
      fs::create_directories(shards);
      b.make(shards + "/" + b.name);
      if (!alone) fs::copy_file(good, shards + "/" + fs::path(good).filename().string());
      const CmdRun r = run_cks(dir, "plan remaining " + plan + " --data " + shards + " --out " + dir.file("left.jsonl"));
      EXPECT_EQ(r.code, 1) << b.name << (alone ? " alone" : " second") << ": " << r.err;
      EXPECT_NE(r.err.find(b.why), std::string::npos) << b.name << ": " << r.err;
      EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
      EXPECT_THROW(DataSource{shards}, Error) << b.name;
    }
  }
}

// Defect 8: SIGINT or SIGTERM while a --data command decompresses and merges shards left the
// temporary registries behind. Now they go (from TMPDIR and from the corpus cache, where the merge
// is built) and the command dies of the signal.
TEST(RegistryReadOnly, StopSignalDuringADataCommandLeavesNoTemporary) {
  ScratchDir dir;
  const std::string shards = dir.file("shards");
  // Three shards of 150,000 rows each: decompressing and merging them takes a while.
  for (int i = 0; i < 3; ++i) {
    const std::string db = dir.file("big" + std::to_string(i) + ".db");
    Registry r(db);
    RunInfo run = test_run();
    run.started_at = "2025-06-0" + std::to_string(i + 1) + "T00:00:00.000Z";
    const std::string uuid = r.begin_run(run);
    r.upsert_group(test_group(512, 512, 512));
    reg_fill(r.handle(), uuid, 150000);
    pack_shard(db, shards);
  }
  const std::string tmp = dir.file("tmp"), cache = dir.file("cache");
  for (int sig : {SIGINT, SIGTERM}) {
    fs::create_directories(tmp);
    // The merge is built in the corpus cache (docs/registry.md), its inputs decompressed in TMPDIR.
    const std::string cmd = "TMPDIR='" + tmp + "' CKS_CORPUS_CACHE='" + cache + "' exec " + std::string(CKS_BIN_DIR) +
                            "/cks data stats --data " + shards + " >/dev/null 2>&1";
    pid_t pid = 0;
    const char* argv[] = {"/bin/sh", "-c", cmd.c_str(), nullptr};
    // Default dispositions: a runner started in the background may hand SIGINT down ignored.
    posix_spawnattr_t attr;
    posix_spawnattr_init(&attr);
    sigset_t dfl;
    sigemptyset(&dfl);
    sigaddset(&dfl, SIGINT);
    sigaddset(&dfl, SIGTERM);
    posix_spawnattr_setsigdefault(&attr, &dfl);
    posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGDEF);
    ASSERT_EQ(posix_spawn(&pid, "/bin/sh", nullptr, &attr, const_cast<char**>(argv), environ), 0);
    posix_spawnattr_destroy(&attr);
    // Wait until it has a temporary registry, then stop it.
    const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    bool seen = false;
    while (!seen && std::chrono::steady_clock::now() < until) {
      seen = !fs::is_empty(tmp);
      if (!seen) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    ASSERT_TRUE(seen) << "no temporary registry appeared";
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    kill(pid, sig);
    int st = 0;
    ASSERT_EQ(waitpid(pid, &st, 0), pid);
    EXPECT_FALSE(WIFEXITED(st) && WEXITSTATUS(st) == 0) << "a stopped command must not exit 0";
    if (WIFSIGNALED(st)) {
      EXPECT_EQ(WTERMSIG(st), sig);
    }
    std::vector<std::string> left;
    for (const auto& e : fs::directory_iterator(tmp)) left.push_back(e.path().filename().string());
    EXPECT_TRUE(left.empty()) << "signal " << sig << " left " << left.size() << " files, e.g. " << left.front();
    // Nothing half-built in the cache either: at most its lock file.
    std::vector<std::string> cached;
    std::error_code ec;
    for (const auto& e : fs::directory_iterator(cache, ec))
      if (e.path().filename() != ".lock") cached.push_back(e.path().filename().string());
    EXPECT_TRUE(cached.empty()) << "signal " << sig << " left " << cached.size() << " files in the cache, e.g. "
                                << cached.front();
  }
}
