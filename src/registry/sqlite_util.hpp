// Internal helpers of the registry: thin RAII over the SQLite C API, and the file
// operations durability depends on (fsync, atomic rename, gzip).
#pragma once
#include <sqlite3.h>

#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>

#include "cks/files.hpp"

namespace cks::reg {

// Throws cks::Error "<what>: <sqlite message>".
[[noreturn]] void throw_sqlite(sqlite3* db, std::string_view what);
void exec(sqlite3* db, const std::string& sql);

// An owned prepared statement. bind() indices are 1-based, col() indices 0-based.
class Stmt {
 public:
  Stmt(sqlite3* db, std::string_view sql);
  ~Stmt();
  Stmt(Stmt&& o) noexcept : db_(o.db_), st_(o.st_) { o.st_ = nullptr; }
  Stmt(const Stmt&) = delete;
  Stmt& operator=(const Stmt&) = delete;

  Stmt& bind(int i, std::string_view v);
  Stmt& bind(int i, const std::string& v) { return bind(i, std::string_view(v)); }
  Stmt& bind(int i, const char* v) { return bind(i, std::string_view(v)); }
  Stmt& bind(int i, int64_t v);
  Stmt& bind(int i, int v) { return bind(i, static_cast<int64_t>(v)); }
  Stmt& bind(int i, uint64_t v) { return bind(i, static_cast<int64_t>(v)); }  // stored bit-cast
  Stmt& bind(int i, double v);
  template <class... A>
  Stmt& bind_all(const A&... a) {
    int i = 0;
    (bind(++i, a), ...);
    return *this;
  }

  bool step();  // true: a row is ready; false: done
  void run();   // steps a statement that returns no rows
  void reset();  // resets and clears bindings, ending any read it held

  bool is_null(int c) const;
  int64_t col_int(int c) const;
  double col_double(int c) const;
  std::string col_text(int c) const;
  int columns() const;
  std::string column_name(int c) const;
  sqlite3_stmt* get() const { return st_; }

 private:
  sqlite3* db_;
  sqlite3_stmt* st_ = nullptr;
};

// Prepared statements keyed by their SQL text, prepared once per connection.
class StmtCache {
 public:
  explicit StmtCache(sqlite3* db) : db_(db) {}
  // The statement, reset; the caller resets it again when done (see Use).
  Stmt& get(const std::string& sql);

 private:
  sqlite3* db_;
  std::unordered_map<std::string, Stmt> stmts_;
};

// Resets a cached statement at scope exit so a finished SELECT never pins a WAL snapshot.
class Use {
 public:
  explicit Use(Stmt& s) : s_(s) {}
  ~Use() { s_.reset(); }
  Stmt* operator->() { return &s_; }
  Stmt& operator*() { return s_; }

 private:
  Stmt& s_;
};

// BEGIN IMMEDIATE (takes the write lock up front, so busy_timeout applies to it) ... COMMIT;
// rolls back if destroyed uncommitted.
class Transaction {
 public:
  explicit Transaction(sqlite3* db);
  ~Transaction();
  void commit();

 private:
  sqlite3* db_;
  bool done_ = false;
};

// One scalar from a query with no parameters (0 when it returns no row).
int64_t query_int(sqlite3* db, const std::string& sql);

// A "file:" URI naming `path` exactly (every character but unreserved ones and '/'
// percent-encoded), with `query` ("mode=ro", ...) appended when not empty.
std::string file_uri(const std::string& path, std::string_view query = "");
// Opens a connection (throws Error). flags: SQLITE_OPEN_* values. The path is passed as a URI
// (file_uri), so a name that looks like one ("file:x?mode=rwc") still means that file; ATTACH
// on the connection takes URIs too.
sqlite3* open_db(const std::string& path, int flags);
void close_db(sqlite3* db);

// Copies the whole database `src` into a new file `path` through the backup API (one pass,
// so the copy is one consistent snapshot even while other connections write), switches the
// copy to a self-contained rollback journal and fsyncs it.
void backup_to_file(sqlite3* src, const std::string& path);

// File helpers (throw Error).
bool file_exists(const std::string& path);
void fsync_path(const std::string& path);       // file or directory
void fsync_parent_dir(const std::string& path);
void remove_db_files(const std::string& path);  // path, path-wal, path-shm, path-journal
// A new empty temporary database "$TMPDIR/cks-<stem>-XXXXXX.db", removed with its sidecar
// files when the returned object goes, or by a stop signal (cks/files.hpp).
TempPath temp_db(const std::string& stem);
void gzip_file(const std::string& src, const std::string& dest);
// Throws Error "corrupt shard '<src>': ..." for an empty file, one that is not gzip, or a
// truncated or corrupt stream.
void gunzip_file(const std::string& src, const std::string& dest);
// xz (liblzma, multi-threaded, `preset` 0-9 | LZMA_PRESET_EXTREME): shards since session 14, about
// half the size of gzip on registries (lease 17: 4.3 MB against 8.4 MB).
void xz_file(const std::string& src, const std::string& dest, uint32_t preset);
// The same errors as gunzip_file for an empty, foreign, truncated or corrupt stream.
void unxz_file(const std::string& src, const std::string& dest);
// A shard's file name: *.db.gz, *.db.xz or *.cols.xz (columnar, registry/columnar.hpp).
bool is_shard_name(std::string_view name);
// The shard's registry at `dest`: gunzip_file or unxz_file, by the name's suffix, or for a
// columnar shard unxz_file and read_columnar.
void decompress_shard(const std::string& src, const std::string& dest);
// The same for the file `src` read as the shard named `name` (its form by name's suffix; errors
// name it): a shard before it is renamed into place.
void decompress_shard_as(const std::string& src, const std::string& dest, const std::string& name);
bool ends_with(std::string_view s, std::string_view suffix);

}  // namespace cks::reg
