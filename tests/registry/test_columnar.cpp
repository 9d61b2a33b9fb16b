// Columnar shards (*.cols.xz, src/registry/columnar.hpp): lossless, smaller, read like any shard,
// and a clear error when corrupt.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <limits>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "registry/columnar.hpp"
#include "registry/registry_test_util.hpp"
#include "registry/sqlite_util.hpp"

using namespace cks;
using namespace cks::test;

namespace {

// One value as SQLite holds it: (storage class, bytes); a REAL's bytes are its bits.
using Cell = std::pair<int, std::string>;

// Every user table of a database: name -> (sql, rows in rowid order).
std::map<std::string, std::pair<std::string, std::vector<std::vector<Cell>>>> dump_tables(const std::string& path) {
  std::map<std::string, std::pair<std::string, std::vector<std::vector<Cell>>>> out;
  sqlite3* db = reg::open_db(path, SQLITE_OPEN_READONLY);
  std::vector<std::pair<std::string, std::string>> tables;
  {
    reg::Stmt s(db, "SELECT name, sql FROM sqlite_master WHERE type='table' AND name NOT LIKE 'sqlite%' ORDER BY name");
    while (s.step()) tables.emplace_back(s.col_text(0), s.col_text(1));
  }
  for (const auto& [name, sql] : tables) {
    auto& [table_sql, rows] = out[name];
    table_sql = sql;
    reg::Stmt s(db, "SELECT * FROM \"" + name + "\" ORDER BY rowid");
    while (s.step()) {
      std::vector<Cell> row;
      for (int c = 0; c < s.columns(); ++c) {
        sqlite3_stmt* st = s.get();
        const int type = sqlite3_column_type(st, c);
        std::string bytes;
        if (type == SQLITE_FLOAT) {
          const double v = sqlite3_column_double(st, c);
          bytes.assign(reinterpret_cast<const char*>(&v), sizeof v);
        } else if (type == SQLITE_INTEGER) {
          bytes = std::to_string(sqlite3_column_int64(st, c));
        } else if (type == SQLITE_TEXT || type == SQLITE_BLOB) {
          const void* p = type == SQLITE_TEXT ? static_cast<const void*>(sqlite3_column_text(st, c)) : sqlite3_column_blob(st, c);
          bytes.assign(static_cast<const char*>(p ? p : ""), static_cast<size_t>(sqlite3_column_bytes(st, c)));
        }
        row.emplace_back(type, bytes);
      }
      rows.push_back(std::move(row));
    }
  }
  reg::close_db(db);
  return out;
}

// A registry with the values a round trip could lose: doubles of every magnitude, an infinity,
// text with quotes, newlines, non-ASCII and non-UTF-8 bytes, a blob, a NULL, and more rows than
// one chunk of a column.
std::string tricky_registry(const ScratchDir& dir, size_t rows) {
  const std::string path = dir.file("tricky.db");
  Registry r(path);
  const std::string run = r.begin_run(test_run());
  r.upsert_group(test_group(512, 512, 512));
  const KernelDesc k = test_kernel(0);
  r.upsert_kernel(test_compile(k));
  std::vector<MeasurementRow> batch;
  for (size_t i = 0; i < rows; ++i) {
    MeasurementRow m = test_row(run, "512x512x512_tn", i % 7 ? k.id() : "cublas", i % 11 ? "ok" : "crash",
                                10.0 + 0.1 * static_cast<double>(i) + 1e-9 * static_cast<double>(i % 13));
    m.std_us = i == 1 ? std::numeric_limits<double>::infinity() : 1.0 / static_cast<double>(i + 3);
    m.tflops = i == 2 ? 1.7976931348623157e308 : (i == 3 ? 4.9e-324 : 0.1 + 0.2);
    m.max_rel_err = i == 4 ? -0.0 : -1;
    m.error = i == 5 ? std::string("line 1\nline \"2\", tab\t, 5 \xc2\xb5s") : (i == 6 ? std::string("bad \xff\xfe bytes") : "");
    batch.push_back(m);
  }
  r.insert_measurements(batch);
  r.end_run(run);
  // A table of other storage classes (a blob, a NULL, a huge integer), as a later schema might add.
  sqlite3* db = reg::open_db(path, SQLITE_OPEN_READWRITE);
  reg::exec(db, "CREATE TABLE extra(\"odd \"\"name\"\"\" BLOB, v, w INTEGER)");
  reg::exec(db, "INSERT INTO extra VALUES(x'00ff10', NULL, 9223372036854775807), (x'', 1.5, -9223372036854775808)");
  reg::close_db(db);
  return path;
}

std::string decode(const std::string& shard, const ScratchDir& dir, const std::string& name) {
  const std::string out = dir.file(name);
  reg::decompress_shard(shard, out);
  return out;
}

// `text` (the columns of a shard) compressed as a .cols.xz file in `dir`.
std::string columnar_file(const ScratchDir& dir, const std::string& name, const std::string& text) {
  const std::string plain = dir.file(name + ".jsonl"), shard = dir.file(name + ".cols.xz");
  std::ofstream(plain) << text;
  reg::xz_file(plain, shard, 6);
  return shard;
}

}  // namespace

