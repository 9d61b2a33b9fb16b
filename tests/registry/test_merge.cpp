// Merging, shards, stats, export and the observation reader.
#include <gtest/gtest.h>

#include <fstream>

#include <regex>
#include <sstream>

#include "registry/registry_test_util.hpp"

using namespace cks;
using namespace cks::test;

namespace {

// Two registries from two "nodes" that overlap: a shared group, a kernel that failed to
// compile on node A and compiled on node B, and one measurement both recorded (same uuid).
struct TwoNodes {
  ScratchDir dir;
  std::string a = dir.file("a.db"), b = dir.file("b.db");
  std::string shared_uuid = new_uuid();
  KernelDesc k1 = test_kernel(1), k2 = test_kernel(2), k3 = test_kernel(3);

  TwoNodes() {
    {
      Registry r(a);
      const std::string run = r.begin_run(test_run());
      r.upsert_group(test_group(1024, 1024, 1024));
      r.upsert_group(test_group(2048, 512, 256));
      r.upsert_kernel(test_compile(k1));
      r.upsert_kernel(test_compile(k2, "compile_error"));
      r.add_plan_items("1024x1024x1024_tn", {{k1.id(), RuntimeKnobs{}.canonical()}});
      auto shared = test_row(run, "1024x1024x1024_tn", k1.id(), "ok", 20);
      shared.uuid = shared_uuid;
      r.insert_measurements({shared, test_row(run, "1024x1024x1024_tn", "cublas", "ok", 18),
                             test_row(run, "2048x512x256_tn", k2.id(), "compile_error"),
                             test_row(run, "2048x512x256_tn", k1.id(), "crash")});
      r.end_run(run);
    }
    {
      Registry r(b);
      RunInfo info = test_run();
      info.git_sha = "";  // a run with incomplete provenance
      const std::string run = r.begin_run(info);
      r.upsert_group(test_group(1024, 1024, 1024));
      r.upsert_group(test_group(1024, 1024, 1024, "eval", Layout::nt));  // same (M,N,K) as a training group
      r.upsert_group(test_group(4096, 128, 4096, "eval"));
      r.upsert_kernel(test_compile(k2));
      r.upsert_kernel(test_compile(k3));
      auto shared = test_row(run, "1024x1024x1024_tn", k1.id(), "ok", 20);
      shared.uuid = shared_uuid;
      r.insert_measurements({shared, test_row(run, "4096x128x4096_tn", k3.id(), "ok", 30),
                             test_row(run, "4096x128x4096_tn", k2.id(), "timeout")});
    }
  }
};

}  // namespace

TEST(RegistryMerge, UnionWithoutDuplicatesAndIdempotent) {
  TwoNodes t;
  const std::string dest = t.dir.file("merged.db");
  MergeStats s = merge_registries(dest, {t.a, t.b});
  EXPECT_EQ(s.runs, 2);
  EXPECT_EQ(s.groups, 4);  // 1024^3 train once, + 2048 train, + two eval groups
  EXPECT_EQ(s.kernels, 3);
  EXPECT_EQ(s.plan_items, 1);
  EXPECT_EQ(s.measurements, 6);  // 4 + 3 - the shared one
  EXPECT_EQ(sql_count(dest, "measurements"), 6);
  // The kernel that compiled on node B wins over node A's failure.
  EXPECT_EQ(sql_text(dest, "SELECT status FROM kernels WHERE kernel_id='" + t.k2.id() + "'"), "ok");

  MergeStats again = merge_registries(dest, {t.b, t.a});
  EXPECT_EQ(again.runs + again.groups + again.kernels + again.plan_items + again.measurements, 0);
  EXPECT_EQ(sql_count(dest, "measurements"), 6);
  EXPECT_EQ(sql_text(dest, "PRAGMA integrity_check"), "ok");

  EXPECT_THROW(merge_registries(dest, {dest}), Error);
  EXPECT_THROW(merge_registries(dest, {t.dir.file("missing.db")}), Error);
}

