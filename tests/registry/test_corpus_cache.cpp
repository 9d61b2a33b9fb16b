// The corpus cache (docs/registry.md, "Corpus cache"): a shard directory merged once into an
// entry that every reader then opens in place. The entry holds exactly the rows of an uncached
// merge, in the same order; it is keyed by the shards' names, sizes and bytes; it is built once
// when several readers miss at once; it is immutable, self-contained and read-only; `data stats`
// of an entry is computed once; an unusable cache directory falls back to a temporary merge.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <thread>

#include "common/test_util.hpp"
#include "registry/registry_test_util.hpp"

using namespace cks;
using namespace cks::test;

namespace {

namespace fs = std::filesystem;

// A registry of run `i`: groups shared between runs (merged), its own measurements and kernels,
// `rows` ok rows, packed into `shards`. Returns the shard.
std::string make_shard(const ScratchDir& dir, const std::string& shards, int i, int rows) {
  const std::string db = dir.file("r" + std::to_string(i) + ".db");
  {
    Registry r(db);
    RunInfo run = test_run();
    run.started_at = "2025-06-0" + std::to_string(i + 1) + "T00:00:00.000Z";
    const std::string uuid = r.begin_run(run);
    r.upsert_group(test_group(512, 512, 512));
    r.upsert_group(test_group(1024, 256, 128 * (i + 1), i % 2 ? "eval" : "train"));
    r.add_plan_items("512x512x512_tn", {{test_kernel(i).id(), RuntimeKnobs{}.canonical()}});
    for (int k = 0; k < 3; ++k) r.upsert_kernel(test_compile(test_kernel(i + k)));
    std::vector<MeasurementRow> ms;
    for (int j = 0; j < rows; ++j)
      ms.push_back(test_row(uuid, j % 2 ? "512x512x512_tn" : group_key(1024, 256, 128 * (i + 1), Layout::tn),
                            test_kernel((i + j) % 5).id(), j % 7 ? "ok" : "cut", 10.0 + j));
    ms.push_back(test_row(uuid, "512x512x512_tn", "cublas", "ok"));
    r.insert_measurements(ms);
    r.end_run(uuid);
  }
  return pack_shard(db, shards);
}

// Every row of every table of a registry, in rowid order (what "the same rows" means).
std::string dump(const std::string& path) {
  std::ostringstream out;
  Registry reg(path, RegistryOptions{.read_only = true});
  for (const char* table : {"meta", "runs", "groups", "kernels", "plan_items", "measurements", "profiles"}) {
    sqlite3_stmt* st = nullptr;
    const std::string sql = std::string("SELECT * FROM ") + table + " ORDER BY rowid";
    if (sqlite3_prepare_v2(reg.handle(), sql.c_str(), -1, &st, nullptr) != SQLITE_OK) return "error";
    out << "# " << table << "\n";
    while (sqlite3_step(st) == SQLITE_ROW) {
      for (int c = 0; c < sqlite3_column_count(st); ++c) {
        const auto* t = sqlite3_column_text(st, c);
        out << (t ? reinterpret_cast<const char*>(t) : "NULL") << "|";
      }
      out << "\n";
    }
    sqlite3_finalize(st);
  }
  return out.str();
}

std::set<std::string> names_in(const std::string& dir) {
  std::set<std::string> out;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec)) out.insert(e.path().filename().string());
  return out;
}

}  // namespace

