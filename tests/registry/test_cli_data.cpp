// `cks data stats|export|merge|pack` through the built binary.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>

#include "registry/registry_test_util.hpp"

using namespace cks;
using namespace cks::test;

namespace {

struct CmdResult {
  int code = -1;
  std::string out, err;
};

// Runs `cks <args>` in `cwd`, capturing stdout and stderr separately.
CmdResult cks_run(const ScratchDir& dir, const std::string& args, const std::string& cwd = "") {
  const std::string err_file = dir.file("stderr.txt");
  const std::string cmd = (cwd.empty() ? "" : "cd '" + cwd + "' && ") + std::string(CKS_BIN_DIR) + "/cks " + args +
                          " 2>'" + err_file + "'";
  CmdResult r;
  FILE* p = popen(cmd.c_str(), "r");
  if (!p) return r;
  char buf[4096];
  size_t got;
  while ((got = fread(buf, 1, sizeof buf, p)) > 0) r.out.append(buf, got);
  const int status = pclose(p);
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  std::ifstream e(err_file);
  r.err.assign(std::istreambuf_iterator<char>(e), {});
  return r;
}

// A registry with one run, two groups, a cuBLAS reference and three attempts.
std::string make_registry(const ScratchDir& dir, const std::string& name) {
  const std::string path = dir.file(name);
  Registry r(path);
  const std::string run = r.begin_run(test_run());
  r.upsert_group(test_group(512, 512, 512));
  r.upsert_group(test_group(8192, 64, 1024, "eval"));
  const KernelDesc k = test_kernel(0);
  r.upsert_kernel(test_compile(k));
  r.insert_measurements({test_row(run, "512x512x512_tn", k.id(), "ok"), test_row(run, "512x512x512_tn", "cublas", "ok"),
                         test_row(run, "8192x64x1024_tn", k.id(), "timeout")});
  r.end_run(run);
  return path;
}

}  // namespace

