// cks/common.hpp — errors and tabular output shared by every module.
#pragma once
#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>
#include <variant>
#include <vector>
#include <ostream>

namespace cks {

// Every user-facing failure is a cks::Error: the CLI prints "cks: error: <what>" on one
// line and exits non-zero. Internal invariants use assert / std::logic_error.
class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// A message as one printable line: control characters (C0, DEL, C1) and bytes that are not
// valid UTF-8 are escaped (\n, \r, \t, \xNN), and a message longer than max_bytes is cut at a
// character boundary with " ... (N more bytes)". The CLI's error printer uses it.
std::string one_line(std::string_view message, size_t max_bytes = 2000);

// Output formats every listing supports.
enum class Format { csv, json, md };
Format parse_format(std::string_view s);  // throws Error on unknown
std::string_view to_string(Format f);

// A simple column-typed table: cells are null, int, double or string.
using Cell = std::variant<std::monostate, int64_t, double, std::string>;

class Table {
 public:
  explicit Table(std::vector<std::string> columns) : columns_(std::move(columns)) {}
  void add_row(std::vector<Cell> row);  // throws std::logic_error on width mismatch
  const std::vector<std::string>& columns() const { return columns_; }
  const std::vector<std::vector<Cell>>& rows() const { return rows_; }
  size_t size() const { return rows_.size(); }
  void reserve(size_t n) { rows_.reserve(n); }
  // Writes the table. json = array of objects (one per row).
  void write(std::ostream& os, Format f) const;

 private:
  std::vector<std::string> columns_;
  std::vector<std::vector<Cell>> rows_;
};

// CSV-escape one field (RFC 4180).
std::string csv_escape(std::string_view s);
// The fields of one CSV record (RFC 4180: quoted fields may hold commas and doubled quotes; a
// carriage return outside quotes is dropped). Records do not span lines: the project never writes newlines in fields.
std::vector<std::string> csv_fields(std::string_view line);
// Format a double compactly and round-trippably ("%.17g" trimmed to shortest that round-trips).
std::string format_double(double v);

// 64-bit FNV-1a, used for stable IDs (kernel IDs, library names).
uint64_t fnv1a64(std::string_view s);
std::string hex64(uint64_t v);

// Progress on stderr for long work (suppressed when stderr is not a TTY unless forced).
void progress(std::string_view what, size_t done, size_t total);

}  // namespace cks
