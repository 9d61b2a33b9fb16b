// Columnar shards: see columnar.hpp for the format.
#include "registry/columnar.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <limits>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "cks/common.hpp"
#include "common/json_limits.hpp"
#include "registry/sqlite_util.hpp"

namespace cks::reg {

namespace {

using nlohmann::json;

// A line longer than this is not one a writer produced (a chunk of 65,536 values of a column).
constexpr size_t kMaxLine = size_t{1} << 30;

std::string quoted(const std::string& name) {
  std::string q(1, '"');
  for (char c : name) {
    q.push_back(c);
    if (c == '"') q.push_back('"');
  }
  q.push_back('"');
  return q;
}

bool valid_utf8(std::string_view s) {
  size_t i = 0;
  while (i < s.size()) {
    const auto c = static_cast<unsigned char>(s[i]);
    size_t extra;
    uint32_t cp;
    if (c < 0x80) {
      ++i;
      continue;
    } else if ((c & 0xe0) == 0xc0) {
      extra = 1, cp = c & 0x1f;
    } else if ((c & 0xf0) == 0xe0) {
      extra = 2, cp = c & 0x0f;
    } else if ((c & 0xf8) == 0xf0) {
      extra = 3, cp = c & 0x07;
    } else {
      return false;
    }
    if (i + extra >= s.size()) return false;  // the sequence runs past the end
    for (size_t j = 1; j <= extra; ++j) {
      const auto d = static_cast<unsigned char>(s[i + j]);
      if ((d & 0xc0) != 0x80) return false;
      cp = (cp << 6) | (d & 0x3f);
    }
    // Overlong forms, surrogates and code points past U+10FFFF are not UTF-8.
    if ((extra == 1 && cp < 0x80) || (extra == 2 && cp < 0x800) || (extra == 3 && cp < 0x10000) || cp > 0x10ffff ||
        (cp >= 0xd800 && cp <= 0xdfff))
      return false;
    i += extra + 1;
  }
  return true;
}

std::string to_hex(const unsigned char* p, size_t n) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string out(2 * n, '0');
  for (size_t i = 0; i < n; ++i) {
    out[2 * i] = kDigits[p[i] >> 4];
    out[2 * i + 1] = kDigits[p[i] & 15];
  }
  return out;
}

// Decodes lower-case hex into `out`; false on an odd length or another character.
bool from_hex(const std::string& hex, std::string& out) {
  if (hex.size() % 2) return false;
  auto digit = [](char c) -> int {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    return -1;
  };
  out.resize(hex.size() / 2);
  for (size_t i = 0; i < out.size(); ++i) {
    const int hi = digit(hex[2 * i]), lo = digit(hex[2 * i + 1]);
    if (hi < 0 || lo < 0) return false;
    out[i] = static_cast<char>(hi * 16 + lo);
  }
  return true;
}

json column_value(sqlite3_stmt* st, int c) {
  switch (sqlite3_column_type(st, c)) {
    case SQLITE_INTEGER:
      return static_cast<int64_t>(sqlite3_column_int64(st, c));
    case SQLITE_FLOAT: {
      const double v = sqlite3_column_double(st, c);
      if (std::isfinite(v)) return v;
      // SQLite keeps no NaN (it stores NULL), so a non-finite REAL is an infinity.
      return json{{"real", v > 0 ? "inf" : "-inf"}};
    }
    case SQLITE_TEXT: {
      const auto* p = reinterpret_cast<const char*>(sqlite3_column_text(st, c));
      const std::string_view s(p ? p : "", static_cast<size_t>(sqlite3_column_bytes(st, c)));
      if (valid_utf8(s)) return std::string(s);
      return json{{"text_hex", to_hex(reinterpret_cast<const unsigned char*>(s.data()), s.size())}};
    }
    case SQLITE_BLOB: {
      const auto* p = static_cast<const unsigned char*>(sqlite3_column_blob(st, c));
      return json{{"blob_hex", to_hex(p, static_cast<size_t>(sqlite3_column_bytes(st, c)))}};
    }
    default:
      return nullptr;
  }
}

// The tables to write, in creation order: (name, sql).
std::vector<std::pair<std::string, std::string>> user_tables(sqlite3* db) {
  std::vector<std::pair<std::string, std::string>> out;
  Stmt s(db, "SELECT name, sql FROM sqlite_master WHERE type='table' AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\' ORDER BY rowid");
  while (s.step()) out.emplace_back(s.col_text(0), s.col_text(1));
  return out;
}

// A table's rows in insertion order (rowid); a WITHOUT ROWID table has none: its primary key's order.
std::unique_ptr<Stmt> select_in_row_order(sqlite3* db, const std::string& table) {
  try {
    return std::make_unique<Stmt>(db, "SELECT * FROM " + quoted(table) + " ORDER BY rowid");
  } catch (const Error&) {
    return std::make_unique<Stmt>(db, "SELECT * FROM " + quoted(table));
  }
}

std::vector<std::string> table_columns(sqlite3* db, const std::string& table) {
  std::vector<std::string> out;
  Stmt s(db, "SELECT name FROM pragma_table_info(?1) ORDER BY cid");
  s.bind_all(table);
  while (s.step()) out.push_back(s.col_text(0));
  return out;
}

// A derived column: measurements.tflops, where a chunk's values are mostly what the measured mean
// gives. TFLOP/s is 2 M N K / mean; a compact shard rounds both to 6 significant digits, so the
// stored value is the mean's TFLOP/s rounded, or one unit of its last digit off (the mean was
// rounded first): 68 % and 32 % of lease 37's rows. Such a value is written as that residual, -2..2
// (0: the rounding itself), any other value as itself in a one-element array; the line is
// {"derive":"tflops-6g","values":[...]} instead of the column's array. Decoding recomputes the value
// by this same code, and `pack` checks every shard it writes by decoding it, so a residual that
// would not read back to the same bits is never written.
constexpr const char* kTflopsRule = "tflops-6g";
constexpr int kMaxResidual = 2;
using Shape = std::array<int64_t, 3>;
using Shapes = std::unordered_map<std::string, Shape>;

// The 6-significant-digit TFLOP/s of a mean (us) on a shape, `residual` units of its last digit
// away; nullopt where there is none (a mean that is not positive and finite).
std::optional<double> tflops_6g(double mean_us, const Shape& shape, int residual) {
  if (!(mean_us > 0) || !std::isfinite(mean_us)) return std::nullopt;
  const double v = 2.0 * static_cast<double>(shape[0]) * static_cast<double>(shape[1]) * static_cast<double>(shape[2]) /
                   (mean_us * 1e-6) / 1e12;
  if (!(v > 0) || !std::isfinite(v)) return std::nullopt;
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.5e", v);  // d.ddddde+XX
  const char* e = std::strchr(buf, 'e');
  if (!e || e - buf != 7 || buf[1] != '.') return std::nullopt;
  long long mantissa = buf[0] - '0';
  for (int i = 2; i < 7; ++i) mantissa = mantissa * 10 + (buf[i] - '0');
  mantissa += residual;
  if (mantissa <= 0) return std::nullopt;
  std::snprintf(buf, sizeof buf, "%llde%d", mantissa, std::atoi(e + 1) - 5);
  return std::strtod(buf, nullptr);
}

// The shapes of the registry's group keys (a key with two different shapes has none).
Shapes group_shapes(sqlite3* db) {
  Shapes out;
  std::unordered_map<std::string, bool> conflict;
  try {
    Stmt s(db, "SELECT key, m, n, k FROM groups");
    while (s.step()) {
      const Shape shape{s.col_int(1), s.col_int(2), s.col_int(3)};
      const auto [it, fresh] = out.emplace(s.col_text(0), shape);
      if (!fresh && it->second != shape) conflict[it->first] = true;
    }
  } catch (const Error&) {
    return {};  // no groups table of this form: nothing is derived
  }
  for (const auto& [key, _] : conflict) out.erase(key);
  return out;
}

bool same_bits(double a, double b) { return std::memcmp(&a, &b, sizeof a) == 0; }

// The measurements table's derived TFLOP/s column: the columns it reads, if this table has them.
struct TflopsColumns {
  size_t group_key = 0, mean = 0, tflops = 0;
};
std::optional<TflopsColumns> tflops_columns(const std::string& table, const std::vector<std::string>& columns) {
  if (table != "measurements") return std::nullopt;
  auto at = [&](const char* name) -> std::optional<size_t> {
    for (size_t c = 0; c < columns.size(); ++c)
      if (columns[c] == name) return c;
    return std::nullopt;
  };
  const auto g = at("group_key"), m = at("mean_us"), t = at("tflops");
  if (!g || !m || !t) return std::nullopt;
  return TflopsColumns{*g, *m, *t};
}

}  // namespace