TEST(RegistryCli, StatsExportMergePack) {
  ScratchDir dir;
  const std::string a = make_registry(dir, "a.db"), b = make_registry(dir, "b.db");

  auto stats = cks_run(dir, "data stats --registry " + a);  // json by default
  ASSERT_EQ(stats.code, 0) << stats.err;
  auto s = nlohmann::json::parse(stats.out);
  EXPECT_EQ(s["measurements"]["attempts"], 3);
  EXPECT_EQ(s["measurements"]["by_status"]["timeout"], 1);
  EXPECT_EQ(s["cublas_referenced_groups"], 1);
  EXPECT_EQ(s["runs"]["list"][0]["provenance_complete"], true);

  auto csv = cks_run(dir, "data stats --registry " + a + " --format csv");
  ASSERT_EQ(csv.code, 0) << csv.err;
  EXPECT_NE(csv.out.find("metric,value\n"), std::string::npos);
  EXPECT_NE(csv.out.find("measurements.by_status.ok,2\n"), std::string::npos);
  auto md = cks_run(dir, "data stats --registry " + a + " --format md");
  ASSERT_EQ(md.code, 0) << md.err;
  EXPECT_NE(md.out.find("## Runs"), std::string::npos);

  auto exp = cks_run(dir, "data export --registry " + a + " --status ok --set train --layout tn");
  ASSERT_EQ(exp.code, 0) << exp.err;
  EXPECT_EQ(std::count(exp.out.begin(), exp.out.end(), '\n'), 3);  // header + kernel + cuBLAS
  auto no_cublas = cks_run(dir, "data export --registry " + a + " --status ok --no-cublas --format json");
  ASSERT_EQ(no_cublas.code, 0) << no_cublas.err;
  EXPECT_EQ(nlohmann::json::parse(no_cublas.out).size(), 1u);

  const std::string merged = dir.file("merged.db");
  auto merge = cks_run(dir, "data merge --out " + merged + " " + a + " " + b);
  ASSERT_EQ(merge.code, 0) << merge.err;
  EXPECT_NE(merge.out.find("measurements,6"), std::string::npos) << merge.out;
  auto again = cks_run(dir, "data merge --out " + merged + " " + a + " " + b);
  EXPECT_NE(again.out.find("measurements,0"), std::string::npos) << again.out;

  // Packing into the default data/shards of the working directory, then reading it by default.
  auto pack = cks_run(dir, "data pack --registry " + a, dir.path());
  ASSERT_EQ(pack.code, 0) << pack.err;
  EXPECT_NE(pack.out.find("data/shards/"), std::string::npos);
  auto repack = cks_run(dir, "data pack --registry " + a, dir.path());
  EXPECT_EQ(repack.code, 1);
  EXPECT_NE(repack.err.find("cks: error: shard"), std::string::npos) << repack.err;
  ASSERT_EQ(cks_run(dir, "data pack --registry " + b, dir.path()).code, 0);
  auto from_shards = cks_run(dir, "data stats", dir.path());
  ASSERT_EQ(from_shards.code, 0) << from_shards.err;
  EXPECT_EQ(nlohmann::json::parse(from_shards.out)["measurements"]["attempts"], 6);

  // --by-run: a's one run is packed already (above), so nothing is written: one clear error.
  auto by_run = cks_run(dir, "data pack --by-run --registry " + a, dir.path());
  EXPECT_EQ(by_run.code, 1);
  EXPECT_NE(by_run.err.find("is packed already"), std::string::npos) << by_run.err;
  EXPECT_NE(by_run.err.find("cks: error: every run of"), std::string::npos) << by_run.err;
  auto elsewhere = cks_run(dir, "data pack --by-run --registry " + a + " --out-dir " + dir.file("other"), dir.path());
  ASSERT_EQ(elsewhere.code, 0) << elsewhere.err;
  EXPECT_NE(elsewhere.out.find(dir.file("other")), std::string::npos) << elsewhere.out;
  auto both = cks_run(dir, "data pack --by-run --parts 2 --registry " + a + " --out-dir " + dir.file("third"), dir.path());
  EXPECT_EQ(both.code, 1);
  EXPECT_NE(both.err.find("--by-run and --parts cannot be combined"), std::string::npos) << both.err;
}

TEST(RegistryCli, BadInputIsOneClearError) {
  ScratchDir dir;
  const std::string a = make_registry(dir, "a.db");
  const std::vector<std::string> bad = {
      "data stats --registry " + dir.file("missing.db"), "data export --registry " + a + " --status fast",
      "data export --registry " + a + " --layout xy",    "data stats --registry " + a + " --format yaml",
      "data stats --registry " + dir.path(),             "data stats"};
  for (const std::string& args : bad) {
    auto r = cks_run(dir, args, dir.path());
    EXPECT_EQ(r.code, 1) << args;
    EXPECT_EQ(r.err.rfind("cks: error: ", 0), 0u) << args << ": " << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  }
  EXPECT_FALSE(std::filesystem::exists(dir.file("missing.db")));  // readers never create files
}