TEST(RegistryColumnar, ColumnsReadBackAsTheSameTablesRowForRow) {
  ScratchDir dir;
  const std::string path = tricky_registry(dir, reg::kColumnarChunk + 100);
  const std::string cols = pack_shard(path, dir.file("cols"), "cols");
  const std::string sqlite = pack_shard(path, dir.file("sqlite"), "xz");
  EXPECT_TRUE(cols.ends_with(".cols.xz")) << cols;
  const auto from_cols = dump_tables(decode(cols, dir, "from_cols.db"));
  const auto from_sqlite = dump_tables(decode(sqlite, dir, "from_sqlite.db"));
  ASSERT_EQ(from_cols.size(), from_sqlite.size());
  EXPECT_TRUE(from_cols.count("extra"));
  for (const auto& [name, table] : from_sqlite) {
    ASSERT_TRUE(from_cols.count(name)) << name;
    EXPECT_EQ(from_cols.at(name).first, table.first) << name;
    ASSERT_EQ(from_cols.at(name).second.size(), table.second.size()) << name;
    for (size_t r = 0; r < table.second.size(); ++r)
      ASSERT_EQ(from_cols.at(name).second[r], table.second[r]) << name << " row " << r;
  }
  EXPECT_EQ(from_cols.at("measurements").second.size(), reg::kColumnarChunk + 100);
  EXPECT_EQ(sql_text(dir.file("from_cols.db"), "PRAGMA integrity_check"), "ok");
  // Both forms are smaller than the file, the columns by far.
  EXPECT_LT(std::filesystem::file_size(cols), std::filesystem::file_size(sqlite) * 3 / 4)
      << std::filesystem::file_size(cols) << " against " << std::filesystem::file_size(sqlite);
}

// The check `pack --columnar` runs on what it wrote before committing it.
TEST(RegistryColumnar, FirstDifferenceFindsOneChangedValue) {
  ScratchDir dir;
  const std::string path = tricky_registry(dir, 40);
  const std::string decoded = decode(pack_shard(path, dir.file("cols"), "cols"), dir, "decoded.db");
  sqlite3* a = reg::open_db(path, SQLITE_OPEN_READONLY);
  sqlite3* b = reg::open_db(decoded, SQLITE_OPEN_READWRITE);
  EXPECT_EQ(reg::first_difference(a, b), "");
  reg::exec(b, "UPDATE measurements SET mean_us = mean_us * (1 + 1e-15) WHERE rowid = 7");
  EXPECT_EQ(reg::first_difference(a, b), "table 'measurements', row 7, column 'mean_us' differs");
  reg::close_db(b);
  const std::string second = decode(dir.file("cols/" + std::filesystem::path(shard_files(dir.file("cols"))[0]).filename().string()),
                                    dir, "second.db");
  b = reg::open_db(second, SQLITE_OPEN_READWRITE);
  reg::exec(b, "DELETE FROM extra WHERE v IS NULL");
  EXPECT_EQ(reg::first_difference(a, b), "table 'extra': the row counts differ");
  reg::exec(b, "DROP TABLE extra");
  EXPECT_EQ(reg::first_difference(a, b), "the tables or their SQL differ");
  reg::close_db(a);
  reg::close_db(b);
}

