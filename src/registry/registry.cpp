// The Registry: one SQLite connection in WAL mode, every write one committed transaction.
#include "cks/registry.hpp"

#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <limits>
#include <mutex>
#include <unordered_map>

#include "registry/schema.hpp"
#include "registry/sqlite_util.hpp"

namespace cks {

using reg::Stmt;
using reg::Transaction;
using reg::Use;

namespace {
const char* const* find_status(std::string_view s) {
  return std::find_if(std::begin(kStatuses), std::end(kStatuses), [&](const char* x) { return s == x; });
}
}  // namespace

bool is_valid_status(std::string_view s) { return find_status(s) != std::end(kStatuses); }

size_t status_index(std::string_view s) {
  const auto it = find_status(s);
  if (it == std::end(kStatuses)) throw Error("unknown status '" + std::string(s) + "'");
  return static_cast<size_t>(it - std::begin(kStatuses));
}

std::string new_uuid() {
  unsigned char b[16];
  size_t got = 0;
  while (got < sizeof b) {
    ssize_t r = getrandom(b + got, sizeof b - got, 0);
    if (r < 0) {
      if (errno == EINTR) continue;
      throw Error(std::string("cannot read random bytes for a UUID: ") + std::strerror(errno));
    }
    got += static_cast<size_t>(r);
  }
  char hex[33];
  for (size_t i = 0; i < sizeof b; ++i) std::snprintf(hex + 2 * i, 3, "%02x", b[i]);
  return std::string(hex, 32);
}

std::string utc_now() {
  timespec ts{};
  clock_gettime(CLOCK_REALTIME, &ts);
  tm t{};
  gmtime_r(&ts.tv_sec, &t);
  char buf[40];
  size_t len = std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%S", &t);
  std::snprintf(buf + len, sizeof buf - len, ".%03ldZ", ts.tv_nsec / 1000000);
  return buf;
}

std::string group_key(long m, long n, long k, Layout layout) {
  return std::to_string(m) + "x" + std::to_string(n) + "x" + std::to_string(k) + "_" + std::string(to_string(layout));
}

bool is_group_key_of(const std::string& key, long m, long n, long k, Layout layout) {
  const std::string base = group_key(m, n, k, layout);
  if (key == base) return true;
  if (!key.starts_with(base) || key.size() < base.size() + 2 || key.size() > base.size() + 17 || key[base.size()] != '~')
    return false;
  return std::all_of(key.begin() + static_cast<std::ptrdiff_t>(base.size()) + 1, key.end(),
                     [](char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); });
}

namespace {

std::string host_name() {
  char buf[256] = {};
  if (gethostname(buf, sizeof buf - 1) != 0) return "";
  return buf;
}

void require(bool ok, const std::string& what) {
  if (!ok) throw Error(what);
}

void validate(const MeasurementRow& m) {
  require(is_valid_status(m.status), "invalid measurement status '" + m.status + "'");
  require(!m.run_uuid.empty(), "measurement without a run uuid");
  require(!m.group_key.empty(), "measurement without a group key");
  require(!m.kernel_id.empty(), "measurement without a kernel id");
}

}  // namespace

// The connection is shared by the threads of one process (e.g. one monitor thread per
// GPU): `mu` serialises every call so transactions never interleave and cached statements
// are used by one caller at a time.
struct Registry::Impl {
  explicit Impl(sqlite3* db) : stmts(db) {}
  std::mutex mu;
  reg::StmtCache stmts;
  std::unordered_map<std::string, uint64_t> next_seq;  // run uuid -> next measurement number
};

Registry::Registry(const std::string& path) : Registry(path, RegistryOptions{}) {}

Registry::Registry(const std::string& path, const RegistryOptions& options) : path_(path) {
  if (options.read_only) open_read_only(options);
  else open_writable(options);
}