TEST(RegistryMerge, LaterCheckpointOfARunBringsItsEndTime) {
  ScratchDir dir;
  const std::string live = dir.file("live.db"), early = dir.file("early.db"), dest = dir.file("dest.db");
  Registry r(live);
  const std::string run = r.begin_run(test_run());
  r.checkpoint(early);
  r.end_run(run);
  merge_registries(dest, {early});
  EXPECT_EQ(sql_text(dest, "SELECT ended_at FROM runs"), "");
  merge_registries(dest, {live});
  EXPECT_NE(sql_text(dest, "SELECT ended_at FROM runs"), "");
  merge_registries(dest, {early});  // an older copy never takes the end time away
  EXPECT_NE(sql_text(dest, "SELECT ended_at FROM runs"), "");
}

TEST(RegistryShards, PackThenReadMergedShards) {
  TwoNodes t;
  const std::string shards = t.dir.file("data/shards");
  const std::string sa = pack_shard(t.a, shards);
  EXPECT_TRUE(std::regex_match(std::filesystem::path(sa).filename().string(),
                               std::regex(R"(\d{8}_[0-9a-f]{8}\.db\.xz)")))
      << sa;
  try {
    pack_shard(t.a, shards);
    FAIL() << "overwrote a shard";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("already exists"), std::string::npos);
  }
  EXPECT_THROW(pack_shard(t.a, shards, "gz"), Error) << "the same run packed with gzip is the same shard";
  // Shards of both compressions (gzip before session 14) are read together.
  const std::string sb = pack_shard(t.b, shards, "gz");
  EXPECT_TRUE(sb.ends_with(".db.gz")) << sb;
  EXPECT_THROW(pack_shard(t.b, shards, "zstd"), Error);

  std::string merged_path;
  {
    DataSourceOptions no_cache;  // a temporary merge (the corpus cache keeps its entries: test_corpus_cache.cpp)
    no_cache.use_cache = false;
    DataSource data(shards, no_cache);
    EXPECT_EQ(data.shards(), 2u);
    merged_path = data.path();
    EXPECT_EQ(sql_count(data.path(), "measurements"), 6);
    EXPECT_EQ(sql_count(data.path(), "runs"), 2);
    // Shards are packed without the secondary indexes; the merge recreates them.
    EXPECT_EQ(sql_text(data.path(), "SELECT count(*) FROM sqlite_master WHERE type = 'index' AND name IN "
                                    "('measurements_candidate', 'measurements_status')"),
              "2");
    // A shard merges like a registry: idempotent against the plain files.
    const std::string dest = t.dir.file("dest.db");
    merge_registries(dest, {t.a, t.b});
    EXPECT_EQ(merge_registries(dest, {sa, sb}).measurements, 0);
  }
  EXPECT_FALSE(std::filesystem::exists(merged_path)) << "temporary merge left behind";
  {
    const DataSource cached(shards);  // through the corpus cache: the same rows, kept for the next reader
    EXPECT_EQ(sql_count(cached.path(), "measurements"), 6);
    EXPECT_EQ(sql_count(cached.path(), "runs"), 2);
    merged_path = cached.path();
  }
  if (!corpus_cache_dir().empty()) EXPECT_TRUE(std::filesystem::exists(merged_path));

  DataSource plain(t.a);
  EXPECT_EQ(plain.path(), t.a);
  EXPECT_EQ(plain.shards(), 0u);
  EXPECT_THROW(DataSource(t.dir.file("nowhere")), Error);
  EXPECT_THROW(DataSource{t.dir.path() + "/data"}, Error);  // a directory without shards
  EXPECT_THROW(pack_shard(t.dir.file("missing.db"), shards), Error);

  // The --registry / --data choice of the reading commands.
  EXPECT_EQ(open_data("", shards)->shards(), 2u);
  EXPECT_EQ(open_data(t.a, "")->path(), t.a);
  EXPECT_THROW(open_data(shards, ""), Error);  // a directory given as a registry
  EXPECT_THROW(open_data("", t.a), Error);     // a file given as a shard directory
}