TEST(RegistryColumnar, ReadWithOtherShardsAndPackedOnce) {
  ScratchDir dir;
  const std::string a = dir.file("a.db"), b = dir.file("b.db");
  for (const auto& [path, m] : {std::pair{a, 1024L}, std::pair{b, 2048L}}) {
    Registry r(path);
    const std::string run = r.begin_run(test_run());
    r.upsert_group(test_group(m, 512, 256));
    const KernelDesc k = test_kernel(static_cast<int>(m / 1024));
    r.upsert_kernel(test_compile(k));
    const std::string key = std::to_string(m) + "x512x256_tn";
    r.insert_measurements({test_row(run, key, k.id(), "ok", 20), test_row(run, key, "cublas", "ok", 18)});
    r.end_run(run);
  }
  const std::string shards = dir.file("shards");
  pack_shard(a, shards, "xz");
  const std::string sb = pack_shard(b, shards, "cols", true);
  // A run is packed once, whatever the form.
  for (const std::string form : {"xz", "gz", "cols"}) {
    try {
      pack_shard(b, shards, form);
      FAIL() << "packed a run twice (" << form << ")";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("already exists"), std::string::npos) << e.what();
    }
  }
  const PackByRun again = pack_shards_by_run(b, shards, "xz");
  ASSERT_EQ(again.skipped.size(), 1u);
  EXPECT_EQ(again.skipped[0].second, sb);
  EXPECT_THROW(pack_shard(a, shards, "zstd"), Error);

  EXPECT_EQ(shard_files(shards).size(), 2u);
  DataSourceOptions no_cache;
  no_cache.use_cache = false;
  DataSource data(shards, no_cache);
  EXPECT_EQ(data.shards(), 2u);
  EXPECT_EQ(sql_count(data.path(), "measurements"), 4);
  EXPECT_EQ(sql_count(data.path(), "runs"), 2);
  EXPECT_EQ(sql_text(data.path(), "SELECT group_concat(key) FROM (SELECT key FROM groups ORDER BY key)"),
            "1024x512x256_tn,2048x512x256_tn");
  // The columnar one alone is a whole registry too (the merge's base is the largest shard).
  const std::string only = dir.file("only.db");
  merge_registries(only, {sb});
  EXPECT_EQ(sql_count(only, "measurements"), 2);
}