void Registry::open_read_only(const RegistryOptions& options) {
  if (!reg::file_exists(path_)) throw Error("no registry at '" + path_ + "'");
  db_ = reg::open_db(path_, SQLITE_OPEN_READONLY);
  try {
    sqlite3_busy_timeout(db_, options.busy_timeout_ms);
    const int version = reg::checked_schema_version(db_, path_, false);
    if (version < reg::current_schema_version()) {
      // An older file is read through a migrated temporary copy; the file itself is untouched.
      migrated_ = reg::temp_db("readonly");
      reg::backup_to_file(db_, migrated_.path());
      reg::close_db(db_);
      db_ = nullptr;
      db_ = reg::open_db(migrated_.path(), SQLITE_OPEN_READWRITE);
      sqlite3_busy_timeout(db_, options.busy_timeout_ms);
      reg::migrate(db_, path_);
    }
    impl_ = std::make_unique<Impl>(db_);
  } catch (...) {
    reg::close_db(db_);
    throw;
  }
}

void Registry::open_writable(const RegistryOptions& options) {
  if (!options.create && !reg::file_exists(path_)) throw Error("no registry at '" + path_ + "'");
  // The lock comes first: a second writer is refused before it opens (or creates) anything.
  if (options.exclusive) lock_ = std::make_unique<RegistryLock>(path_);
  db_ = reg::open_db(path_, SQLITE_OPEN_READWRITE | (options.create ? SQLITE_OPEN_CREATE : 0));
  try {
    sqlite3_busy_timeout(db_, options.busy_timeout_ms);
    // A file that is not a registry is refused before anything in it changes (the journal mode
    // below is written into the file's header).
    reg::checked_schema_version(db_, path_, true);
    // Switching to WAL must happen outside a transaction; it persists in the file header.
    std::string mode;
    try {
      Stmt wal(db_, "PRAGMA journal_mode=WAL");
      if (wal.step()) mode = wal.col_text(0);
    } catch (const Error&) {
      throw Error("cannot open registry '" + path_ + "': " + sqlite3_errmsg(db_));
    }
    if (mode != "wal") throw Error("registry '" + path_ + "': cannot enable WAL mode (unsupported file system?)");
    reg::exec(db_, options.sync == Sync::full ? "PRAGMA synchronous=FULL" : "PRAGMA synchronous=NORMAL");
    reg::migrate(db_, path_);
    impl_ = std::make_unique<Impl>(db_);
  } catch (...) {
    reg::close_db(db_);
    throw;
  }
}

Registry::~Registry() {
  impl_.reset();  // finalize cached statements before closing
  reg::close_db(db_);
}

int Registry::schema_version() { return reg::current_schema_version(); }

std::string Registry::begin_run(RunInfo info) {
  std::lock_guard lock(impl_->mu);
  if (info.uuid.empty()) info.uuid = new_uuid();
  if (info.started_at.empty()) info.started_at = utc_now();
  if (info.host.empty()) info.host = host_name();
  if (info.extra_json.empty()) info.extra_json = "{}";
  // Beginning an existing run again (a resumed job) keeps its provenance and reopens it.
  Use s(impl_->stmts.get(
      "INSERT INTO runs(uuid, kind, gpu_name, gpu_uuid, driver_version, cuda_version, cublas_version, "
      "cutlass_version, git_sha, host, command, started_at, ended_at, extra_json) "
      "VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14) "
      "ON CONFLICT(uuid) DO UPDATE SET ended_at = ''"));
  s->bind_all(info.uuid, info.kind, info.gpu_name, info.gpu_uuid, info.driver_version, info.cuda_version,
              info.cublas_version, info.cutlass_version, info.git_sha, info.host, info.command, info.started_at,
              info.ended_at, info.extra_json)
      .run();
  return info.uuid;
}

void Registry::end_run(const std::string& run_uuid) {
  std::lock_guard lock(impl_->mu);
  Use s(impl_->stmts.get("UPDATE runs SET ended_at = ?2 WHERE uuid = ?1"));
  s->bind_all(run_uuid, utc_now()).run();
  if (sqlite3_changes(db_) == 0) throw Error("no run '" + run_uuid + "' in registry '" + path_ + "'");
}