void write_columnar(sqlite3* db, const std::string& path) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out) throw Error("cannot write '" + path + "': " + std::strerror(errno));
  out << json{{"format", kColumnarFormat}}.dump() << '\n';
  bool groups_written = false;
  for (const auto& [table, sql] : user_tables(db)) {
    const std::vector<std::string> columns = table_columns(db, table);
    const int64_t rows = query_int(db, "SELECT count(*) FROM " + quoted(table));
    out << json{{"table", table}, {"sql", sql}, {"columns", columns}, {"rows", rows}}.dump() << '\n';
    const std::unique_ptr<Stmt> select = select_in_row_order(db, table);
    std::vector<json> chunk(columns.size(), json::array());
    int64_t written = 0;
    // Derived only after the groups table (the reader knows the shapes of the groups it decoded).
    const std::optional<TflopsColumns> derive = groups_written ? tflops_columns(table, columns) : std::nullopt;
    const Shapes shapes = derive ? group_shapes(db) : Shapes{};
    json derived = json::array();  // the TFLOP/s column's chunk as residuals
    size_t residuals = 0;
    size_t in_chunk = 0;
    auto flush = [&] {
      for (size_t c = 0; c < chunk.size(); ++c) {
        // The derived form where most of the chunk's values are residuals.
        if (derive && c == derive->tflops && 2 * residuals > in_chunk) {
          const json line{{"derive", kTflopsRule}, {"values", std::move(derived)}};
          out << line.dump(-1, ' ', false, json::error_handler_t::strict) << '\n';
        } else {
          out << chunk[c].dump(-1, ' ', false, json::error_handler_t::strict) << '\n';
        }
        chunk[c] = json::array();
      }
      derived = json::array();
      residuals = 0;
    };
    while (select->step()) {
      sqlite3_stmt* st = select->get();
      for (size_t c = 0; c < columns.size(); ++c) chunk[c].push_back(column_value(st, static_cast<int>(c)));
      if (derive) {
        // On the values as the reader will see them (it derives from these same JSON values).
        const json& key = chunk[derive->group_key].back();
        const json& mean = chunk[derive->mean].back();
        const json& tflops = chunk[derive->tflops].back();
        std::optional<int> residual;
        if (key.is_string() && mean.is_number_float() && tflops.is_number_float()) {
          if (const auto shape = shapes.find(key.get_ref<const std::string&>()); shape != shapes.end()) {
            for (int d : {0, -1, 1, -2, 2}) {
              const std::optional<double> v = tflops_6g(mean.get<double>(), shape->second, d);
              if (v && same_bits(*v, tflops.get<double>())) {
                residual = d;
                break;
              }
            }
          }
        }
        if (residual) {
          derived.push_back(*residual);
          ++residuals;
        } else {
          derived.push_back(json::array({chunk[derive->tflops].back()}));
        }
      }
      ++written;
      if (++in_chunk == kColumnarChunk) {
        flush();
        in_chunk = 0;
      }
    }
    if (in_chunk) flush();
    if (written != rows) throw Error("table '" + table + "' changed while it was written (" + std::to_string(rows) +
                                     " rows counted, " + std::to_string(written) + " read)");
    groups_written = groups_written || table == "groups";
  }
  // The end, so that a file cut between two tables is not read as a smaller registry.
  out << json{{"end", kColumnarFormat}}.dump() << '\n';
  out.flush();
  if (!out) throw Error("cannot write '" + path + "': " + std::strerror(errno));
}

