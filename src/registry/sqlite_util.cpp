#include "registry/sqlite_util.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <lzma.h>
#include <zlib.h>

#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <functional>
#include <thread>
#include <vector>

#include "cks/common.hpp"
#include "registry/columnar.hpp"

namespace cks::reg {

void throw_sqlite(sqlite3* db, std::string_view what) {
  throw Error(std::string(what) + ": " + (db ? sqlite3_errmsg(db) : "out of memory"));
}

void exec(sqlite3* db, const std::string& sql) {
  char* msg = nullptr;
  if (sqlite3_exec(db, sql.c_str(), nullptr, nullptr, &msg) != SQLITE_OK) {
    std::string m = msg ? msg : sqlite3_errmsg(db);
    sqlite3_free(msg);
    throw Error("registry: " + m);
  }
}

Stmt::Stmt(sqlite3* db, std::string_view sql) : db_(db) {
  if (sqlite3_prepare_v3(db, sql.data(), static_cast<int>(sql.size()), SQLITE_PREPARE_PERSISTENT, &st_,
                         nullptr) != SQLITE_OK)
    throw_sqlite(db, "registry: preparing '" + std::string(sql.substr(0, 60)) + "'");
}

Stmt::~Stmt() {
  if (st_) sqlite3_finalize(st_);
}

Stmt& Stmt::bind(int i, std::string_view v) {
  if (sqlite3_bind_text(st_, i, v.data(), static_cast<int>(v.size()), SQLITE_TRANSIENT) != SQLITE_OK)
    throw_sqlite(db_, "registry: bind");
  return *this;
}
Stmt& Stmt::bind(int i, int64_t v) {
  if (sqlite3_bind_int64(st_, i, v) != SQLITE_OK) throw_sqlite(db_, "registry: bind");
  return *this;
}
Stmt& Stmt::bind(int i, double v) {
  if (sqlite3_bind_double(st_, i, v) != SQLITE_OK) throw_sqlite(db_, "registry: bind");
  return *this;
}

bool Stmt::step() {
  int rc = sqlite3_step(st_);
  if (rc == SQLITE_ROW) return true;
  if (rc == SQLITE_DONE) return false;
  std::string msg = sqlite3_errmsg(db_);
  sqlite3_reset(st_);
  throw Error("registry: " + msg);
}

void Stmt::run() {
  while (step()) {
  }
}

void Stmt::reset() {
  sqlite3_reset(st_);
  sqlite3_clear_bindings(st_);
}

bool Stmt::is_null(int c) const { return sqlite3_column_type(st_, c) == SQLITE_NULL; }
int64_t Stmt::col_int(int c) const { return sqlite3_column_int64(st_, c); }
double Stmt::col_double(int c) const { return sqlite3_column_double(st_, c); }
std::string Stmt::col_text(int c) const {
  auto p = reinterpret_cast<const char*>(sqlite3_column_text(st_, c));
  return p ? std::string(p, static_cast<size_t>(sqlite3_column_bytes(st_, c))) : std::string();
}
int Stmt::columns() const { return sqlite3_column_count(st_); }
std::string Stmt::column_name(int c) const { return sqlite3_column_name(st_, c); }

Stmt& StmtCache::get(const std::string& sql) {
  auto it = stmts_.find(sql);
  if (it == stmts_.end()) it = stmts_.emplace(sql, Stmt(db_, sql)).first;
  it->second.reset();
  return it->second;
}

Transaction::Transaction(sqlite3* db) : db_(db) { exec(db, "BEGIN IMMEDIATE"); }
Transaction::~Transaction() {
  if (!done_) sqlite3_exec(db_, "ROLLBACK", nullptr, nullptr, nullptr);
}
void Transaction::commit() {
  exec(db_, "COMMIT");
  done_ = true;
}

int64_t query_int(sqlite3* db, const std::string& sql) {
  Stmt s(db, sql);
  return s.step() ? s.col_int(0) : 0;
}

std::string file_uri(const std::string& path, std::string_view query) {
  static const char* hex = "0123456789ABCDEF";
  std::string out = "file:";
  // An absolute path keeps its leading '/' ("file:/a/b"); a relative one stays relative.
  for (unsigned char c : path) {
    if (std::isalnum(c) || c == '/' || c == '-' || c == '_' || c == '.' || c == '~') {
      out += static_cast<char>(c);
    } else {
      out += '%';
      out += hex[c >> 4];
      out += hex[c & 15];
    }
  }
  if (!query.empty()) out += "?" + std::string(query);
  return out;
}

sqlite3* open_db(const std::string& path, int flags) {
  sqlite3* db = nullptr;
  int rc = sqlite3_open_v2(file_uri(path).c_str(), &db, flags | SQLITE_OPEN_URI, nullptr);
  if (rc != SQLITE_OK) {
    std::string msg = db ? sqlite3_errmsg(db) : "out of memory";
    sqlite3_close_v2(db);
    throw Error("cannot open registry '" + path + "': " + msg);
  }
  sqlite3_extended_result_codes(db, 1);
  return db;
}

void close_db(sqlite3* db) { sqlite3_close_v2(db); }

void backup_to_file(sqlite3* src, const std::string& path) {
  sqlite3* dst = open_db(path, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOFOLLOW);
  try {
    sqlite3_backup* b = sqlite3_backup_init(dst, "main", src, "main");
    if (!b) throw_sqlite(dst, "registry backup to '" + path + "'");
    int rc = sqlite3_backup_step(b, -1);  // all pages in one step: one read snapshot
    sqlite3_backup_finish(b);
    if (rc != SQLITE_DONE) throw_sqlite(dst, "registry backup to '" + path + "'");
    // The copy inherits WAL mode; a rollback journal makes it one self-contained file.
    exec(dst, "PRAGMA journal_mode=DELETE");
  } catch (...) {
    close_db(dst);
    throw;
  }
  close_db(dst);
  fsync_path(path);
}

bool file_exists(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0;
}

void fsync_path(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw Error("cannot open '" + path + "' to sync it: " + std::strerror(errno));
  int rc = ::fsync(fd);
  int err = errno;
  ::close(fd);
  if (rc != 0) throw Error("cannot sync '" + path + "': " + std::strerror(err));
}

void fsync_parent_dir(const std::string& path) {
  auto parent = std::filesystem::path(path).parent_path();
  fsync_path(parent.empty() ? "." : parent.string());
}

void remove_db_files(const std::string& path) {
  for (const char* suffix : {"", "-wal", "-shm", "-journal"}) ::unlink((path + suffix).c_str());
}

TempPath temp_db(const std::string& stem) { return make_temp("", "cks-" + stem + "-", ".db", true); }

namespace {
constexpr size_t kChunk = 1 << 20;

// Owns a gzFile; gzclose reports write errors that must not be ignored.
struct GzFile {
  gzFile f;
  ~GzFile() {
    if (f) gzclose(f);
  }
  int close() {
    int rc = gzclose(f);
    f = nullptr;
    return rc;
  }
};

struct StdFile {
  FILE* f;
  ~StdFile() {
    if (f) std::fclose(f);
  }
};
}  // namespace

void gzip_file(const std::string& src, const std::string& dest) {
  StdFile in{std::fopen(src.c_str(), "rb")};
  if (!in.f) throw Error("cannot read '" + src + "': " + std::strerror(errno));
  GzFile out{gzopen(dest.c_str(), "wb6")};
  if (!out.f) throw Error("cannot write '" + dest + "'");
  std::vector<char> buf(kChunk);
  size_t got;
  while ((got = std::fread(buf.data(), 1, buf.size(), in.f)) > 0)
    if (gzwrite(out.f, buf.data(), static_cast<unsigned>(got)) != static_cast<int>(got))
      throw Error("cannot write '" + dest + "'");
  if (std::ferror(in.f)) throw Error("cannot read '" + src + "'");
  if (out.close() != Z_OK) throw Error("cannot write '" + dest + "'");
  fsync_path(dest);
}

void gunzip_file(const std::string& src, const std::string& dest) {
  // An empty file reads as an empty stream (an empty registry): refuse it like any corrupt shard.
  struct stat st;
  if (::stat(src.c_str(), &st) != 0) throw Error("cannot read shard '" + src + "': " + std::strerror(errno));
  if (st.st_size == 0) throw Error("corrupt shard '" + src + "': empty file");
  GzFile in{gzopen(src.c_str(), "rb")};
  if (!in.f) throw Error("cannot read shard '" + src + "': " + std::strerror(errno));
  StdFile out{std::fopen(dest.c_str(), "wb")};
  if (!out.f) throw Error("cannot write '" + dest + "': " + std::strerror(errno));
  std::vector<char> buf(kChunk);
  int got;
  bool first = true;
  while ((got = gzread(in.f, buf.data(), static_cast<unsigned>(buf.size()))) > 0) {
    // zlib passes a file that is not gzip through unchanged ("transparent" reading).
    if (first && gzdirect(in.f)) throw Error("corrupt shard '" + src + "': not a gzip file");
    first = false;
    if (std::fwrite(buf.data(), 1, static_cast<size_t>(got), out.f) != static_cast<size_t>(got))
      throw Error("cannot write '" + dest + "': " + std::strerror(errno));
  }
  if (got < 0) {
    int errnum = 0;
    throw Error("corrupt shard '" + src + "': " + gzerror(in.f, &errnum));
  }
  if (in.close() != Z_OK) throw Error("corrupt shard '" + src + "' (truncated or bad checksum)");
  if (std::fclose(out.f) != 0) {
    out.f = nullptr;
    throw Error("cannot write '" + dest + "': " + std::strerror(errno));
  }
  out.f = nullptr;
}

namespace {

struct Lzma {
  lzma_stream s = LZMA_STREAM_INIT;
  ~Lzma() { lzma_end(&s); }
};

// Streams `in` through the coder `z` into `out`; `bad` names a failure of the coder.
void lzma_pump(Lzma& z, std::FILE* in, std::FILE* out, const std::string& src, const std::string& dest,
               const std::function<std::string(lzma_ret)>& bad) {
  std::vector<uint8_t> ibuf(kChunk), obuf(kChunk);
  lzma_action action = LZMA_RUN;
  z.s.next_in = nullptr;
  z.s.avail_in = 0;
  z.s.next_out = obuf.data();
  z.s.avail_out = obuf.size();
  for (;;) {
    if (z.s.avail_in == 0 && action == LZMA_RUN) {
      z.s.next_in = ibuf.data();
      z.s.avail_in = std::fread(ibuf.data(), 1, ibuf.size(), in);
      if (std::ferror(in)) throw Error("cannot read '" + src + "': " + std::strerror(errno));
      if (std::feof(in)) action = LZMA_FINISH;
    }
    const lzma_ret r = lzma_code(&z.s, action);
    if (z.s.avail_out == 0 || r == LZMA_STREAM_END) {
      const size_t n = obuf.size() - z.s.avail_out;
      if (std::fwrite(obuf.data(), 1, n, out) != n) throw Error("cannot write '" + dest + "': " + std::strerror(errno));
      z.s.next_out = obuf.data();
      z.s.avail_out = obuf.size();
    }
    if (r == LZMA_STREAM_END) return;
    if (r != LZMA_OK) throw Error(bad(r));
  }
}

std::string lzma_error(lzma_ret r) {
  switch (r) {
    case LZMA_MEM_ERROR: return "out of memory";
    case LZMA_FORMAT_ERROR: return "not an xz file";
    case LZMA_OPTIONS_ERROR: return "unsupported xz options";
    case LZMA_DATA_ERROR: return "corrupt data";
    case LZMA_BUF_ERROR: return "truncated";
    default: return "xz error " + std::to_string(static_cast<int>(r));
  }
}

}  // namespace

void xz_file(const std::string& src, const std::string& dest, uint32_t preset) {
  StdFile in{std::fopen(src.c_str(), "rb")};
  if (!in.f) throw Error("cannot read '" + src + "': " + std::strerror(errno));
  StdFile out{std::fopen(dest.c_str(), "wb")};
  if (!out.f) throw Error("cannot write '" + dest + "': " + std::strerror(errno));
  Lzma z;
  lzma_mt mt{};
  mt.threads = std::max(1u, std::min(4u, std::thread::hardware_concurrency()));
  mt.preset = preset;
  mt.check = LZMA_CHECK_CRC64;
  if (const lzma_ret r = lzma_stream_encoder_mt(&z.s, &mt); r != LZMA_OK)
    throw Error("cannot compress '" + src + "': " + lzma_error(r));
  lzma_pump(z, in.f, out.f, src, dest, [&](lzma_ret r) { return "cannot compress '" + src + "': " + lzma_error(r); });
  if (std::fclose(out.f) != 0) {
    out.f = nullptr;
    throw Error("cannot write '" + dest + "': " + std::strerror(errno));
  }
  out.f = nullptr;
  fsync_path(dest);
}

void unxz_file(const std::string& src, const std::string& dest) {
  struct stat st;
  if (::stat(src.c_str(), &st) != 0) throw Error("cannot read shard '" + src + "': " + std::strerror(errno));
  if (st.st_size == 0) throw Error("corrupt shard '" + src + "': empty file");
  StdFile in{std::fopen(src.c_str(), "rb")};
  if (!in.f) throw Error("cannot read shard '" + src + "': " + std::strerror(errno));
  StdFile out{std::fopen(dest.c_str(), "wb")};
  if (!out.f) throw Error("cannot write '" + dest + "': " + std::strerror(errno));
  Lzma z;
  if (const lzma_ret r = lzma_stream_decoder(&z.s, UINT64_MAX, 0); r != LZMA_OK)
    throw Error("cannot read shard '" + src + "': " + lzma_error(r));
  lzma_pump(z, in.f, out.f, src, dest, [&](lzma_ret r) { return "corrupt shard '" + src + "': " + lzma_error(r); });
  if (std::fclose(out.f) != 0) {
    out.f = nullptr;
    throw Error("cannot write '" + dest + "': " + std::strerror(errno));
  }
  out.f = nullptr;
}

bool is_shard_name(std::string_view name) {
  return ends_with(name, ".db.gz") || ends_with(name, ".db.xz") || ends_with(name, ".cols.xz");
}

void decompress_shard_as(const std::string& src, const std::string& dest, const std::string& name) {
  if (ends_with(name, ".cols.xz")) {
    TempPath text = make_temp("", "cks-cols-", ".jsonl");
    unxz_file(src, text.path());
    read_columnar(text.path(), dest, name);
  } else if (ends_with(name, ".xz")) {
    unxz_file(src, dest);
  } else {
    gunzip_file(src, dest);
  }
}

void decompress_shard(const std::string& src, const std::string& dest) { decompress_shard_as(src, dest, src); }

bool ends_with(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

}  // namespace cks::reg