void Registry::upsert_group(const GroupInfo& g) {
  require(g.m > 0 && g.n > 0 && g.k > 0, "group with a non-positive dimension");
  require(!g.set.empty(), "group without a set");
  const std::string derived = group_key(g.m, g.n, g.k, g.layout);
  require(g.key.empty() || is_group_key_of(g.key, g.m, g.n, g.k, g.layout),
          "group key '" + g.key + "' does not match its shape (expected '" + derived + "' or '" + derived +
              "~<variant>')");
  std::lock_guard lock(impl_->mu);
  Use s(impl_->stmts.get(
      "INSERT INTO groups(key, set_name, m, n, k, layout, tags_json, policy, budget, seed) "
      "VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10) "
      "ON CONFLICT(key, set_name) DO UPDATE SET tags_json = excluded.tags_json, policy = excluded.policy, "
      "budget = excluded.budget, seed = excluded.seed"));
  s->bind_all(g.key.empty() ? derived : g.key, g.set, g.m, g.n, g.k, std::string(to_string(g.layout)),
              g.tags_json.empty() ? std::string("{}") : g.tags_json, g.policy, g.budget, g.seed)
      .run();
}

std::vector<GroupInfo> Registry::groups() const {
  std::lock_guard lock(impl_->mu);
  Use s(impl_->stmts.get(
      "SELECT key, set_name, m, n, k, layout, tags_json, policy, budget, seed FROM groups ORDER BY key, set_name"));
  std::vector<GroupInfo> out;
  while (s->step()) {
    GroupInfo g;
    g.key = s->col_text(0);
    g.set = s->col_text(1);
    g.m = s->col_int(2);
    g.n = s->col_int(3);
    g.k = s->col_int(4);
    g.layout = parse_layout(s->col_text(5));
    g.tags_json = s->col_text(6);
    g.policy = s->col_text(7);
    g.budget = s->col_int(8);
    g.seed = static_cast<uint64_t>(s->col_int(9));
    out.push_back(std::move(g));
  }
  return out;
}

void Registry::upsert_kernel(const KernelCompileRow& k) {
  require(k.status == "ok" || k.status == "compile_error",
          "invalid kernel compile status '" + k.status + "' (expected ok or compile_error)");
  const KernelDesc d = KernelDesc::from_canonical(k.canonical);
  require(d.id() == k.kernel_id,
          "kernel id '" + k.kernel_id + "' does not match its descriptor (expected '" + d.id() + "')");
  std::lock_guard lock(impl_->mu);
  Use s(impl_->stmts.get(
      "INSERT OR REPLACE INTO kernels(kernel_id, canonical, layout, tm, tn, tk, cm, cn, stages, mainloop, "
      "epilogue, scheduler, status, error, lib_hash, lib_index, registers, spill_store_bytes, spill_load_bytes, "
      "smem_bytes, compile_seconds, host, nvcc_version, flags, updated_at) "
      "VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18, ?19, ?20, ?21, "
      "?22, ?23, ?24, ?25)"));
  s->bind_all(k.kernel_id, k.canonical, std::string(to_string(d.layout)), d.tm, d.tn, d.tk, d.cm, d.cn, d.stages,
              std::string(to_string(d.mainloop)), std::string(to_string(d.epilogue)),
              std::string(to_string(d.scheduler)), k.status, k.error, k.lib_hash, k.index, k.registers,
              k.spill_store_bytes, k.spill_load_bytes, k.smem_bytes, k.compile_seconds,
              k.host.empty() ? host_name() : k.host, k.nvcc_version, k.flags, utc_now())
      .run();
}