std::string first_difference(sqlite3* a, sqlite3* b) {
  const auto ta = user_tables(a), tb = user_tables(b);
  if (ta != tb) return "the tables or their SQL differ";
  for (const auto& [table, sql] : ta) {
    if (query_int(a, "SELECT count(*) FROM " + quoted(table)) != query_int(b, "SELECT count(*) FROM " + quoted(table)))
      return "table '" + table + "': the row counts differ";
    auto sa = select_in_row_order(a, table), sb = select_in_row_order(b, table);
    for (int64_t row = 1;; ++row) {
      const bool ra = sa->step(), rb = sb->step();
      if (ra != rb) return "table '" + table + "': the row counts differ";
      if (!ra) break;
      for (int c = 0; c < sa->columns(); ++c) {
        sqlite3_stmt* x = sa->get();
        sqlite3_stmt* y = sb->get();
        const int type = sqlite3_column_type(x, c);
        bool same = type == sqlite3_column_type(y, c);
        if (same && type == SQLITE_INTEGER) {
          same = sqlite3_column_int64(x, c) == sqlite3_column_int64(y, c);
        } else if (same && type == SQLITE_FLOAT) {
          const double u = sqlite3_column_double(x, c), v = sqlite3_column_double(y, c);
          same = std::memcmp(&u, &v, sizeof u) == 0;
        } else if (same && (type == SQLITE_TEXT || type == SQLITE_BLOB)) {
          const void* p = type == SQLITE_TEXT ? static_cast<const void*>(sqlite3_column_text(x, c)) : sqlite3_column_blob(x, c);
          const void* q = type == SQLITE_TEXT ? static_cast<const void*>(sqlite3_column_text(y, c)) : sqlite3_column_blob(y, c);
          const int n = sqlite3_column_bytes(x, c);
          same = n == sqlite3_column_bytes(y, c) && (n == 0 || std::memcmp(p, q, static_cast<size_t>(n)) == 0);
        }
        if (!same) return "table '" + table + "', row " + std::to_string(row) + ", column '" + sa->column_name(c) + "' differs";
      }
    }
  }
  return "";
}