// A lease's collect of several plans (runs) into one registry, resumed from an earlier lease's:
// `cks data pack --by-run` gives each run its shard, skips the earlier run's (committed already), and
// the shards merged hold the whole registry.
TEST(RegistryShards, PackByRunWritesAShardPerRunAndSkipsPackedOnes) {
  ScratchDir dir;
  const std::string reg = dir.file("lease.db"), shards = dir.file("data/shards");
  const KernelDesc k1 = test_kernel(1), k2 = test_kernel(2), k3 = test_kernel(3), k4 = test_kernel(4);
  std::string run0, run1, run2;
  {
    Registry r(reg);
    run0 = r.begin_run(test_run());  // stopped before its first row
    r.end_run(run0);
    run1 = r.begin_run(test_run());
    r.upsert_group(test_group(1024, 1024, 1024));
    r.upsert_kernel(test_compile(k1));
    r.insert_measurements({test_row(run1, "1024x1024x1024_tn", k1.id(), "ok", 20),
                           test_row(run1, "1024x1024x1024_tn", "cublas", "ok", 18)});
    r.end_run(run1);
    run2 = r.begin_run(test_run());
    r.upsert_group(test_group(2048, 512, 256));
    r.upsert_group(test_group(4096, 128, 4096, "eval"));  // listed, never measured
    r.upsert_kernel(test_compile(k2));
    r.upsert_kernel(test_compile(k3));  // compiled, never measured
    r.add_plan_items("4096x128x4096_tn", {{k3.id(), RuntimeKnobs{}.canonical()}});
    r.insert_measurements({test_row(run2, "2048x512x256_tn", k2.id(), "ok", 30),
                           test_row(run2, "2048x512x256_tn", k1.id(), "crash"),
                           test_row(run2, "1024x1024x1024_tn", k2.id(), "ok", 25)});
    r.end_run(run2);
  }
  const PackByRun first = pack_shards_by_run(reg, shards);
  ASSERT_EQ(first.written.size(), 2u);
  EXPECT_TRUE(first.skipped.empty());
  EXPECT_EQ(first.written[0].first, run1);
  EXPECT_EQ(first.written[1].first, run2);
  EXPECT_NE(first.written[0].second.find(run1.substr(0, 8) + ".db.xz"), std::string::npos) << first.written[0].second;
  auto contents = [&](const std::string& shard) {
    const std::string db = dir.file("one_" + std::to_string(std::hash<std::string>{}(shard)) + ".db");
    merge_registries(db, {shard});
    return db;
  };
  const std::string s1 = contents(first.written[0].second), s2 = contents(first.written[1].second);
  EXPECT_EQ(sql_text(s1, "SELECT group_concat(uuid) FROM runs"), run1);
  EXPECT_EQ(sql_count(s1, "measurements"), 2);
  EXPECT_EQ(sql_text(s1, "SELECT group_concat(key) FROM groups"), "1024x1024x1024_tn");
  EXPECT_EQ(sql_text(s1, "SELECT group_concat(kernel_id) FROM kernels"), k1.id());
  // The last shard: its run's rows and what they use, and the leftovers (run0, the eval group and
  // its plan item, k3).
  EXPECT_EQ(sql_count(s2, "measurements"), 3);
  EXPECT_EQ(sql_text(s2, "SELECT count(*) FROM runs WHERE uuid IN ('" + run0 + "', '" + run2 + "')"), "2");
  EXPECT_EQ(sql_count(s2, "runs"), 2);
  EXPECT_EQ(sql_count(s2, "groups"), 3);
  EXPECT_EQ(sql_count(s2, "plan_items"), 1);
  EXPECT_EQ(sql_text(s2, "SELECT count(*) FROM kernels WHERE kernel_id IN ('" + k1.id() + "', '" + k2.id() + "', '" +
                             k3.id() + "')"),
            "3");
  // Merged, the shards are the registry.
  const std::string all = dir.file("all.db");
  merge_registries(all, {first.written[0].second, first.written[1].second});
  for (const char* table : {"runs", "groups", "kernels", "plan_items", "measurements"})
    EXPECT_EQ(sql_count(all, table), sql_count(reg, table)) << table;

  // The next lease resumes this registry and adds a run: only the new run is packed.
  std::string run3;
  {
    Registry r(reg);
    run3 = r.begin_run(test_run());
    r.upsert_kernel(test_compile(k4));
    r.insert_measurements({test_row(run3, "2048x512x256_tn", k4.id(), "ok", 33)});
    r.end_run(run3);
  }
  const PackByRun next = pack_shards_by_run(reg, shards);
  ASSERT_EQ(next.written.size(), 1u);
  EXPECT_EQ(next.written[0].first, run3);
  EXPECT_EQ(next.skipped.size(), 2u);
  const std::string s3 = contents(next.written[0].second);
  EXPECT_EQ(sql_count(s3, "measurements"), 1);
  // Its kernel, and again the leftovers no run's rows use (k3): a merge keeps one copy.
  EXPECT_EQ(sql_text(s3, "SELECT count(*) FROM kernels WHERE kernel_id IN ('" + k3.id() + "', '" + k4.id() + "')"), "2");
  EXPECT_EQ(sql_count(s3, "kernels"), 2);
  const PackByRun again = pack_shards_by_run(reg, shards);
  EXPECT_TRUE(again.written.empty());
  EXPECT_EQ(again.skipped.size(), 3u);

  Registry(dir.file("empty.db"));
  EXPECT_THROW(pack_shards_by_run(dir.file("empty.db"), shards), Error);
  EXPECT_THROW(pack_shards_by_run(reg, shards, "zstd"), Error);
}

