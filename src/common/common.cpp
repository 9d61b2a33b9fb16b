#include "cks/common.hpp"

#include <nlohmann/json.hpp>
#include <unistd.h>

#include <charconv>
#include <cmath>
#include <cstdio>
#include <iostream>

namespace cks {

Format parse_format(std::string_view s) {
  if (s == "csv") return Format::csv;
  if (s == "json") return Format::json;
  if (s == "md") return Format::md;
  throw Error("unknown format '" + std::string(s) + "' (expected csv, json or md)");
}

std::string_view to_string(Format f) {
  switch (f) {
    case Format::csv: return "csv";
    case Format::json: return "json";
    case Format::md: return "md";
  }
  return "?";
}

void Table::add_row(std::vector<Cell> row) {
  if (row.size() != columns_.size())
    throw std::logic_error("Table::add_row: width mismatch");
  rows_.push_back(std::move(row));
}

std::string csv_escape(std::string_view s) {
  bool quote = s.find_first_of(",\"\n\r") != std::string_view::npos;
  if (!quote) return std::string(s);
  std::string out = "\"";
  for (char c : s) {
    if (c == '"') out += '"';
    out += c;
  }
  out += '"';
  return out;
}

std::string format_double(double v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  char buf[64];
  auto r = std::to_chars(buf, buf + sizeof buf, v);  // shortest round-trip
  return std::string(buf, r.ptr);
}

static std::string cell_text(const Cell& c) {
  if (std::holds_alternative<std::monostate>(c)) return "";
  if (auto p = std::get_if<int64_t>(&c)) return std::to_string(*p);
  if (auto p = std::get_if<double>(&c)) return format_double(*p);
  return std::get<std::string>(c);
}

void Table::write(std::ostream& os, Format f) const {
  switch (f) {
    case Format::csv: {
      for (size_t i = 0; i < columns_.size(); ++i) os << (i ? "," : "") << csv_escape(columns_[i]);
      os << '\n';
      std::string line;
      for (const auto& r : rows_) {
        line.clear();
        for (size_t i = 0; i < r.size(); ++i) {
          if (i) line += ',';
          line += csv_escape(cell_text(r[i]));
        }
        line += '\n';
        os << line;
      }
      break;
    }
    case Format::json: {
      nlohmann::ordered_json arr = nlohmann::ordered_json::array();
      for (const auto& r : rows_) {
        nlohmann::ordered_json o;
        for (size_t i = 0; i < r.size(); ++i) {
          const auto& c = r[i];
          if (std::holds_alternative<std::monostate>(c)) o[columns_[i]] = nullptr;
          else if (auto p = std::get_if<int64_t>(&c)) o[columns_[i]] = *p;
          else if (auto p = std::get_if<double>(&c)) {
            if (std::isfinite(*p)) o[columns_[i]] = *p; else o[columns_[i]] = nullptr;
          } else o[columns_[i]] = std::get<std::string>(c);
        }
        arr.push_back(std::move(o));
      }
      os << arr.dump(2) << '\n';
      break;
    }
    case Format::md: {
      os << '|';
      for (const auto& c : columns_) os << ' ' << c << " |";
      os << "\n|";
      for (size_t i = 0; i < columns_.size(); ++i) os << " --- |";
      os << '\n';
      for (const auto& r : rows_) {
        os << '|';
        for (const auto& c : r) {
          std::string t = cell_text(c);
          for (auto& ch : t) if (ch == '|') ch = '/';
          os << ' ' << t << " |";
        }
        os << '\n';
      }
      break;
    }
  }
}

uint64_t fnv1a64(std::string_view s) {
  uint64_t h = 14695981039346656037ull;
  for (unsigned char c : s) {
    h ^= c;
    h *= 1099511628211ull;
  }
  return h;
}

std::string hex64(uint64_t v) {
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(v));
  return buf;
}

void progress(std::string_view what, size_t done, size_t total) {
  static const bool tty = isatty(2) || std::getenv("CKS_PROGRESS") != nullptr;
  if (!tty) return;
  std::fprintf(stderr, "\r%.*s: %zu/%zu", static_cast<int>(what.size()), what.data(), done, total);
  if (done >= total) std::fputc('\n', stderr);
  std::fflush(stderr);
}

}  // namespace cks
