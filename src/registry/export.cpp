// Reading measurements back: the streaming export (`cks data export`), the models'
// observation reader and the analyses' scans.
#include <cmath>
#include <ostream>

#include "cks/registry.hpp"
#include "registry/sqlite_util.hpp"

namespace cks {

using reg::Stmt;

namespace {

// WHERE clause shared by export and the reader; binds ?1 status, ?2 set, ?3 layout,
// ?4 include_cublas, ?6 only_cublas ('' selects everything).
constexpr const char* kFilterWhere =
    " WHERE (?1 = '' OR m.status = ?1) AND (?2 = '' OR g.set_name = ?2) AND (?3 = '' OR g.layout = ?3)"
    " AND (?4 OR m.kernel_id <> 'cublas') AND (NOT ?6 OR m.kernel_id = 'cublas')";

void bind_filter(Stmt& s, const MeasurementFilter& f, const std::string& status) {
  if (!status.empty() && !is_valid_status(status)) throw Error("unknown status '" + status + "'");
  if (f.only_cublas && !f.include_cublas) throw Error("a measurement filter cannot both select only and leave out cuBLAS rows");
  s.bind_all(status, f.set, f.layout ? std::string(to_string(*f.layout)) : std::string(),
             static_cast<int>(f.include_cublas));
  s.bind(6, static_cast<int>(f.only_cublas));
}

// Writes rows as they come: csv (RFC 4180), json (an array of objects) or md.
class RowWriter {
 public:
  RowWriter(std::ostream& os, Format format, std::vector<std::string> columns)
      : os_(os), format_(format), columns_(std::move(columns)) {
    switch (format_) {
      case Format::csv:
        for (size_t i = 0; i < columns_.size(); ++i) os_ << (i ? "," : "") << csv_escape(columns_[i]);
        os_ << '\n';
        break;
      case Format::json: os_ << '['; break;
      case Format::md:
        os_ << '|';
        for (const auto& c : columns_) os_ << ' ' << c << " |";
        os_ << "\n|";
        for (size_t i = 0; i < columns_.size(); ++i) os_ << " --- |";
        os_ << '\n';
        break;
    }
  }

  // One row from the current result row of `s` (column types as stored).
  void write(const Stmt& s) {
    switch (format_) {
      case Format::csv:
        line_.clear();
        for (int i = 0; i < s.columns(); ++i) {
          if (i) line_ += ',';
          line_ += csv_escape(text(s, i));
        }
        line_ += '\n';
        os_ << line_;
        break;
      case Format::json: {
        nlohmann::ordered_json o;
        for (int i = 0; i < s.columns(); ++i) {
          const auto& name = columns_[static_cast<size_t>(i)];
          switch (sqlite3_column_type(s.get(), i)) {
            case SQLITE_NULL: o[name] = nullptr; break;
            case SQLITE_INTEGER: o[name] = s.col_int(i); break;
            case SQLITE_FLOAT: {
              const double v = s.col_double(i);
              if (std::isfinite(v)) o[name] = v;
              else o[name] = nullptr;
              break;
            }
            default: o[name] = s.col_text(i);
          }
        }
        os_ << (rows_ ? ",\n" : "\n") << o.dump();
        break;
      }
      case Format::md:
        os_ << '|';
        for (int i = 0; i < s.columns(); ++i) {
          std::string t = text(s, i);
          for (auto& ch : t)
            if (ch == '|' || ch == '\n') ch = '/';
          os_ << ' ' << t << " |";
        }
        os_ << '\n';
        break;
    }
    ++rows_;
  }

  void finish() {
    if (format_ == Format::json) os_ << (rows_ ? "\n]\n" : "]\n");
  }

 private:
  static std::string text(const Stmt& s, int i) {
    switch (sqlite3_column_type(s.get(), i)) {
      case SQLITE_NULL: return "";
      case SQLITE_INTEGER: return std::to_string(s.col_int(i));
      case SQLITE_FLOAT: return format_double(s.col_double(i));
      default: return s.col_text(i);
    }
  }