// A compact registry whose TFLOP/s are the means' (the harness's), rounded as compact rounds them:
// the shard derives them from the means, reads back the same bits, and is smaller than with them.
TEST(RegistryColumnar, TflopsDerivedFromTheMeanReadBackBitForBit) {
  ScratchDir dir;
  const std::string path = dir.file("harness.db");
  {
    Registry r(path);
    const std::string run = r.begin_run(test_run());
    const KernelDesc k = test_kernel(0);
    r.upsert_kernel(test_compile(k));
    std::vector<MeasurementRow> rows;
    for (long m : {64L, 576L, 4096L}) {
      r.upsert_group(test_group(m, 4096, 7168));
      const std::string key = std::to_string(m) + "x4096x7168_tn";
      for (int i = 0; i < 400; ++i) {
        const double mean = 9.0 + m * 0.01 + i * 0.0137;
        MeasurementRow row = test_row(run, key, k.id(), "ok", mean);
        row.tflops = 2.0 * m * 4096 * 7168 / (mean * 1e-6) / 1e12;
        rows.push_back(row);
      }
      // Rows the rule cannot give: a failed candidate (0, 0), a value of its own.
      rows.push_back(test_row(run, key, k.id(), "crash", 0));
      rows.back().tflops = 0;
      rows.push_back(test_row(run, key, k.id(), "ok", 12.5));
      rows.back().tflops = 1.5;
    }
    // A row whose group the registry does not list.
    rows.push_back(test_row(run, "1x1x1_tn", k.id(), "ok", 3.0));
    r.insert_measurements(rows);
    r.end_run(run);
  }
  const std::string plain = pack_shard(path, dir.file("plain"), "cols");  // full-precision TFLOP/s: not derived
  const std::string compact = pack_shard(path, dir.file("compact"), "cols", true);
  auto text_of = [&](const std::string& shard) {
    const std::string out = dir.file(std::filesystem::path(shard).filename().string() + ".txt");
    reg::unxz_file(shard, out);
    std::ifstream in(out);
    return std::string(std::istreambuf_iterator<char>(in), {});
  };
  EXPECT_EQ(text_of(plain).find("\"derive\""), std::string::npos);
  EXPECT_NE(text_of(compact).find(R"({"derive":"tflops-6g","values":[)"), std::string::npos);
  // What it reads back is the compact registry's, bit for bit (pack checked it too).
  const std::string sqlite = pack_shard(path, dir.file("sqlite"), "xz", true);
  sqlite3* a = reg::open_db(decode(sqlite, dir, "from_sqlite.db"), SQLITE_OPEN_READONLY);
  sqlite3* b = reg::open_db(decode(compact, dir, "from_cols.db"), SQLITE_OPEN_READONLY);
  EXPECT_EQ(reg::first_difference(a, b), "");
  reg::close_db(a);
  reg::close_db(b);
  EXPECT_EQ(sql_text(dir.file("from_cols.db"), "SELECT tflops FROM measurements WHERE group_key = '1x1x1_tn'"), "123.0");
}