TEST(RegistryShards, CorruptShardIsAClearError) {
  for (const std::string compression : {"xz", "gz"}) {
    TwoNodes t;
    const std::string shards = t.dir.file("shards");
    const std::string sa = pack_shard(t.a, shards, compression);
    std::filesystem::resize_file(sa, std::filesystem::file_size(sa) / 2);
    try {
      DataSource d{shards};
      FAIL() << "a truncated " << compression << " shard was read";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("corrupt shard"), std::string::npos) << e.what();
    }
    // A file of another format under the shard's name.
    std::filesystem::remove(sa);
    std::ofstream(sa) << "not compressed at all";
    EXPECT_THROW(DataSource{shards}, Error) << compression;
  }
}

TEST(RegistryStats, CountsEverythingTheIssueAsksFor) {
  TwoNodes t;
  const std::string dest = t.dir.file("merged.db");
  merge_registries(dest, {t.a, t.b});
  Registry r(dest);
  const auto s = registry_stats(r);
  EXPECT_EQ(s["schema_version"], 2);
  EXPECT_EQ(s["runs"]["total"], 2);
  EXPECT_EQ(s["runs"]["with_provenance"], 1);
  EXPECT_EQ(s["groups"]["total"], 4);
  EXPECT_EQ(s["groups"]["by_set"]["train"], 2);
  EXPECT_EQ(s["groups"]["by_set"]["eval"], 2);
  EXPECT_EQ(s["groups"]["by_layout"]["tn"], 3);
  EXPECT_EQ(s["groups"]["by_set_layout"]["eval"]["nt"], 1);
  EXPECT_EQ(s["groups"]["eval_sharing_train_shape"], 1);
  EXPECT_EQ(s["measurements"]["attempts"], 6);
  EXPECT_EQ(s["measurements"]["ok"], 3);
  EXPECT_EQ(s["measurements"]["by_status"]["crash"], 1);
  EXPECT_EQ(s["measurements"]["by_status"]["timeout"], 1);
  EXPECT_EQ(s["measurements"]["by_status"]["quarantined"], 0);
  EXPECT_EQ(s["kernels"]["ok"], 3);
  EXPECT_EQ(s["kernels"]["compile_error"], 0);
  // The 1024^3 key is referenced (train tn); of the other three groups two were measured
  // without a cuBLAS row and one has no row at all.
  EXPECT_EQ(s["cublas_referenced_groups"], 1);
  EXPECT_EQ(s["groups_missing_cublas"], 2);
  EXPECT_EQ(s["groups_unmeasured"], 1);
  EXPECT_EQ(s["groups"]["eval_exhaustive"], 0) << "the measured eval group sampled 16 candidates";

  // Exhaustive evaluation groups: every kernel of the enumerated pool (budget) has an attempt,
  // whatever its status.
  const std::string run = r.begin_run(test_run());
  GroupInfo full = test_group(64, 64, 64, "eval"), part = test_group(96, 64, 64, "eval");
  full.policy = part.policy = "exhaustive";
  full.budget = 2;
  part.budget = 3;
  r.upsert_group(full);
  r.upsert_group(part);
  r.insert_measurements({test_row(run, "64x64x64_tn", t.k1.id(), "ok"), test_row(run, "64x64x64_tn", t.k2.id(), "cut"),
                         test_row(run, "96x64x64_tn", t.k1.id(), "ok")});
  const auto e = registry_stats(r);
  EXPECT_EQ(e["groups"]["eval_exhaustive"], 1);
  EXPECT_EQ(e["groups"]["eval_kernels_per_group"]["tn"]["groups"], 3);
  EXPECT_EQ(e["groups"]["eval_kernels_per_group"]["tn"]["exhaustive"], 1);
  EXPECT_EQ(e["groups"]["eval_kernels_per_group"]["tn"]["max_kernels"], 2);

  // Training groups against their budgets: (kernel, knobs) candidates attempted / budget.
  GroupInfo done = test_group(128, 64, 64, "train"), half = test_group(160, 64, 64, "train"),
            more = test_group(192, 64, 64, "train");
  done.budget = 2;
  half.budget = 4;
  more.budget = 1;
  for (const GroupInfo& g : {done, half, more}) r.upsert_group(g);
  MeasurementRow other_knobs = test_row(run, "160x64x64_tn", t.k1.id(), "ok");
  other_knobs.knobs = "r=n,s=2,d=h,k=1";
  r.insert_measurements({test_row(run, "128x64x64_tn", t.k1.id(), "ok"), test_row(run, "128x64x64_tn", t.k2.id(), "cut"),
                         test_row(run, "128x64x64_tn", "cublas", "ok"), test_row(run, "160x64x64_tn", t.k1.id(), "ok"),
                         other_knobs, test_row(run, "192x64x64_tn", t.k1.id(), "ok"),
                         test_row(run, "192x64x64_tn", t.k2.id(), "ok")});
  const auto b = registry_stats(r)["groups"]["train_budget"]["tn"];
  // With the fixture's two training groups (budget 16; 1 and 2 candidates attempted) the shares
  // are 1/16, 2/16, 0.5, 1 and 2 (capped at 1 in the mean).
  EXPECT_EQ(b["groups"], 5) << b.dump();
  EXPECT_EQ(b["complete"], 2);
  EXPECT_DOUBLE_EQ(b["budget_share_mean"].get<double>(), (1.0 / 16 + 2.0 / 16 + 0.5 + 1 + 1) / 5);
  EXPECT_DOUBLE_EQ(b["budget_share_median"].get<double>(), 0.5);

  // A kernel quarantined (or failing to compile) during a run gets a row in every group still
  // pending for it, written without setting those groups up: such a group is not reached yet,
  // so it is neither measured nor missing its cuBLAS reference (lease 8 left two like this).
  const auto before = registry_stats(r);
  GroupInfo pending = test_group(224, 64, 64, "train");
  pending.budget = 4;
  r.upsert_group(pending);
  r.insert_measurements({test_row(run, "224x64x64_tn", t.k1.id(), "quarantined"),
                         test_row(run, "224x64x64_tn", t.k2.id(), "compile_error")});
  const auto q = registry_stats(r);
  EXPECT_EQ(q["groups_unmeasured"], before["groups_unmeasured"].get<int>() + 1);
  EXPECT_EQ(q["groups_missing_cublas"], before["groups_missing_cublas"]);
  EXPECT_EQ(q["measurements"]["groups_measured"], before["measurements"]["groups_measured"]);
  EXPECT_EQ(q["groups"]["measured_by_set_layout"], before["groups"]["measured_by_set_layout"]);
  EXPECT_EQ(q["groups"]["train_budget"]["tn"]["groups"], 5);
  EXPECT_EQ(q["measurements"]["by_status"]["quarantined"], 1);
  // Once a worker attempts anything in it, it is reached, and then its missing reference counts.
  r.insert_measurements({test_row(run, "224x64x64_tn", t.k1.id(), "cut")});
  const auto c = registry_stats(r);
  EXPECT_EQ(c["groups_unmeasured"], before["groups_unmeasured"]);
  EXPECT_EQ(c["groups_missing_cublas"], before["groups_missing_cublas"].get<int>() + 1);
}

