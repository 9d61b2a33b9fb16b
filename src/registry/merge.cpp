// Merging registries and shards: every table is keyed on a natural key, so a merge is an
// idempotent union (merging a source twice adds nothing).
#include <algorithm>
#include <filesystem>
#include <memory>

#include "cks/registry.hpp"
#include "registry/merge.hpp"
#include "registry/schema.hpp"
#include "registry/sqlite_util.hpp"

namespace cks {

using reg::Stmt;

namespace {

namespace fs = std::filesystem;

// Comma-separated column names of `table` in the destination (explicit lists keep the merge
// correct even if two files created a table's columns in different orders).
std::string column_list(sqlite3* db, const std::string& table) {
  Stmt s(db, "SELECT name FROM pragma_table_info(?1) ORDER BY cid");
  s.bind_all(table);
  std::string cols;
  while (s.step()) cols += (cols.empty() ? "" : ", ") + s.col_text(0);
  return cols;
}

std::string update_all(sqlite3* db, const std::string& table) {
  Stmt s(db, "SELECT name FROM pragma_table_info(?1) ORDER BY cid");
  s.bind_all(table);
  std::string set;
  while (s.step()) set += (set.empty() ? "" : ", ") + s.col_text(0) + " = excluded." + s.col_text(0);
  return set;
}

// One INSERT ... SELECT per table, from the attached `src`.
std::vector<std::pair<std::string, std::string>> merge_statements(sqlite3* db, bool plan_items) {
  auto copy = [&](const std::string& table, const std::string& conflict) {
    const std::string cols = column_list(db, table);
    return std::pair(table, "INSERT INTO main." + table + "(" + cols + ") SELECT " + cols + " FROM src." + table +
                                " WHERE true " + conflict);
  };
  std::vector<std::pair<std::string, std::string>> out{
      // A run seen again (a later checkpoint of it) only brings a later end time.
      copy("runs", "ON CONFLICT(uuid) DO UPDATE SET ended_at = excluded.ended_at "
                   "WHERE excluded.ended_at > runs.ended_at"),
      copy("groups", "ON CONFLICT DO NOTHING"),
      // A successful compile beats a failed one; otherwise the newest compile wins.
      copy("kernels", "ON CONFLICT(kernel_id) DO UPDATE SET " + update_all(db, "kernels") +
                          " WHERE (excluded.status = 'ok', excluded.updated_at) > (kernels.status = 'ok', "
                          "kernels.updated_at)"),
      copy("measurements", "ON CONFLICT DO NOTHING"),
      copy("profiles", "ON CONFLICT DO NOTHING"),
  };
  if (plan_items) out.push_back(copy("plan_items", "ON CONFLICT DO NOTHING"));
  return out;
}

// A source ready to ATTACH: a shard (.db.xz, .db.gz, .cols.xz) is decoded, an older schema migrated, both on a
// temporary copy (sources are never modified: a .db source is only ever opened read-only).
struct PreparedSource {
  std::string path;
  TempPath temp;
};

PreparedSource prepare_source(const std::string& src) {
  if (!reg::file_exists(src)) throw Error("no registry or shard at '" + src + "'");
  PreparedSource p{src, {}};
  if (reg::ends_with(src, ".gz") || reg::ends_with(src, ".xz")) {
    p.temp = reg::temp_db("shard");
    reg::decompress_shard(src, p.temp.path());
    p.path = p.temp.path();
  }
  int version;
  {
    sqlite3* db = reg::open_db(p.path, SQLITE_OPEN_READONLY);
    try {
      version = reg::checked_schema_version(db, src, false);
    } catch (...) {
      reg::close_db(db);
      throw;
    }
    if (version < reg::current_schema_version() && p.temp.empty()) {
      TempPath copy = reg::temp_db("migrate");
      try {
        reg::backup_to_file(db, copy.path());
      } catch (...) {
        reg::close_db(db);
        throw;
      }
      p.temp = std::move(copy);
      p.path = p.temp.path();
    }
    reg::close_db(db);
  }
  if (version < reg::current_schema_version()) Registry migrated(p.path);  // migrates the temporary copy on open
  return p;
}

// Merges one prepared source into `db` in one transaction; adds the new rows to `stats`.
void merge_one(sqlite3* db, const std::string& src_path, bool plan_items, MergeStats& stats) {
  // Read-only: attaching a source must never write it (nor checkpoint its WAL on detach).
  Stmt attach(db, "ATTACH DATABASE ?1 AS src");
  attach.bind_all(reg::file_uri(src_path, "mode=ro")).run();
  try {
    const auto statements = merge_statements(db, plan_items);
    reg::Transaction tx(db);
    for (const auto& [table, sql] : statements) {
      const int64_t before = reg::query_int(db, "SELECT count(*) FROM main." + table);
      reg::exec(db, sql);
      const long added = static_cast<long>(reg::query_int(db, "SELECT count(*) FROM main." + table) - before);
      if (table == "runs") stats.runs += added;
      else if (table == "groups") stats.groups += added;
      else if (table == "kernels") stats.kernels += added;
      else if (table == "plan_items") stats.plan_items += added;
      else if (table == "profiles") stats.profiles += added;
      else stats.measurements += added;
    }
    tx.commit();
  } catch (...) {
    sqlite3_exec(db, "DETACH DATABASE src", nullptr, nullptr, nullptr);
    throw;
  }
  reg::exec(db, "DETACH DATABASE src");
}

MergeStats merge_into(Registry& out, const std::vector<std::string>& sources, bool plan_items = true) {
  // Measurement uuids are random, so their index is written all over: a large page cache
  // (in KiB when negative) keeps big merges from thrashing.
  reg::exec(out.handle(), "PRAGMA cache_size=-262144");
  MergeStats stats;
  std::error_code ec;
  for (size_t i = 0; i < sources.size(); ++i) {
    if (fs::equivalent(sources[i], out.path(), ec))
      throw Error("cannot merge registry '" + sources[i] + "' into itself");
    PreparedSource p = prepare_source(sources[i]);
    merge_one(out.handle(), p.path, plan_items, stats);
    progress("merging", i + 1, sources.size());
  }
  return stats;
}

}  // namespace

MergeStats merge_registries(const std::string& dest, const std::vector<std::string>& sources, bool plan_items) {
  RegistryOptions o;
  o.exclusive = true;
  Registry out(dest, o);
  return merge_into(out, sources, plan_items);
}

namespace reg {

void merge_shards(std::vector<std::string> shards, const std::string& dest) {
  if (shards.empty()) throw Error("no shards to merge");
  // The largest shard, decompressed, is the base the others merge into (copying is much
  // cheaper than re-inserting its rows); ties broken by name for a deterministic row order.
  std::sort(shards.begin(), shards.end(), [](const std::string& a, const std::string& b) {
    const auto sa = fs::file_size(a), sb = fs::file_size(b);
    return sa != sb ? sa > sb : a < b;
  });
  reg::decompress_shard(shards.front(), dest);
  {
    // The base must be a registry like every other shard (an empty one would pass for an empty
    // registry); an older one is migrated, a newer one refused.
    sqlite3* db = reg::open_db(dest, SQLITE_OPEN_READONLY);
    try {
      reg::checked_schema_version(db, shards.front(), false);
    } catch (...) {
      reg::close_db(db);
      throw;
    }
    reg::close_db(db);
  }
  Registry out(dest);
  reg::exec(out.handle(), "PRAGMA synchronous=OFF");  // a copy being built: made durable by its owner, if at all
  merge_into(out, std::vector<std::string>(shards.begin() + 1, shards.end()));
  reg::ensure_secondary_indexes(out.handle());  // shards are packed without them (faster merged into)
}

}  // namespace reg

std::unique_ptr<DataSource> open_data(const std::string& registry, const std::string& data_dir) {
  if (!registry.empty()) {
    if (fs::is_directory(registry))
      throw Error("--registry expects a registry file; '" + registry + "' is a directory (use --data)");
    if (!reg::file_exists(registry)) throw Error("no registry at '" + registry + "'");
    return std::make_unique<DataSource>(registry);
  }
  const std::string dir = data_dir.empty() ? kDefaultShardDir : data_dir;
  if (!fs::is_directory(dir)) {
    if (data_dir.empty()) throw Error("no data: pass --registry DB or --data DIR (" + dir + " not found)");
    throw Error("--data expects a directory of shards; '" + dir + "' is not one");
  }
  return std::make_unique<DataSource>(dir);
}

}  // namespace cks