// --compact rounds the measured values to what they can tell and timestamps to the second; every
// row, key, clock and the provenance stay as they were, and the shard reads like any other.
TEST(RegistryCli, CompactPackRoundsValuesAndKeepsEveryRow) {
  ScratchDir dir;
  const std::string path = dir.file("c.db");
  {
    Registry r(path);
    const std::string run = r.begin_run(test_run());
    r.upsert_group(test_group(512, 512, 512));
    const KernelDesc k = test_kernel(0);
    r.upsert_kernel(test_compile(k));
    MeasurementRow row = test_row(run, "512x512x512_tn", k.id(), "ok", 134.141866366069);
    row.std_us = 0.107306908316647;
    row.tflops = 768.434329239914;
    row.power_w = 129.595;
    row.max_rel_err = 0.0025388109497726;
    row.started_at = "2026-12-05T16:40:11.764Z";
    row.finished_at = "2026-12-05T16:40:11.771Z";
    r.insert_measurements({row, test_row(run, "512x512x512_tn", "cublas", "ok")});
    r.end_run(run);
  }
  const std::string full_dir = dir.file("full"), compact_dir = dir.file("compact");
  auto full = cks_run(dir, "data pack --registry " + path + " --out-dir " + full_dir);
  ASSERT_EQ(full.code, 0) << full.err;
  auto compact = cks_run(dir, "data pack --compact --registry " + path + " --out-dir " + compact_dir);
  ASSERT_EQ(compact.code, 0) << compact.err;
  const std::string merged = dir.file("merged.db");
  auto merge = cks_run(dir, "data merge --out " + merged + " " + compact_dir + "/" +
                                std::filesystem::path(compact.out.substr(0, compact.out.find('\n'))).filename().string());
  ASSERT_EQ(merge.code, 0) << merge.err;
  EXPECT_EQ(sql_count(merged, "measurements"), 2);
  const std::string q = "SELECT printf('%s|%s|%s|%s|%s|%s|%s|%s', mean_us, std_us, tflops, power_w, max_rel_err, started_at, "
                        "finished_at, sm_clock_mhz) FROM measurements WHERE kernel_id != 'cublas'";
  EXPECT_EQ(sql_text(merged, q), "134.142|0.107|768.434|129.6|0.00254|2026-12-05T16:40:11Z|2026-12-05T16:40:11Z|1980.0");
  // The untouched pack keeps the full values.
  auto merge_full = cks_run(dir, "data merge --out " + dir.file("full.db") + " " + full_dir + "/" +
                                     std::filesystem::path(full.out.substr(0, full.out.find('\n'))).filename().string());
  ASSERT_EQ(merge_full.code, 0) << merge_full.err;
  EXPECT_EQ(sql_text(dir.file("full.db"), "SELECT started_at FROM measurements WHERE kernel_id != 'cublas'"),
            "2026-12-05T16:40:11.764Z");
  // --columnar: the same rows from a .cols.xz shard, read from its directory like any shard.
  const std::string cols_dir = dir.file("cols");
  auto cols = cks_run(dir, "data pack --compact --columnar --registry " + path + " --out-dir " + cols_dir);
  ASSERT_EQ(cols.code, 0) << cols.err;
  EXPECT_TRUE(std::regex_search(cols.out, std::regex(R"(\d{8}_[0-9a-f]{8}\.cols\.xz\n$)"))) << cols.out;
  auto merge_cols = cks_run(dir, "data merge --out " + dir.file("cols.db") + " " + cols.out.substr(0, cols.out.find('\n')));
  ASSERT_EQ(merge_cols.code, 0) << merge_cols.err;
  EXPECT_EQ(sql_text(dir.file("cols.db"), q), "134.142|0.107|768.434|129.6|0.00254|2026-12-05T16:40:11Z|2026-12-05T16:40:11Z|1980.0");
  auto stats = cks_run(dir, "data stats --format csv --data " + cols_dir);
  ASSERT_EQ(stats.code, 0) << stats.err;
  // A directory merges every shard in it, each form (a glob of one form would miss the others).
  auto merge_dirs = cks_run(dir, "data merge --format csv --out " + dir.file("dirs.db") + " " + cols_dir + " " + full_dir);
  ASSERT_EQ(merge_dirs.code, 0) << merge_dirs.err;
  EXPECT_NE(merge_dirs.out.find("measurements,2"), std::string::npos) << merge_dirs.out;
  EXPECT_EQ(sql_count(dir.file("dirs.db"), "measurements"), 2);
  auto gz = cks_run(dir, "data pack --columnar --compression gz --registry " + path + " --out-dir " + dir.file("gz"));
  EXPECT_EQ(gz.code, 1);
  EXPECT_NE(gz.err.find("--columnar shards are always xz"), std::string::npos) << gz.err;
}