  std::ostream& os_;
  Format format_;
  std::vector<std::string> columns_;
  std::string line_;
  size_t rows_ = 0;
};

// Every exported row carries its group's shape and set, its run's provenance and the
// kernel's canonical descriptor. `samples` is the measurement's n (timed iterations), renamed
// so it does not clash with the problem's N. A group key present in two sets (which
// `cks data stats` flags) yields one row per set.
constexpr const char* kExportFrom =
    " FROM measurements m LEFT JOIN groups g ON g.key = m.group_key LEFT JOIN runs r ON r.uuid = m.run_uuid"
    " LEFT JOIN kernels kr ON kr.kernel_id = m.kernel_id";
constexpr const char* kExportColumns =
    "SELECT m.uuid, m.run_uuid, m.group_key, g.m, g.n, g.k, g.layout, g.set_name AS \"set\", m.kernel_id,"
    " kr.canonical, m.knobs, m.status, m.mean_us, m.std_us, m.n AS samples, m.tflops, m.sm_clock_mhz,"
    " m.mem_clock_mhz, m.temp_c, m.power_w, m.max_rel_err, m.error, m.started_at, m.finished_at, m.attempt,"
    " m.worker, r.gpu_name, r.gpu_uuid, r.driver_version, r.cuda_version, r.cublas_version, r.cutlass_version,"
    " r.git_sha, r.host";

}  // namespace

size_t export_measurements(const Registry& registry, const MeasurementFilter& filter, Format format,
                           std::ostream& os) {
  sqlite3* db = registry.handle();
  Stmt count(db, std::string("SELECT count(*)") + kExportFrom + kFilterWhere);
  bind_filter(count, filter, filter.status);
  const size_t total = count.step() ? static_cast<size_t>(count.col_int(0)) : 0;
  count.reset();

  Stmt s(db, std::string(kExportColumns) + kExportFrom + kFilterWhere + " ORDER BY m.rowid");
  bind_filter(s, filter, filter.status);
  std::vector<std::string> columns;
  for (int i = 0; i < s.columns(); ++i) columns.push_back(s.column_name(i));
  RowWriter out(os, format, std::move(columns));
  size_t rows = 0;
  while (s.step()) {
    out.write(s);
    if (++rows % 50000 == 0) progress("exporting", rows, total);
  }
  out.finish();
  if (rows) progress("exporting", rows, rows);
  if (!os) throw Error("cannot write the export (output closed or disk full)");
  return rows;
}

void scan_ok_measurements(const Registry& registry, const MeasurementFilter& filter,
                          const std::function<void(const Observation&)>& visit) {
  scan_measurements(registry, "ok", filter, visit);
}

void scan_measurements(const Registry& registry, const std::string& status, const MeasurementFilter& filter,
                       const std::function<void(const Observation&)>& visit) {
  if (status.empty()) throw std::logic_error("scan_measurements: empty status");
  Stmt s(registry.handle(),
         std::string("SELECT m.group_key, g.set_name, g.m, g.n, g.k, g.layout, m.kernel_id, m.knobs, m.mean_us,"
                     " m.std_us, m.n, m.tflops, m.sm_clock_mhz, m.power_w, m.started_at, m.run_uuid FROM measurements m"
                     " JOIN groups g ON g.key = m.group_key") +
             kFilterWhere + (filter.group_key.empty() ? "" : " AND m.group_key = ?5") +
             " ORDER BY m.group_key, m.kernel_id, m.knobs, m.uuid");
  bind_filter(s, filter, status);
  if (!filter.group_key.empty()) s.bind(5, filter.group_key);
  Observation o;
  while (s.step()) {
    o.group_key = s.col_text(0);
    o.set = s.col_text(1);
    o.m = s.col_int(2);
    o.n = s.col_int(3);
    o.k = s.col_int(4);
    o.layout = parse_layout(s.col_text(5));
    o.kernel_id = s.col_text(6);
    o.knobs = s.col_text(7);
    o.mean_us = s.col_double(8);
    o.std_us = s.col_double(9);
    o.samples = static_cast<int>(s.col_int(10));
    o.tflops = s.col_double(11);
    o.sm_clock_mhz = s.col_double(12);
    o.power_w = s.col_double(13);
    o.started_at = s.col_text(14);
    o.run_uuid = s.col_text(15);
    visit(o);
  }
}

std::vector<Observation> load_ok_measurements(const Registry& registry, const MeasurementFilter& filter) {
  std::vector<Observation> out;
  scan_ok_measurements(registry, filter, [&](const Observation& o) { out.push_back(o); });
  return out;
}

void scan_repeated_measurements(const Registry& registry, const MeasurementFilter& filter,
                                const std::function<void(const RepeatedObservation&)>& visit) {
  if (!filter.status.empty() && filter.status != "ok")
    throw Error("the repeatability scan reads status-ok rows only (got status '" + filter.status + "')");
  // Candidates with ok rows in two or more runs first (the candidate index makes this a scan of
  // the ok rows grouped in index order), then their rows with the runs' start times.
  Stmt s(registry.handle(),
         std::string("WITH rep AS (SELECT group_key, kernel_id, knobs FROM measurements WHERE status = 'ok'"
                     " GROUP BY group_key, kernel_id, knobs HAVING count(DISTINCT run_uuid) > 1)"
                     " SELECT m.group_key, g.set_name, g.layout, m.kernel_id, m.knobs, m.run_uuid, r.started_at,"
                     " m.started_at, m.worker, m.mean_us, m.sm_clock_mhz"
                     " FROM rep JOIN measurements m ON m.group_key = rep.group_key AND m.kernel_id = rep.kernel_id"
                     " AND m.knobs = rep.knobs JOIN groups g ON g.key = m.group_key"
                     " JOIN runs r ON r.uuid = m.run_uuid") +
             kFilterWhere + " ORDER BY m.group_key, m.kernel_id, m.knobs, r.started_at, m.started_at, m.uuid");
  bind_filter(s, filter, "ok");
  RepeatedObservation o;
  while (s.step()) {
    o.group_key = s.col_text(0);
    o.set = s.col_text(1);
    o.layout = parse_layout(s.col_text(2));
    o.kernel_id = s.col_text(3);
    o.knobs = s.col_text(4);
    o.run_uuid = s.col_text(5);
    o.run_started_at = s.col_text(6);
    o.started_at = s.col_text(7);
    o.worker = s.col_text(8);
    o.mean_us = s.col_double(9);
    o.sm_clock_mhz = s.col_double(10);
    visit(o);
  }
}

size_t KernelAttempts::attempts() const {
  size_t n = 0;
  for (size_t c : by_status) n += c;
  return n;
}

void scan_kernel_attempts(const Registry& registry, const MeasurementFilter& filter,
                          const std::function<void(const KernelAttempts&)>& visit) {
  MeasurementFilter f = filter;
  f.include_cublas = false;
  // Counted in SQL, one row per kernel, layout and status. The groups are reduced to one row per
  // key (its set filtered first), so a key listed under two sets does not count its rows twice.
  // A failed row's error is tagged with its start time: the smallest tagged text is the first.
  Stmt s(registry.handle(),
         std::string("WITH a AS (SELECT m.kernel_id, g.layout, m.status, count(*) AS n,"
                     " min(CASE WHEN m.status NOT IN ('ok', 'cut') AND m.error <> ''"
                     " THEN m.started_at || char(31) || m.error END) AS first_error"
                     " FROM measurements m JOIN (SELECT key, min(set_name) AS set_name, layout FROM groups"
                     " WHERE ?2 = '' OR set_name = ?2 GROUP BY key) g ON g.key = m.group_key") +
             kFilterWhere +
             " GROUP BY m.kernel_id, g.layout, m.status)"
             " SELECT a.kernel_id, a.layout, a.status, a.n, a.first_error, coalesce(kr.canonical, ''),"
             " coalesce(kr.spill_store_bytes, -1), coalesce(kr.spill_load_bytes, -1)"
             " FROM a LEFT JOIN kernels kr ON kr.kernel_id = a.kernel_id ORDER BY a.kernel_id, a.layout");
  bind_filter(s, f, f.status);
  KernelAttempts k;
  std::string tagged;  // the smallest "<started_at>\x1f<error>" so far
  auto flush = [&] {
    if (k.kernel_id.empty()) return;
    k.first_error = tagged.substr(tagged.find('\x1f') + 1);
    visit(k);
  };
  while (s.step()) {
    const std::string id = s.col_text(0);
    const Layout layout = parse_layout(s.col_text(1));
    if (id != k.kernel_id || layout != k.layout) {
      flush();
      k = KernelAttempts{};
      k.kernel_id = id;
      k.layout = layout;
      k.canonical = s.col_text(5);
      k.spill_store_bytes = static_cast<int>(s.col_int(6));
      k.spill_load_bytes = static_cast<int>(s.col_int(7));
      tagged.clear();
    }
    k.by_status[status_index(s.col_text(2))] += static_cast<size_t>(s.col_int(3));
    const std::string error = s.col_text(4);  // "" for NULL
    if (!error.empty() && (tagged.empty() || error < tagged)) tagged = error;
  }
  flush();
}

}  // namespace cks
