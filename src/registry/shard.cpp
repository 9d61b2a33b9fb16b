// Packing a registry into an immutable, compressed shard for data/shards/.
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

#include "cks/registry.hpp"
#include "registry/sqlite_util.hpp"

namespace cks {

namespace {

// "<YYYYMMDD>_<first 8 hex of the uuid>.db.gz" of the registry's latest run.
std::string shard_name(sqlite3* db, const std::string& registry_path) {
  reg::Stmt s(db, "SELECT uuid, started_at FROM runs ORDER BY started_at DESC, uuid DESC LIMIT 1");
  if (!s.step()) throw Error("registry '" + registry_path + "' has no runs to pack");
  const std::string uuid = s.col_text(0), started = s.col_text(1);
  // started_at is ISO-8601 "YYYY-MM-DDT..."
  if (started.size() < 10 || started[4] != '-' || started[7] != '-' || uuid.size() < 8)
    throw Error("run '" + uuid + "' has a malformed start time '" + started + "'; cannot name its shard");
  return started.substr(0, 4) + started.substr(5, 2) + started.substr(8, 2) + "_" + uuid.substr(0, 8) + ".db.gz";
}

}  // namespace

std::string pack_shard(const std::string& registry_path, const std::string& out_dir) {
  namespace fs = std::filesystem;
  RegistryOptions opts;
  opts.create = false;
  Registry r(registry_path, opts);
  const std::string name = shard_name(r.handle(), registry_path);
  std::error_code ec;
  fs::create_directories(out_dir, ec);
  if (ec) throw Error("cannot create '" + out_dir + "': " + ec.message());
  const std::string shard = (fs::path(out_dir) / name).string();
  auto refuse = [&] {
    return Error("shard '" + shard + "' already exists (shards are immutable: pack a new run instead)");
  };
  if (reg::file_exists(shard)) throw refuse();

  // VACUUM INTO: a compact, consistent copy without free pages or the WAL.
  reg::TempDb copy(reg::make_temp_file("pack", ".db"));
  reg::Stmt(r.handle(), "VACUUM INTO ?1").bind_all(copy.path).run();
  {
    sqlite3* db = reg::open_db(copy.path, SQLITE_OPEN_READWRITE);
    try {
      reg::exec(db, "PRAGMA journal_mode=DELETE");  // one self-contained file once decompressed
    } catch (...) {
      reg::close_db(db);
      throw;
    }
    reg::close_db(db);
  }

  const std::string tmp = shard + ".tmp";
  ::unlink(tmp.c_str());
  reg::gzip_file(copy.path, tmp);
  // link() fails if the shard appeared meanwhile, so a shard is never replaced.
  if (::link(tmp.c_str(), shard.c_str()) != 0) {
    const int err = errno;
    ::unlink(tmp.c_str());
    if (err == EEXIST) throw refuse();
    throw Error("cannot create shard '" + shard + "': " + std::strerror(err));
  }
  ::unlink(tmp.c_str());
  reg::fsync_parent_dir(shard);
  return shard;
}

}  // namespace cks