TEST(CorpusCache, SameRowsAsTheUncachedMergeAndOpenedInPlace) {
  ScratchDir dir;
  ScopedEnv cache("CKS_CORPUS_CACHE", dir.file("cache"));
  const std::string shards = dir.file("shards");
  for (int i = 0; i < 4; ++i) make_shard(dir, shards, i, 40 + 30 * i);  // different sizes: a real base

  DataSourceOptions off;
  off.use_cache = false;
  const DataSource plain(shards, off);
  EXPECT_TRUE(plain.cache_key().empty());
  std::string cached_path;
  {
    const DataSource first(shards);
    EXPECT_FALSE(first.cache_hit());
    EXPECT_EQ(first.shards(), 4u);
    EXPECT_EQ(first.cache_key(), corpus_key(shard_files(shards)));
    EXPECT_EQ(fs::path(first.path()).parent_path(), fs::path(dir.file("cache")));
    cached_path = first.path();
    EXPECT_EQ(dump(first.path()), dump(plain.path()));  // every row, in the same order
    std::ostringstream a, b;
    export_measurements(Registry(first.path(), RegistryOptions{.read_only = true}), {}, Format::csv, a);
    export_measurements(Registry(plain.path(), RegistryOptions{.read_only = true}), {}, Format::csv, b);
    EXPECT_EQ(a.str(), b.str());
    EXPECT_EQ(data_stats(first).dump(), data_stats(plain).dump());
  }
  // Kept after its reader is gone, and opened in place by the next one.
  ASSERT_TRUE(fs::exists(cached_path));
  const DataSource again(shards);
  EXPECT_TRUE(again.cache_hit());
  EXPECT_EQ(again.path(), cached_path);
  // Immutable and self-contained: read-only mode bits, a rollback journal (no -wal beside it).
  struct stat st {};
  ASSERT_EQ(::stat(cached_path.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0444u);
  EXPECT_EQ(sql_text(cached_path, "PRAGMA journal_mode"), "delete");
  EXPECT_FALSE(fs::exists(cached_path + "-wal"));
  // Reading commands open it read-only and leave its bytes alone.
  const auto size = fs::file_size(cached_path);
  EXPECT_NO_THROW(Registry(cached_path, RegistryOptions{.read_only = true}).groups());
  EXPECT_EQ(fs::file_size(cached_path), size);
}

TEST(CorpusCache, KeyFollowsNamesSizesAndBytes) {
  ScratchDir dir;
  ScopedEnv cache("CKS_CORPUS_CACHE", dir.file("cache"));
  ScopedEnv keep("CKS_CORPUS_CACHE_KEEP", "2");
  const std::string shards = dir.file("shards");
  const std::string a = make_shard(dir, shards, 0, 50);
  const std::string b = make_shard(dir, shards, 1, 60);
  const std::string k1 = corpus_key(shard_files(shards));
  EXPECT_EQ(k1.size(), 16u);
  // The same shards elsewhere: the same key (nothing of the directory's path is in it).
  const std::string copy = dir.file("copy");
  fs::create_directories(copy);
  fs::copy_file(a, copy + "/" + fs::path(a).filename().string());
  fs::copy_file(b, copy + "/" + fs::path(b).filename().string());
  EXPECT_EQ(corpus_key(shard_files(copy)), k1);
  // A shard renamed, or its bytes changed at the same size, or a shard added: another key.
  fs::rename(copy + "/" + fs::path(b).filename().string(), copy + "/renamed.db" + fs::path(b).extension().string());
  EXPECT_NE(corpus_key(shard_files(copy)), k1);
  {
    std::fstream f(copy + "/renamed.db" + fs::path(b).extension().string(), std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(100);
    f.put('\x5a');
  }
  const std::string renamed_key = corpus_key(shard_files(copy));
  fs::rename(copy + "/renamed.db" + fs::path(b).extension().string(), copy + "/" + fs::path(b).filename().string());
  EXPECT_NE(corpus_key(shard_files(copy)), k1);  // same name and size, other bytes
  EXPECT_NE(renamed_key, k1);

  const DataSource first(shards);
  EXPECT_EQ(first.cache_key(), k1);
  make_shard(dir, shards, 2, 70);  // the next lease
  const DataSource second(shards);
  EXPECT_FALSE(second.cache_hit());
  EXPECT_NE(second.cache_key(), k1);
  make_shard(dir, shards, 3, 80);
  const DataSource third(shards);
  // Two entries kept (CKS_CORPUS_CACHE_KEEP), the least recently used removed with its files;
  // `first` still reads the file it opened.
  const auto entries = corpus_cache_entries(dir.file("cache"));
  ASSERT_EQ(entries.size(), 2u);
  EXPECT_EQ(entries[0].key, third.cache_key());
  EXPECT_EQ(entries[0].shards, 4u);
  EXPECT_EQ(entries[1].key, second.cache_key());
  for (const auto& name : names_in(dir.file("cache"))) EXPECT_EQ(name.find(k1), std::string::npos) << name;
  EXPECT_FALSE(fs::exists(first.path()));
}

TEST(CorpusCache, ConcurrentReadersBuildItOnce) {
  ScratchDir dir;
  ScopedEnv cache("CKS_CORPUS_CACHE", dir.file("cache"));
  const std::string shards = dir.file("shards");
  for (int i = 0; i < 3; ++i) make_shard(dir, shards, i, 2000);
  // Separate processes, as concurrent commands are (the build lock is an flock per open file).
  constexpr int kReaders = 4;
  std::vector<pid_t> pids;
  for (int i = 0; i < kReaders; ++i) {
    const pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      try {
        const DataSource s(shards);
        const Registry reg(s.path(), RegistryOptions{.read_only = true});
        std::ofstream(dir.file("reader" + std::to_string(i))) << s.path() << "\n"
                                                               << (s.cache_hit() ? "hit" : "built") << "\n"
                                                               << sql_count(s.path(), "measurements") << "\n";
        _exit(0);
      } catch (...) {
        _exit(1);
      }
    }
    pids.push_back(pid);
  }
  for (pid_t pid : pids) {
    int status = 0;
    ASSERT_EQ(waitpid(pid, &status, 0), pid);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  }
  int built = 0;
  std::set<std::string> paths;
  for (int i = 0; i < kReaders; ++i) {
    std::istringstream in(slurp(dir.file("reader" + std::to_string(i))));
    std::string path, how, rows;
    in >> path >> how >> rows;
    paths.insert(path);
    built += how == "built";
    EXPECT_EQ(rows, std::to_string(3 * 2001));
  }
  EXPECT_EQ(built, 1);
  EXPECT_EQ(paths.size(), 1u);
  // Nothing but the entry, its manifest and the lock: no temporary left behind.
  const auto names = names_in(dir.file("cache"));
  EXPECT_EQ(names.size(), 3u);
  for (const auto& n : names) EXPECT_TRUE(n == ".lock" || !n.starts_with(".")) << n;
}

TEST(CorpusCache, StatsComputedOnceRebuildAndClear) {
  ScratchDir dir;
  ScopedEnv cache("CKS_CORPUS_CACHE", dir.file("cache"));
  const std::string shards = dir.file("shards");
  make_shard(dir, shards, 0, 30);
  make_shard(dir, shards, 1, 40);
  const DataSource s(shards);
  const auto stats = data_stats(s);
  EXPECT_EQ(stats["measurements"]["attempts"], 72);
  std::string kept;
  for (const auto& n : names_in(dir.file("cache")))
    if (n.find(".stats-") != std::string::npos) kept = dir.file("cache/" + n);
  ASSERT_FALSE(kept.empty()) << "no stats file beside the entry";
  // The second call reads the kept counts (a marker planted in them shows it).
  auto planted = nlohmann::ordered_json::parse(slurp(kept));
  planted["plan_items"] = 12345;
  std::ofstream(kept) << planted.dump();
  EXPECT_EQ(data_stats(s)["plan_items"], 12345);

  DataSourceOptions rebuild;
  rebuild.rebuild = true;
  const DataSource r(shards, rebuild);
  EXPECT_FALSE(r.cache_hit());
  EXPECT_EQ(r.path(), s.path());
  EXPECT_FALSE(fs::exists(kept)) << "a rebuilt entry's old stats must go";
  EXPECT_EQ(data_stats(r)["plan_items"], stats["plan_items"]);

  const Registry open_reader(r.path(), RegistryOptions{.read_only = true});
  EXPECT_EQ(clear_corpus_cache(dir.file("cache")), 1u);
  EXPECT_TRUE(corpus_cache_entries(dir.file("cache")).empty());
  EXPECT_EQ(open_reader.groups().size(), 3u) << "a reader keeps reading a cleared entry";
}

TEST(CorpusCache, OffOrUnusableFallsBackToATemporaryMerge) {
  ScratchDir dir;
  const std::string shards = dir.file("shards");
  make_shard(dir, shards, 0, 30);
  make_shard(dir, shards, 1, 40);
  std::string expected;
  {
    ScopedEnv off("CKS_CORPUS_CACHE", "off");
    EXPECT_EQ(corpus_cache_dir(), "");
    std::string temp;
    {
      const DataSource s(shards);
      EXPECT_TRUE(s.cache_key().empty());
      temp = s.path();
      expected = dump(temp);
    }
    EXPECT_FALSE(fs::exists(temp)) << "the temporary merge goes with its DataSource";
  }
  {
    std::ofstream(dir.file("a-file")) << "not a directory";
    ScopedEnv bad("CKS_CORPUS_CACHE", dir.file("a-file") + "/cache");
    const DataSource s(shards);
    EXPECT_TRUE(s.cache_key().empty());
    EXPECT_EQ(dump(s.path()), expected);
  }
  {
    ScopedEnv unset_cache("CKS_CORPUS_CACHE", "");
    ScopedEnv xdg("XDG_CACHE_HOME", dir.file("xdg"));
    EXPECT_EQ(corpus_cache_dir(), dir.file("xdg") + "/cks/corpus");
  }
}

TEST(CorpusCache, CorruptShardIsAnErrorAndLeavesNoEntry) {
  ScratchDir dir;
  ScopedEnv cache("CKS_CORPUS_CACHE", dir.file("cache"));
  const std::string shards = dir.file("shards");
  const std::string good = make_shard(dir, shards, 0, 300);
  make_shard(dir, shards, 1, 30);
  fs::resize_file(good, fs::file_size(good) / 2);  // the largest shard, the merge's base
  try {
    const DataSource s(shards);
    FAIL() << "a truncated shard was read";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("corrupt shard"), std::string::npos) << e.what();
  }
  EXPECT_TRUE(corpus_cache_entries(dir.file("cache")).empty());
  for (const auto& n : names_in(dir.file("cache"))) EXPECT_EQ(n, ".lock");
}