std::optional<KernelCompileRow> Registry::kernel(const std::string& kernel_id) const {
  std::lock_guard lock(impl_->mu);
  Use s(impl_->stmts.get(
      "SELECT kernel_id, canonical, status, error, lib_hash, lib_index, registers, spill_store_bytes, "
      "spill_load_bytes, smem_bytes, compile_seconds, host, nvcc_version, flags FROM kernels WHERE kernel_id = ?1"));
  s->bind_all(kernel_id);
  if (!s->step()) return std::nullopt;
  KernelCompileRow r;
  r.kernel_id = s->col_text(0);
  r.canonical = s->col_text(1);
  r.status = s->col_text(2);
  r.error = s->col_text(3);
  r.lib_hash = s->col_text(4);
  r.index = static_cast<int>(s->col_int(5));
  r.registers = static_cast<int>(s->col_int(6));
  r.spill_store_bytes = static_cast<int>(s->col_int(7));
  r.spill_load_bytes = static_cast<int>(s->col_int(8));
  r.smem_bytes = static_cast<int>(s->col_int(9));
  r.compile_seconds = s->col_double(10);
  r.host = s->col_text(11);
  r.nvcc_version = s->col_text(12);
  r.flags = s->col_text(13);
  return r;
}

void Registry::add_plan_items(const std::string& group_key,
                              const std::vector<std::pair<std::string, std::string>>& kernel_knobs) {
  require(!group_key.empty(), "plan items without a group key");
  std::lock_guard lock(impl_->mu);
  Transaction tx(db_);
  Use s(impl_->stmts.get("INSERT OR IGNORE INTO plan_items(group_key, kernel_id, knobs) VALUES(?1, ?2, ?3)"));
  for (const auto& [kernel_id, knobs] : kernel_knobs) {
    s->bind_all(group_key, kernel_id, knobs).run();
    s->reset();
  }
  tx.commit();
}

// An item is final once it has a measurement whose status is neither crash nor timeout, or
// `max_attempts` crash/timeout attempts; returned in the order the plan added them.
std::vector<std::pair<std::string, std::string>> Registry::pending_items(const std::string& group_key,
                                                                         int max_attempts) const {
  std::lock_guard lock(impl_->mu);
  Use s(impl_->stmts.get(
      "SELECT p.kernel_id, p.knobs FROM plan_items p WHERE p.group_key = ?1 "
      "AND NOT EXISTS (SELECT 1 FROM measurements m WHERE m.group_key = p.group_key AND m.kernel_id = p.kernel_id "
      "  AND m.knobs = p.knobs AND m.status NOT IN ('crash', 'timeout')) "
      "AND (SELECT count(*) FROM measurements m WHERE m.group_key = p.group_key AND m.kernel_id = p.kernel_id "
      "  AND m.knobs = p.knobs) < ?2 "
      "ORDER BY p.rowid"));
  s->bind_all(group_key, max_attempts);
  std::vector<std::pair<std::string, std::string>> out;
  while (s->step()) out.emplace_back(s->col_text(0), s->col_text(1));
  return out;
}

std::vector<std::pair<std::string, std::string>> Registry::final_items(const std::string& group_key,
                                                                       int max_attempts) const {
  std::lock_guard lock(impl_->mu);
  Use s(impl_->stmts.get(
      "SELECT kernel_id, knobs FROM measurements WHERE group_key = ?1 GROUP BY kernel_id, knobs "
      "HAVING sum(status NOT IN ('crash', 'timeout')) > 0 OR count(*) >= ?2"));
  s->bind_all(group_key, max_attempts);
  std::vector<std::pair<std::string, std::string>> out;
  while (s->step()) out.emplace_back(s->col_text(0), s->col_text(1));
  return out;
}

int Registry::attempts(const std::string& group_key, const std::string& kernel_id, const std::string& knobs) const {
  std::lock_guard lock(impl_->mu);
  Use s(impl_->stmts.get(
      "SELECT count(*) FROM measurements WHERE group_key = ?1 AND kernel_id = ?2 AND knobs = ?3"));
  s->bind_all(group_key, kernel_id, knobs);
  return s->step() ? static_cast<int>(s->col_int(0)) : 0;
}

void Registry::insert_measurement(MeasurementRow m) { insert_measurements({std::move(m)}); }

