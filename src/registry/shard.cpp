// Packing a registry into an immutable, compressed shard for data/shards/.
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <vector>

#include "cks/registry.hpp"
#include "registry/columnar.hpp"
#include "registry/schema.hpp"
#include "registry/sqlite_util.hpp"

namespace cks {

namespace {

// "<YYYYMMDD>_<first 8 hex of the uuid>" of a run (started_at is ISO-8601 "YYYY-MM-DDT...").
std::string run_stem(const std::string& uuid, const std::string& started) {
  if (started.size() < 10 || started[4] != '-' || started[7] != '-' || uuid.size() < 8)
    throw Error("run '" + uuid + "' has a malformed start time '" + started + "'; cannot name its shard");
  return started.substr(0, 4) + started.substr(5, 2) + started.substr(8, 2) + "_" + uuid.substr(0, 8);
}

// The stem of the registry's latest run.
std::string shard_stem(sqlite3* db, const std::string& registry_path) {
  reg::Stmt s(db, "SELECT uuid, started_at FROM runs ORDER BY started_at DESC, uuid DESC LIMIT 1");
  if (!s.step()) throw Error("registry '" + registry_path + "' has no runs to pack");
  return run_stem(s.col_text(0), s.col_text(1));
}

// A shard's file name suffix by `compression`: "xz" and "gz" compress the SQLite file, "cols"
// writes its columns (registry/columnar.hpp).
std::string shard_extension(const std::string& compression) {
  if (compression == "xz" || compression == "gz") return ".db." + compression;
  if (compression == "cols") return ".cols.xz";
  throw Error("shard compression must be 'xz', 'gz' or 'cols' (got '" + compression + "')");
}

// The same shard in every form: a run is packed once, whichever form it took.
std::vector<std::string> shard_forms(const std::string& shard) {
  for (const char* ext : {".db.xz", ".db.gz", ".cols.xz"}) {
    if (reg::ends_with(shard, ext)) {
      const std::string stem = shard.substr(0, shard.size() - std::strlen(ext));
      return {stem + ".db.xz", stem + ".db.gz", stem + ".cols.xz"};
    }
  }
  return {shard};
}

// The path of the shard `shard` in any form if one exists, else "".
std::string existing_form(const std::string& shard) {
  for (const std::string& form : shard_forms(shard))
    if (reg::file_exists(form)) return form;
  return "";
}

// Compresses the temporary registry copy into `shard`, never replacing one.
void write_shard(const std::string& copy, const std::string& shard, const std::string& compression) {
  auto refuse = [&] { return Error("shard '" + shard + "' already exists (shards are immutable: pack a new run instead)"); };
  AtomicOutput out(shard);
  if (compression == "xz") {
    reg::xz_file(copy, out.temp_path(), 9);
  } else if (compression == "cols") {
    TempPath text = make_temp("", "cks-cols-", ".jsonl");
    sqlite3* db = reg::open_db(copy, SQLITE_OPEN_READONLY);
    try {
      reg::write_columnar(db, text.path());
    } catch (...) {
      reg::close_db(db);
      throw;
    }
    reg::close_db(db);
    reg::xz_file(text.path(), out.temp_path(), 9);
    // The shard as a reader will see it, decoded and compared with the registry value by value:
    // nothing is committed that does not read back whole.
    TempPath back = reg::temp_db("cols-check");
    reg::decompress_shard_as(out.temp_path(), back.path(), shard);
    sqlite3* a = reg::open_db(copy, SQLITE_OPEN_READONLY);
    sqlite3* b = nullptr;
    std::string diff;
    try {
      b = reg::open_db(back.path(), SQLITE_OPEN_READONLY);
      diff = reg::first_difference(a, b);
    } catch (...) {
      reg::close_db(a);
      if (b) reg::close_db(b);
      throw;
    }
    reg::close_db(a);
    reg::close_db(b);
    if (!diff.empty()) throw Error("columnar shard '" + shard + "' does not read back as the registry (" + diff + "); not written");
  } else {
    reg::gzip_file(copy, out.temp_path());
  }
  // link() fails if the shard appeared meanwhile, so a shard is never replaced.
  if (reg::file_exists(shard)) throw refuse();
  try {
    out.commit_new();
  } catch (const Error& e) {
    if (reg::file_exists(shard)) throw refuse();
    throw Error("cannot create shard: " + std::string(e.what()));
  }
}

// pack_shard's `compact`: the measured values to the digits they can tell (a row's noise is 0.1 %
// or more) and timestamps to the second; keys, clocks, counts and provenance unchanged.
void compact_values(sqlite3* db) {
  reg::exec(db,
            "UPDATE measurements SET mean_us = CAST(printf('%.6g', mean_us) AS REAL), "
            "std_us = CAST(printf('%.3g', std_us) AS REAL), tflops = CAST(printf('%.6g', tflops) AS REAL), "
            "power_w = round(power_w, 1), max_rel_err = CAST(printf('%.3g', max_rel_err) AS REAL), "
            "started_at = CASE WHEN length(started_at) > 20 THEN substr(started_at, 1, 19) || 'Z' ELSE started_at END, "
            "finished_at = CASE WHEN length(finished_at) > 20 THEN substr(finished_at, 1, 19) || 'Z' ELSE finished_at END");
}

// Packs a trimmed copy of the registry into `shard`: VACUUM INTO a temporary file (a compact,
// consistent copy without free pages or the WAL), `trim` deletes what the shard leaves out (and
// `compact` rounds the values), then VACUUM and compress. The shard is one self-contained file once
// decompressed, without the secondary indexes (every merge recreates them).
template <class Trim>
void pack_copy(sqlite3* src, const std::string& shard, const std::string& compression, bool compact, Trim&& trim) {
  TempPath copy = reg::temp_db("pack");
  reg::Stmt(src, "VACUUM INTO ?1").bind_all(reg::file_uri(copy.path())).run();
  sqlite3* db = reg::open_db(copy.path(), SQLITE_OPEN_READWRITE);
  try {
    reg::exec(db, "PRAGMA journal_mode=DELETE");
    reg::drop_secondary_indexes(db);
    trim(db);
    if (compact) compact_values(db);
    reg::exec(db, "VACUUM");
  } catch (...) {
    reg::close_db(db);
    throw;
  }
  reg::close_db(db);
  write_shard(copy.path(), shard, compression);
}

}  // namespace

std::vector<std::string> pack_shards(const std::string& registry_path, const std::string& out_dir, int parts,
                                     const std::string& compression, bool compact) {
  namespace fs = std::filesystem;
  if (parts < 1) throw Error("a registry is packed into at least one shard");
  const std::string ext = shard_extension(compression);
  RegistryOptions opts;
  opts.read_only = true;  // packing only reads the registry
  Registry r(registry_path, opts);
  const std::string stem = shard_stem(r.handle(), registry_path);
  std::error_code ec;
  fs::create_directories(out_dir, ec);
  if (ec) throw Error("cannot create '" + out_dir + "': " + ec.message());
  std::vector<std::string> shards;
  for (int i = 0; i < parts; ++i)
    shards.push_back(
        (fs::path(out_dir) / (stem + (parts == 1 ? "" : "_p" + std::to_string(i + 1) + "of" + std::to_string(parts)) + ext))
            .string());
  auto refuse = [](const std::string& shard) {
    return Error("shard '" + shard + "' already exists (shards are immutable: pack a new run instead)");
  };
  // The same run packed in another form is the same shard.
  for (const auto& shard : shards)
    if (const std::string existing = existing_form(shard); !existing.empty()) throw refuse(existing);

  // Group keys dealt round-robin (sorted) over the parts; every part keeps all runs and kernels.
  std::vector<std::string> keys;
  {
    reg::Stmt k(r.handle(), "SELECT key FROM groups UNION SELECT group_key FROM measurements ORDER BY 1");
    while (k.step()) keys.push_back(k.col_text(0));
  }
  for (int part = 0; part < parts; ++part) {
    const std::string& shard = shards[static_cast<size_t>(part)];
    pack_copy(r.handle(), shard, compression, compact, [&](sqlite3* db) {
      if (parts == 1) return;
      reg::exec(db, "CREATE TEMP TABLE keep(key TEXT PRIMARY KEY)");
      reg::Stmt ins(db, "INSERT INTO keep(key) VALUES(?1)");
      for (size_t i = static_cast<size_t>(part); i < keys.size(); i += static_cast<size_t>(parts)) {
        ins.bind_all(keys[i]).run();
        ins.reset();
      }
      reg::exec(db, "DELETE FROM measurements WHERE group_key NOT IN (SELECT key FROM keep)");
      reg::exec(db, "DELETE FROM plan_items WHERE group_key NOT IN (SELECT key FROM keep)");
      reg::exec(db, "DELETE FROM groups WHERE key NOT IN (SELECT key FROM keep)");
      reg::exec(db, "DROP TABLE keep");
    });
  }
  return shards;
}

PackByRun pack_shards_by_run(const std::string& registry_path, const std::string& out_dir, const std::string& compression,
                             bool compact) {
  namespace fs = std::filesystem;
  const std::string ext = shard_extension(compression);
  RegistryOptions opts;
  opts.read_only = true;
  Registry r(registry_path, opts);
  // Runs with rows, oldest first; a run without rows (stopped before its first) has no shard of its
  // own: its run row goes with the leftovers below.
  struct Run {
    std::string uuid, stem;
  };
  std::vector<Run> runs;
  {
    reg::Stmt s(r.handle(),
                "SELECT uuid, started_at FROM runs WHERE uuid IN (SELECT run_uuid FROM measurements UNION "
                "SELECT run_uuid FROM profiles) ORDER BY started_at, rowid");
    while (s.step()) runs.push_back({s.col_text(0), run_stem(s.col_text(0), s.col_text(1))});
  }
  if (runs.empty()) throw Error("registry '" + registry_path + "' has no run with rows to pack");
  std::error_code ec;
  fs::create_directories(out_dir, ec);
  if (ec) throw Error("cannot create '" + out_dir + "': " + ec.message());
  PackByRun result;
  std::vector<const Run*> todo;
  for (const Run& run : runs) {
    const std::string shard = (fs::path(out_dir) / (run.stem + ext)).string();
    if (const std::string existing = existing_form(shard); !existing.empty()) result.skipped.push_back({run.uuid, existing});
    else todo.push_back(&run);
  }
  for (size_t i = 0; i < todo.size(); ++i) {
    const Run& run = *todo[i];
    const bool last = i + 1 == todo.size();
    const std::string shard = (fs::path(out_dir) / (run.stem + ext)).string();
    pack_copy(r.handle(), shard, compression, compact, [&](sqlite3* db) {
      reg::exec(db, "CREATE TEMP TABLE run(uuid TEXT PRIMARY KEY)");
      reg::Stmt(db, "INSERT INTO run(uuid) VALUES(?1)").bind_all(run.uuid).run();
      // What the rows of the runs with rows reference (groups by key, kernels by ID); the last shard
      // written also keeps whatever no run's rows reference (groups listed but never measured, kernels
      // compiled but never measured, runs without rows), so the shards together hold the registry.
      reg::exec(db,
                "CREATE TEMP TABLE used_keys AS SELECT group_key AS key FROM measurements UNION "
                "SELECT group_key FROM profiles");
      reg::exec(db,
                "CREATE TEMP TABLE used_kernels AS SELECT kernel_id FROM measurements UNION "
                "SELECT kernel_id FROM profiles");
      reg::exec(db,
                "CREATE TEMP TABLE used_runs AS SELECT run_uuid AS uuid FROM measurements UNION "
                "SELECT run_uuid FROM profiles");
      reg::exec(db, "DELETE FROM measurements WHERE run_uuid NOT IN (SELECT uuid FROM temp.run)");
      reg::exec(db, "DELETE FROM profiles WHERE run_uuid NOT IN (SELECT uuid FROM temp.run)");
      const std::string keys = "SELECT group_key FROM measurements UNION SELECT group_key FROM profiles";
      const std::string kernels = "SELECT kernel_id FROM measurements UNION SELECT kernel_id FROM profiles";
      if (last) {
        reg::exec(db, "DELETE FROM runs WHERE uuid NOT IN (SELECT uuid FROM temp.run) AND uuid IN (SELECT uuid FROM temp.used_runs)");
        reg::exec(db, "DELETE FROM groups WHERE key IN (SELECT key FROM temp.used_keys) AND key NOT IN (" + keys + ")");
        reg::exec(db, "DELETE FROM plan_items WHERE group_key IN (SELECT key FROM temp.used_keys) AND group_key NOT IN (" +
                          keys + ")");
        reg::exec(db, "DELETE FROM kernels WHERE kernel_id IN (SELECT kernel_id FROM temp.used_kernels) AND kernel_id "
                      "NOT IN (" + kernels + ")");
      } else {
        reg::exec(db, "DELETE FROM runs WHERE uuid NOT IN (SELECT uuid FROM temp.run)");
        reg::exec(db, "DELETE FROM groups WHERE key NOT IN (" + keys + ")");
        reg::exec(db, "DELETE FROM plan_items WHERE group_key NOT IN (" + keys + ")");
        reg::exec(db, "DELETE FROM kernels WHERE kernel_id NOT IN (" + kernels + ")");
      }
      reg::exec(db, "DROP TABLE temp.run");
      reg::exec(db, "DROP TABLE temp.used_keys");
      reg::exec(db, "DROP TABLE temp.used_kernels");
      reg::exec(db, "DROP TABLE temp.used_runs");
    });
    result.written.push_back({run.uuid, shard});
  }
  return result;
}

std::string pack_shard(const std::string& registry_path, const std::string& out_dir, const std::string& compression,
                       bool compact) {
  return pack_shards(registry_path, out_dir, 1, compression, compact).front();
}

}  // namespace cks