TEST(RegistryExport, RowsCarryProvenanceAndFiltersApply) {
  TwoNodes t;
  Registry r(t.a);
  std::ostringstream csv;
  EXPECT_EQ(export_measurements(r, {}, Format::csv, csv), 4u);
  std::istringstream lines(csv.str());
  std::string header, line;
  std::getline(lines, header);
  EXPECT_EQ(header.rfind("uuid,run_uuid,group_key,m,n,k,layout,set,kernel_id,canonical,knobs,status,", 0), 0u)
      << header;
  EXPECT_NE(header.find("gpu_name,gpu_uuid,driver_version,cuda_version,cublas_version,cutlass_version,git_sha"),
            std::string::npos);
  while (std::getline(lines, line)) EXPECT_NE(line.find(",NVIDIA H200,GPU-0000,580.65,13.0,"), std::string::npos);

  MeasurementFilter ok_only;
  ok_only.status = "ok";
  ok_only.include_cublas = false;
  std::ostringstream js;
  EXPECT_EQ(export_measurements(r, ok_only, Format::json, js), 1u);
  auto rows = nlohmann::json::parse(js.str());
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0]["canonical"], t.k1.canonical());
  EXPECT_EQ(rows[0]["m"], 1024);
  EXPECT_EQ(rows[0]["samples"], 15);
  EXPECT_EQ(rows[0]["cutlass_version"], "4.2.0");

  MeasurementFilter eval;
  eval.set = "eval";
  std::ostringstream none;
  EXPECT_EQ(export_measurements(r, eval, Format::json, none), 0u);
  EXPECT_EQ(nlohmann::json::parse(none.str()).size(), 0u);
  MeasurementFilter bad;
  bad.status = "fast";
  EXPECT_THROW(export_measurements(r, bad, Format::csv, none), Error);
}

TEST(RegistryExport, ObservationsAreOkRowsWithShapes) {
  TwoNodes t;
  const std::string dest = t.dir.file("merged.db");
  merge_registries(dest, {t.a, t.b});
  Registry r(dest);
  MeasurementFilter train;
  train.set = "train";
  train.include_cublas = false;
  auto obs = load_ok_measurements(r, train);
  ASSERT_EQ(obs.size(), 1u);
  EXPECT_EQ(obs[0].group_key, "1024x1024x1024_tn");
  EXPECT_EQ(obs[0].n, 1024);
  EXPECT_EQ(obs[0].kernel_id, t.k1.id());
  EXPECT_EQ(obs[0].samples, 15);
  EXPECT_DOUBLE_EQ(obs[0].mean_us, 20);
  MeasurementFilter all;
  EXPECT_EQ(load_ok_measurements(r, all).size(), 3u);  // incl. the cuBLAS reference
  size_t visited = 0;
  scan_ok_measurements(r, all, [&](const Observation& o) {
    EXPECT_FALSE(o.set.empty());
    ++visited;
  });
  EXPECT_EQ(visited, 3u);
}