void read_columnar(const std::string& path, const std::string& dest_db, const std::string& shard) {
  auto corrupt = [&](const std::string& what) { return Error("corrupt shard '" + shard + "': " + what); };
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error("cannot read '" + path + "': " + std::strerror(errno));
  std::string line;
  size_t line_no = 0;
  auto next_json = [&](const char* what) -> json {
    if (!std::getline(in, line)) throw corrupt(std::string("truncated: no ") + what + " at line " + std::to_string(line_no + 1));
    ++line_no;
    if (line.size() > kMaxLine) throw corrupt("line " + std::to_string(line_no) + " is too long");
    // Lines nest two levels (an array of values, a value an object of one string); a deeper one is
    // refused before nlohmann's recursion sees it.
    try {
      return parse_json_limited(line, "line " + std::to_string(line_no) + " (" + what + ")", 4);
    } catch (const Error& e) {
      throw corrupt(e.what());
    }
  };
  {
    const json head = next_json("format line");
    if (!head.is_object() || !head.contains("format") || head["format"] != kColumnarFormat)
      throw corrupt(std::string("not a columnar shard (its first line is not {\"format\":\"") + kColumnarFormat + "\"})");
  }
  sqlite3* db = open_db(dest_db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE);
  try {
    exec(db, "PRAGMA synchronous=OFF");
    if (query_int(db, "SELECT count(*) FROM sqlite_master") != 0)
      throw Error("cannot decode shard '" + shard + "' into '" + dest_db + "': the database is not empty");
    Transaction tx(db);
    for (;;) {
      const json h = next_json("table header or end line");
      if (h.is_object() && h.size() == 1 && h.contains("end") && h["end"] == kColumnarFormat) {
        if (in.peek() != std::char_traits<char>::eof()) throw corrupt("data after the end line " + std::to_string(line_no));
        break;
      }
      if (!h.is_object() || !h.contains("table") || !h["table"].is_string() || !h.contains("sql") || !h["sql"].is_string() ||
          !h.contains("columns") || !h["columns"].is_array() || !h.contains("rows") || !h["rows"].is_number_integer() ||
          h["rows"].get<int64_t>() < 0)
        throw corrupt("line " + std::to_string(line_no) + " is not a table header");
      const std::string table = h["table"].get<std::string>(), sql = h["sql"].get<std::string>();
      std::vector<std::string> columns;
      for (const json& c : h["columns"]) {
        if (!c.is_string()) throw corrupt("table '" + table + "': a column name is not a string");
        columns.push_back(c.get<std::string>());
      }
      if (columns.empty()) throw corrupt("table '" + table + "' has no columns");
      // One CREATE TABLE statement, creating exactly this (empty) table with these columns.
      if (sql.rfind("CREATE TABLE ", 0) != 0) throw corrupt("table '" + table + "': its SQL is not a CREATE TABLE statement");
      {
        sqlite3_stmt* st = nullptr;
        const char* tail = nullptr;
        if (sqlite3_prepare_v2(db, sql.c_str(), static_cast<int>(sql.size()), &st, &tail) != SQLITE_OK || !st) {
          sqlite3_finalize(st);
          throw corrupt("table '" + table + "': its SQL does not prepare: " + sqlite3_errmsg(db));
        }
        const std::string_view rest(tail ? tail : "");
        const bool single = rest.find_first_not_of(" \t\r\n") == std::string_view::npos;
        const int rc = single ? sqlite3_step(st) : SQLITE_MISUSE;
        sqlite3_finalize(st);
        if (!single) throw corrupt("table '" + table + "': its SQL holds more than one statement");
        if (rc != SQLITE_DONE) throw corrupt("table '" + table + "': " + sqlite3_errmsg(db));
      }
      {
        Stmt s(db, "SELECT count(*) FROM sqlite_master WHERE type='table' AND name=?1");
        s.bind_all(table);
        if (!s.step() || s.col_int(0) != 1) throw corrupt("table '" + table + "': its SQL creates another table");
      }
      if (table_columns(db, table) != columns) throw corrupt("table '" + table + "': its SQL does not have the listed columns");
      if (query_int(db, "SELECT count(*) FROM " + quoted(table)) != 0)
        throw corrupt("table '" + table + "': its SQL fills the table");

      // The groups decoded so far (a shard's groups table comes before its measurements).
      const std::optional<TflopsColumns> derive = tflops_columns(table, columns);
      const Shapes shapes = derive ? group_shapes(db) : Shapes{};
      std::string insert = "INSERT INTO " + quoted(table) + " VALUES(";
      for (size_t c = 0; c < columns.size(); ++c) insert += c ? ",?" : "?";
      Stmt ins(db, insert + ")");
      const auto rows = h["rows"].get<int64_t>();
      std::vector<json> chunk(columns.size());
      for (int64_t done = 0; done < rows;) {
        const size_t n = static_cast<size_t>(std::min<int64_t>(rows - done, static_cast<int64_t>(kColumnarChunk)));
        std::optional<size_t> derived_line;
        for (size_t c = 0; c < columns.size(); ++c) {
          chunk[c] = next_json("column");
          if (derive && c == derive->tflops && chunk[c].is_object()) {
            const json& d = chunk[c];
            if (d.size() != 2 || !d.contains("derive") || d["derive"] != kTflopsRule || !d.contains("values"))
              throw corrupt("table '" + table + "', column '" + columns[c] + "': line " + std::to_string(line_no) +
                            " is not a derived column of the format");
            chunk[c] = json(d["values"]);
            derived_line = line_no;
          }
          if (!chunk[c].is_array() || chunk[c].size() != n)
            throw corrupt("table '" + table + "', column '" + columns[c] + "': line " + std::to_string(line_no) +
                          " is not an array of " + std::to_string(n) + " values");
        }
        if (derived_line) {
          // Residuals back to values (the writer's own function), others out of their arrays.
          json& col = chunk[derive->tflops];
          for (size_t r = 0; r < n; ++r) {
            json& v = col[r];
            if (v.is_array() && v.size() == 1) {
              json inner = std::move(v[0]);
              v = std::move(inner);
              continue;
            }
            const json& mean = chunk[derive->mean][r];
            const json& key = chunk[derive->group_key][r];
            std::optional<double> value;
            if (v.is_number_integer() && std::abs(v.get<int64_t>()) <= kMaxResidual && mean.is_number_float() &&
                key.is_string()) {
              if (const auto shape = shapes.find(key.get_ref<const std::string&>()); shape != shapes.end())
                value = tflops_6g(mean.get<double>(), shape->second, static_cast<int>(v.get<int64_t>()));
            }
            if (!value)
              throw corrupt("table '" + table + "', column '" + columns[derive->tflops] + "': line " +
                            std::to_string(*derived_line) + ", row " + std::to_string(done + 1 + static_cast<int64_t>(r)) +
                            ": a residual without a value to derive it from");
            v = *value;
          }
        }
        for (size_t r = 0; r < n; ++r) {
          for (size_t c = 0; c < columns.size(); ++c) {
            const json& v = chunk[c][r];
            const int i = static_cast<int>(c) + 1;
            auto bad = [&] {
              return corrupt("table '" + table + "', column '" + columns[c] + "', row " + std::to_string(done + 1 + static_cast<int64_t>(r)) +
                             ": not a value of the format: " + v.dump(-1, ' ', false, json::error_handler_t::replace));
            };
            if (v.is_null()) {
              sqlite3_bind_null(ins.get(), i);
            } else if (v.is_number_unsigned()) {
              if (v.get<uint64_t>() > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) throw bad();
              ins.bind(i, static_cast<int64_t>(v.get<uint64_t>()));
            } else if (v.is_number_integer()) {
              ins.bind(i, v.get<int64_t>());
            } else if (v.is_number_float()) {
              ins.bind(i, v.get<double>());
            } else if (v.is_string()) {
              ins.bind(i, v.get_ref<const std::string&>());
            } else if (v.is_object() && v.size() == 1 && v.begin().value().is_string()) {
              const std::string& key = v.begin().key();
              const std::string& s = v.begin().value().get_ref<const std::string&>();
              std::string bytes;
              if (key == "real" && (s == "inf" || s == "-inf")) {
                ins.bind(i, s == "inf" ? std::numeric_limits<double>::infinity() : -std::numeric_limits<double>::infinity());
              } else if (key == "text_hex" && from_hex(s, bytes)) {
                sqlite3_bind_text(ins.get(), i, bytes.data(), static_cast<int>(bytes.size()), SQLITE_TRANSIENT);
              } else if (key == "blob_hex" && from_hex(s, bytes)) {
                sqlite3_bind_blob(ins.get(), i, bytes.data(), static_cast<int>(bytes.size()), SQLITE_TRANSIENT);
              } else {
                throw bad();
              }
            } else {
              throw bad();
            }
          }
          try {
            ins.run();
          } catch (const Error& e) {
            throw corrupt("table '" + table + "', row " + std::to_string(done + 1 + static_cast<int64_t>(r)) + ": " + e.what());
          }
          ins.reset();
        }
        done += static_cast<int64_t>(n);
      }
    }
    if (in.bad()) throw Error("cannot read '" + path + "': " + std::strerror(errno));
    tx.commit();
  } catch (...) {
    close_db(db);
    throw;
  }
  close_db(db);
}

}  // namespace cks::reg