void Registry::insert_profiles(const std::vector<ProfileRow>& rows) {
  std::lock_guard lock(impl_->mu);
  for (const auto& r : rows) {
    require(!r.run_uuid.empty() && !r.group_key.empty() && !r.kernel_id.empty() && !r.metric.empty(),
            "profile row without its run, group, kernel or metric");
  }
  Transaction tx(db_);
  Use s(impl_->stmts.get(
      "INSERT INTO profiles(run_uuid, group_key, kernel_id, knobs, metric, value, unit) "
      "VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7) ON CONFLICT DO UPDATE SET value = excluded.value, unit = excluded.unit"));
  for (const auto& r : rows) {
    s->bind_all(r.run_uuid, r.group_key, r.kernel_id, r.knobs, r.metric, r.value, r.unit).run();
    s->reset();
  }
  tx.commit();
}

std::vector<ProfileRow> Registry::profiles() const {
  std::lock_guard lock(impl_->mu);
  Use s(impl_->stmts.get("SELECT run_uuid, group_key, kernel_id, knobs, metric, value, unit FROM profiles "
                         "ORDER BY run_uuid, group_key, kernel_id, knobs, metric"));
  std::vector<ProfileRow> out;
  while (s->step()) {
    ProfileRow r{s->col_text(0), s->col_text(1), s->col_text(2), s->col_text(3), s->col_text(4), s->col_text(6)};
    r.value = s->is_null(5) ? std::numeric_limits<double>::quiet_NaN() : s->col_double(5);
    out.push_back(std::move(r));
  }
  return out;
}

void Registry::insert_measurements(std::vector<MeasurementRow> ms) {
  std::lock_guard lock(impl_->mu);
  // A measurement's id is "<run uuid>-<8 hex digits, its number in the run>": unique like a
  // random UUID (the run's is random) but compressible, which keeps committed shards small.
  for (auto& m : ms) {
    validate(m);
    if (m.uuid.empty() && !m.run_uuid.empty()) {
      auto [it, fresh] = impl_->next_seq.try_emplace(m.run_uuid, 0);
      if (fresh) {
        Use c(impl_->stmts.get("SELECT count(*) FROM measurements WHERE run_uuid = ?1"));
        c->bind_all(m.run_uuid);
        it->second = c->step() ? static_cast<uint64_t>(c->col_int(0)) : 0;
      }
      char seq[17];
      std::snprintf(seq, sizeof seq, "%08llx", static_cast<unsigned long long>(it->second++));
      m.uuid = m.run_uuid + "-" + seq;
    }
    if (m.uuid.empty()) m.uuid = new_uuid();
    if (m.finished_at.empty()) m.finished_at = utc_now();
  }
  Transaction tx(db_);
  Use s(impl_->stmts.get(
      "INSERT INTO measurements(uuid, run_uuid, group_key, kernel_id, knobs, status, mean_us, std_us, n, tflops, "
      "sm_clock_mhz, mem_clock_mhz, temp_c, power_w, max_rel_err, error, started_at, finished_at, attempt, worker) "
      "VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18, ?19, ?20)"));
  for (const auto& m : ms) {
    s->bind_all(m.uuid, m.run_uuid, m.group_key, m.kernel_id, m.knobs, m.status, m.mean_us, m.std_us, m.n, m.tflops,
                m.sm_clock_mhz, m.mem_clock_mhz, m.temp_c, m.power_w, m.max_rel_err, m.error, m.started_at,
                m.finished_at, m.attempt, m.worker)
        .run();
    s->reset();
  }
  tx.commit();
}

void Registry::checkpoint(const std::string& dest) const {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (fs::equivalent(dest, path_, ec)) throw Error("cannot checkpoint registry '" + path_ + "' onto itself");
  // A new temp file beside `dest` (never a predictable name that could be a planted symlink).
  AtomicOutput out(dest, true);
  {
    std::lock_guard lock(impl_->mu);
    reg::backup_to_file(db_, out.temp_path());
  }
  // A stale rollback journal beside `dest` would be "replayed" into the new file.
  ::unlink((dest + "-journal").c_str());
  try {
    out.commit();
  } catch (const Error& e) {
    throw Error("cannot move checkpoint into place: " + std::string(e.what()));
  }
}

}  // namespace cks
