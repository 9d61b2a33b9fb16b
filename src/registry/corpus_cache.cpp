// The corpus cache: a shard directory merged once into a consolidated registry that every
// reading command then opens in place (docs/registry.md, "Corpus cache").
//
// An entry "<dir>/<key>.db" is built by the same merge as an uncached read (reg::merge_shards) in
// a mkstemp file beside it, switched to a rollback journal (a read-only reader needs nothing
// beside it), made read-only (0444), fsynced and renamed into place: a reader sees no entry or a
// complete one, never a partial one. An entry is never written again: a changed shard set is a
// new key. Builders, eviction and clear hold an flock on "<dir>/.lock", so two commands that
// miss at once build the entry once (the second waits, then finds it); readers take no lock.
// Unlinking an entry (eviction, clear, rebuild) never disturbs a reader that has it open.
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "cks/registry.hpp"
#include "registry/merge.hpp"
#include "registry/schema.hpp"
#include "registry/sqlite_util.hpp"

namespace cks {

namespace {

namespace fs = std::filesystem;
using json = nlohmann::ordered_json;

// Bumped when an entry's content would differ for the same shards (not for new readers).
constexpr int kCacheFormat = 1;
// Entries kept after a build (most recently used first) unless $CKS_CORPUS_CACHE_KEEP says.
constexpr long kDefaultKeep = 2;

std::string env(const char* name) {
  const char* v = std::getenv(name);
  return v ? v : "";
}

// A note for a person watching (stderr is a terminal): building an entry of the whole corpus
// takes a minute or more once. Scripts and tests see one-line errors only.
void note(const std::string& what) {
  static const bool tty = isatty(2) || std::getenv("CKS_PROGRESS") != nullptr;
  if (tty) std::fprintf(stderr, "cks: note: %s\n", what.c_str());
}

uint32_t file_crc32(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error("cannot read shard '" + path + "': " + std::strerror(errno));
  std::vector<char> buf(1 << 20);
  uLong crc = crc32(0L, Z_NULL, 0);
  while (in) {
    in.read(buf.data(), static_cast<std::streamsize>(buf.size()));
    const auto got = in.gcount();
    if (got > 0) crc = crc32_z(crc, reinterpret_cast<const Bytef*>(buf.data()), static_cast<z_size_t>(got));
  }
  if (in.bad()) throw Error("cannot read shard '" + path + "'");
  return static_cast<uint32_t>(crc);
}

std::string iso_time(std::time_t t) {
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

// flock(2) on "<dir>/.lock" for the object's lifetime (blocking: a builder waits for another).
class CacheLock {
 public:
  explicit CacheLock(const std::string& dir) {
    const std::string path = (fs::path(dir) / ".lock").string();
    fd_ = ::open(path.c_str(), O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0644);
    if (fd_ < 0) throw Error("cannot lock the corpus cache '" + path + "': " + std::strerror(errno));
    while (::flock(fd_, LOCK_EX) != 0) {
      if (errno == EINTR) continue;
      const int err = errno;
      ::close(fd_);
      throw Error("cannot lock the corpus cache '" + path + "': " + std::strerror(err));
    }
  }
  ~CacheLock() { ::close(fd_); }
  CacheLock(const CacheLock&) = delete;
  CacheLock& operator=(const CacheLock&) = delete;

 private:
  int fd_ = -1;
};

std::string entry_path(const std::string& dir, const std::string& key) { return (fs::path(dir) / (key + ".db")).string(); }
std::string manifest_path(const std::string& dir, const std::string& key) {
  return (fs::path(dir) / (key + ".json")).string();
}

// The files of an entry: "<key>.db", its manifest "<key>.json" and what was derived from it
// ("<key>.stats-*.json", "<key>.dataset-*.bin", ...): every "<key>.*".
void remove_entry(const std::string& dir, const std::string& key) {
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    const std::string name = e.path().filename().string();
    if (name.starts_with(key + ".")) fs::remove(e.path(), ec);
  }
}

// Keeps the `keep` most recently used entries (`current` always), removes the others.
void evict(const std::string& dir, const std::string& current) {
  long keep = kDefaultKeep;
  if (const std::string v = env("CKS_CORPUS_CACHE_KEEP"); !v.empty()) {
    char* end = nullptr;
    const long n = std::strtol(v.c_str(), &end, 10);
    if (end && *end == '\0' && n >= 1) keep = n;
  }
  long kept = 1;  // `current`
  for (const auto& e : corpus_cache_entries(dir)) {
    if (e.key == current) continue;
    if (kept < keep) {
      ++kept;
      continue;
    }
    remove_entry(dir, e.key);
  }
}

void touch(const std::string& path) {
  const timespec times[2] = {{0, UTIME_OMIT}, {0, UTIME_NOW}};
  ::utimensat(AT_FDCWD, path.c_str(), times, 0);  // best effort: only the eviction order depends on it
}

// Builds the entry of `shards` under `key` (the cache lock held).
void build_entry(const std::vector<std::string>& shards, const std::string& dir, const std::string& key) {
  const auto t0 = std::chrono::steady_clock::now();
  const std::string entry = entry_path(dir, key);
  note("building the corpus cache " + entry + " from " + std::to_string(shards.size()) +
       " shards (once per shard set; later reads open it in place)");
  TempPath tmp = make_temp(dir, "." + key + ".", ".db", true);
  reg::merge_shards(shards, tmp.path());
  {
    sqlite3* db = reg::open_db(tmp.path(), SQLITE_OPEN_READWRITE);
    try {
      reg::exec(db, "PRAGMA journal_mode=DELETE");  // one self-contained file, readable read-only anywhere
    } catch (...) {
      reg::close_db(db);
      throw;
    }
    reg::close_db(db);
  }
  if (::chmod(tmp.path().c_str(), 0444) != 0)
    throw Error("cannot write the corpus cache '" + entry + "': " + std::strerror(errno));
  reg::fsync_path(tmp.path());
  remove_entry(dir, key);  // a rebuild: the old entry's stats go with it
  if (::rename(tmp.path().c_str(), entry.c_str()) != 0)
    throw Error("cannot write the corpus cache '" + entry + "': " + std::strerror(errno));
  tmp.release();
  reg::fsync_parent_dir(entry);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  json m = {{"key", key}, {"cache_format", kCacheFormat}, {"schema_version", reg::current_schema_version()},
            {"built_at", utc_now()}, {"build_seconds", seconds}, {"cks_version", CKS_VERSION},
            {"source", fs::absolute(fs::path(shards.front()).parent_path()).string()}, {"shards", json::array()}};
  for (const auto& s : shards) m["shards"].push_back(fs::path(s).filename().string());
  try {
    write_file_atomic(manifest_path(dir, key), m.dump(1) + "\n");
  } catch (const Error&) {
    // The manifest only describes the entry (cks data cache status).
  }
  note("corpus cache built in " + std::to_string(static_cast<long>(seconds + 0.5)) + " s");
}

// Identifies the running cks build (its executable's size and mtime): a stats file is kept per
// build, so a cks whose counts changed never prints another build's.
std::string build_tag() {
  struct stat st {};
  if (::stat("/proc/self/exe", &st) != 0) return "0";
  return hex64(fnv1a64(std::to_string(st.st_size) + ":" + std::to_string(st.st_mtim.tv_sec) + "." +
                       std::to_string(st.st_mtim.tv_nsec) + ":" + CKS_VERSION))
      .substr(0, 8);
}

}  // namespace

std::string corpus_cache_dir() {
  const std::string set = env("CKS_CORPUS_CACHE");
  if (set == "off" || set == "0" || set == "none") return "";
  if (!set.empty()) return set;
  if (const std::string xdg = env("XDG_CACHE_HOME"); !xdg.empty() && fs::path(xdg).is_absolute())
    return (fs::path(xdg) / "cks" / "corpus").string();
  if (const std::string home = env("HOME"); !home.empty()) return (fs::path(home) / ".cache" / "cks" / "corpus").string();
  return "";
}

std::vector<std::string> shard_files(const std::string& dir) {
  std::vector<std::string> shards;
  for (const auto& e : fs::directory_iterator(dir))
    if (e.is_regular_file() && reg::is_shard_name(e.path().filename().string())) shards.push_back(e.path().string());
  if (shards.empty()) throw Error("no shards (*.db.xz, *.db.gz, *.cols.xz) in '" + dir + "'");
  std::sort(shards.begin(), shards.end());
  return shards;
}

std::string corpus_key(const std::vector<std::string>& shards) {
  std::vector<std::pair<std::string, std::string>> rows;
  for (const auto& s : shards) {
    std::error_code ec;
    const auto size = fs::file_size(s, ec);
    if (ec) throw Error("cannot read shard '" + s + "': " + ec.message());
    char crc[16];
    std::snprintf(crc, sizeof crc, "%08x", file_crc32(s));
    rows.emplace_back(fs::path(s).filename().string(), std::to_string(size) + "\t" + crc);
  }
  std::sort(rows.begin(), rows.end());
  std::string text = "cks corpus cache " + std::to_string(kCacheFormat) + ", schema " +
                     std::to_string(reg::current_schema_version()) + "\n";
  for (const auto& [name, id] : rows) text += name + "\t" + id + "\n";
  return hex64(fnv1a64(text));
}

std::vector<CorpusCacheEntry> corpus_cache_entries(const std::string& cache_dir) {
  std::vector<std::pair<int64_t, CorpusCacheEntry>> found;
  std::error_code ec;
  if (cache_dir.empty() || !fs::is_directory(cache_dir, ec)) return {};
  for (const auto& e : fs::directory_iterator(cache_dir, ec)) {
    const std::string name = e.path().filename().string();
    if (name.starts_with(".") || !reg::ends_with(name, ".db")) continue;  // temporaries of a build in progress
    struct stat st {};
    if (::stat(e.path().c_str(), &st) != 0 || !S_ISREG(st.st_mode)) continue;
    CorpusCacheEntry c;
    c.key = name.substr(0, name.size() - 3);
    c.path = e.path().string();
    c.bytes = static_cast<uint64_t>(st.st_size);
    c.last_used = iso_time(st.st_mtim.tv_sec);
    try {
      std::ifstream in(manifest_path(cache_dir, c.key));
      if (in) {
        const auto m = nlohmann::json::parse(in);
        c.shards = m.value("shards", nlohmann::json::array()).size();
        c.built_at = m.value("built_at", "");
        c.build_seconds = m.value("build_seconds", 0.0);
      }
    } catch (const std::exception&) {
      // an unreadable manifest leaves the description empty
    }
    found.emplace_back(static_cast<int64_t>(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec, std::move(c));
  }
  std::sort(found.begin(), found.end(), [](const auto& a, const auto& b) {
    return a.first != b.first ? a.first > b.first : a.second.key < b.second.key;
  });
  std::vector<CorpusCacheEntry> out;
  for (auto& [t, c] : found) out.push_back(std::move(c));
  return out;
}

size_t clear_corpus_cache(const std::string& cache_dir) {
  std::error_code ec;
  if (cache_dir.empty() || !fs::is_directory(cache_dir, ec)) return 0;
  CacheLock lock(cache_dir);
  const auto entries = corpus_cache_entries(cache_dir);
  for (const auto& e : entries) remove_entry(cache_dir, e.key);
  return entries.size();
}

DataSource::DataSource(const std::string& registry_or_dir, const DataSourceOptions& options) {
  if (!fs::is_directory(registry_or_dir)) {
    if (!reg::file_exists(registry_or_dir)) throw Error("no registry or shard directory at '" + registry_or_dir + "'");
    path_ = registry_or_dir;
    return;
  }
  const std::vector<std::string> shards = shard_files(registry_or_dir);
  shards_ = shards.size();
  if (const std::string dir = options.use_cache ? corpus_cache_dir() : ""; !dir.empty()) {
    const std::string key = corpus_key(shards);
    const std::string entry = entry_path(dir, key);
    if (!options.rebuild && reg::file_exists(entry)) {
      touch(entry);
      path_ = entry;
      cache_key_ = key;
      cache_dir_ = dir;
      cache_hit_ = true;
      return;
    }
    std::unique_ptr<CacheLock> lock;
    try {
      std::error_code ec;
      fs::create_directories(dir, ec);
      if (ec) throw Error("cannot create '" + dir + "': " + ec.message());
      lock = std::make_unique<CacheLock>(dir);
    } catch (const Error& e) {
      note(std::string("corpus cache unavailable (") + e.what() + "): merging into a temporary registry");
    }
    if (lock) {
      // Another command may have built it while this one waited for the lock.
      cache_hit_ = !options.rebuild && reg::file_exists(entry);
      if (!cache_hit_) {
        build_entry(shards, dir, key);
        evict(dir, key);
      } else {
        touch(entry);
      }
      path_ = entry;
      cache_key_ = key;
      cache_dir_ = dir;
      return;
    }
  }
  TempPath merged = reg::temp_db("data");
  reg::merge_shards(shards, merged.path());
  path_ = merged.path();
  temp_ = std::move(merged);
}

DataSource::~DataSource() = default;

std::string corpus_cache_file(const DataSource& source, const std::string& what, const std::string& ext) {
  if (source.cache_key().empty()) return "";
  return (fs::path(source.cache_dir()) / (source.cache_key() + "." + what + "-" + build_tag() + ext)).string();
}

json data_stats(const DataSource& source) {
  RegistryOptions ro;
  ro.read_only = true;
  if (source.cache_key().empty()) {
    const Registry reg(source.path(), ro);
    return registry_stats(reg);
  }
  const std::string kept = corpus_cache_file(source, "stats", ".json");
  {
    std::ifstream in(kept);
    if (in) {
      try {
        return json::parse(in);
      } catch (const std::exception&) {
        // a damaged stats file is computed again below
      }
    }
  }
  json stats;
  {
    const Registry reg(source.path(), ro);
    stats = registry_stats(reg);
  }
  try {
    write_file_atomic(kept, stats.dump() + "\n");
  } catch (const Error&) {
    // a read-only cache directory: computed again next time
  }
  return stats;
}

}  // namespace cks