TEST(RegistryColumnar, CorruptColumnarShardIsAClearError) {
  ScratchDir dir;
  const std::string path = tricky_registry(dir, 50);
  const std::string good = pack_shard(path, dir.file("good"), "cols");
  auto expect_corrupt = [&](const std::string& shard, const std::string& what) {
    try {
      decode(shard, dir, "out_" + std::filesystem::path(shard).filename().string() + ".db");
      FAIL() << "read a corrupt shard: " << what;
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("corrupt shard '" + shard + "'"), std::string::npos) << what << ": " << e.what();
    }
  };
  // Truncated compressed stream.
  const std::string cut = dir.file("cut.cols.xz");
  std::filesystem::copy_file(good, cut);
  std::filesystem::resize_file(cut, std::filesystem::file_size(cut) / 2);
  expect_corrupt(cut, "truncated xz");
  // A whole stream that ends inside a table.
  std::string text;
  {
    const std::string plain = dir.file("good.jsonl");
    reg::unxz_file(good, plain);
    std::ifstream in(plain);
    text.assign(std::istreambuf_iterator<char>(in), {});
  }
  expect_corrupt(columnar_file(dir, "short", text.substr(0, text.size() / 2)), "cut text");
  const std::string head = std::string("{\"format\":\"") + reg::kColumnarFormat + "\"}\n";
  expect_corrupt(columnar_file(dir, "foreign", "SQLite format 3\n"), "another format");
  const std::string end = std::string("{\"end\":\"") + reg::kColumnarFormat + "\"}\n";
  expect_corrupt(columnar_file(dir, "noheader", head + "[1,2]\n" + end), "no table header");
  expect_corrupt(columnar_file(dir, "noend", head + R"j({"table":"a","sql":"CREATE TABLE a(x)","columns":["x"],"rows":1})j" "\n[1]\n"),
                 "no end line");
  expect_corrupt(columnar_file(dir, "after", head + end + "[1]\n"), "data after the end");
  expect_corrupt(columnar_file(dir, "drop", head + R"j({"table":"meta","sql":"DROP TABLE meta","columns":["x"],"rows":0})j" "\n"),
                 "not CREATE TABLE");
  expect_corrupt(columnar_file(dir, "two", head + R"j({"table":"a","sql":"CREATE TABLE a(x); CREATE TABLE b(y)","columns":["x"],"rows":0})j" "\n"),
                 "two statements");
  expect_corrupt(columnar_file(dir, "other", head + R"j({"table":"a","sql":"CREATE TABLE b(x)","columns":["x"],"rows":0})j" "\n"),
                 "another table");
  expect_corrupt(columnar_file(dir, "cols", head + R"j({"table":"a","sql":"CREATE TABLE a(x, y)","columns":["x"],"rows":0})j" "\n"),
                 "other columns");
  expect_corrupt(columnar_file(dir, "filled", head + R"j({"table":"a","sql":"CREATE TABLE a AS SELECT 1 AS x","columns":["x"],"rows":0})j" "\n"),
                 "a filled table");
  expect_corrupt(columnar_file(dir, "count", head + R"j({"table":"a","sql":"CREATE TABLE a(x)","columns":["x"],"rows":3})j" "\n[1,2]\n"),
                 "fewer values than rows");
  expect_corrupt(columnar_file(dir, "value", head + R"j({"table":"a","sql":"CREATE TABLE a(x)","columns":["x"],"rows":2})j" "\n[1,{\"real\":\"nan\"}]\n"),
                 "a value outside the format");
  expect_corrupt(columnar_file(dir, "hex", head + R"j({"table":"a","sql":"CREATE TABLE a(x)","columns":["x"],"rows":1})j" "\n[{\"blob_hex\":\"0g\"}]\n"),
                 "bad hex");
  const std::string measurements =
      R"j({"table":"groups","sql":"CREATE TABLE groups(key TEXT, m INTEGER, n INTEGER, k INTEGER)","columns":["key","m","n","k"],"rows":1})j"
      "\n[\"a\"]\n[64]\n[64]\n[64]\n"
      R"j({"table":"measurements","sql":"CREATE TABLE measurements(group_key TEXT, mean_us REAL, tflops REAL)","columns":["group_key","mean_us","tflops"],"rows":2})j"
      "\n";
  expect_corrupt(columnar_file(dir, "residual", head + measurements + "[\"a\",\"b\"]\n[1.0,1.0]\n" +
                                                    R"({"derive":"tflops-6g","values":[0,0]})" "\n" + end),
                 "a residual of a group without a shape");
  expect_corrupt(columnar_file(dir, "residual3", head + measurements + "[\"a\",\"a\"]\n[1.0,1.0]\n" +
                                                     R"({"derive":"tflops-6g","values":[3,0]})" "\n" + end),
                 "a residual beyond 2");
  expect_corrupt(columnar_file(dir, "rule", head + measurements + "[\"a\",\"a\"]\n[1.0,1.0]\n" +
                                                R"({"derive":"other","values":[0,0]})" "\n" + end),
                 "another rule");
  expect_corrupt(columnar_file(dir, "check", head + R"j({"table":"a","sql":"CREATE TABLE a(x CHECK(x > 0))","columns":["x"],"rows":1})j" "\n[-1]\n"),
                 "a row the table refuses");
  // Every error above left the shard directory readable by name: a directory with a bad one is refused whole.
  const std::string shards = dir.file("shards");
  std::filesystem::create_directories(shards);
  std::filesystem::copy_file(good, shards + "/" + std::filesystem::path(good).filename().string());
  std::filesystem::copy_file(cut, shards + "/20200101_00000000.cols.xz");
  EXPECT_THROW(DataSource{shards}, Error);
}
