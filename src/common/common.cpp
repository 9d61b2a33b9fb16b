#include "cks/common.hpp"

#include <nlohmann/json.hpp>
#include <unistd.h>

#include <algorithm>
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

namespace {

// Length of the valid UTF-8 sequence starting at s[i] (2-4), or 0 when it is not one (overlong
// forms, surrogates and code points above U+10FFFF are invalid).
size_t utf8_sequence(std::string_view s, size_t i) {
  const auto b = [&](size_t j) { return static_cast<unsigned char>(s[j]); };
  const unsigned char c = b(i);
  size_t len = 0;
  uint32_t cp = 0;
  if (c >= 0xC2 && c <= 0xDF) len = 2, cp = c & 0x1F;
  else if (c >= 0xE0 && c <= 0xEF) len = 3, cp = c & 0x0F;
  else if (c >= 0xF0 && c <= 0xF4) len = 4, cp = c & 0x07;
  else return 0;
  if (i + len > s.size()) return 0;
  for (size_t j = 1; j < len; ++j) {
    if ((b(i + j) & 0xC0) != 0x80) return 0;
    cp = (cp << 6) | (b(i + j) & 0x3F);
  }
  if ((len == 3 && (cp < 0x800 || (cp >= 0xD800 && cp <= 0xDFFF))) || (len == 4 && (cp < 0x10000 || cp > 0x10FFFF)))
    return 0;
  return len;
}

void append_hex_byte(std::string& out, unsigned char c) {
  static const char kHex[] = "0123456789abcdef";
  out += "\\x";
  out += kHex[c >> 4];
  out += kHex[c & 15];
}

}  // namespace

std::string one_line(std::string_view message, size_t max_bytes) {
  std::string out;
  out.reserve(std::min(message.size(), max_bytes) + 16);
  size_t i = 0;
  while (i < message.size()) {
    if (out.size() >= max_bytes) break;
    const unsigned char c = static_cast<unsigned char>(message[i]);
    if (c >= 0x20 && c < 0x7F) {
      out += static_cast<char>(c);
      ++i;
    } else if (c == '\n') {
      out += "\\n", ++i;
    } else if (c == '\r') {
      out += "\\r", ++i;
    } else if (c == '\t') {
      out += "\\t", ++i;
    } else if (c < 0x80) {
      append_hex_byte(out, c), ++i;  // other C0 controls and DEL
    } else if (const size_t len = utf8_sequence(message, i); len > 0 && !(len == 2 && c == 0xC2 && static_cast<unsigned char>(message[i + 1]) < 0xA0)) {
      out.append(message.substr(i, len));  // printable multi-byte character
      i += len;
    } else if (len == 2) {
      append_hex_byte(out, c), append_hex_byte(out, static_cast<unsigned char>(message[i + 1]));  // C1 control
      i += 2;
    } else {
      append_hex_byte(out, c), ++i;  // not UTF-8
    }
  }
  if (i < message.size()) out += " ... (" + std::to_string(message.size() - i) + " more bytes)";
  return out;
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

std::vector<std::string> csv_fields(std::string_view line) {
  std::vector<std::string> out(1);
  bool quoted = false;
  for (size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    if (quoted) {
      if (c == '"' && i + 1 < line.size() && line[i + 1] == '"') out.back() += '"', ++i;
      else if (c == '"') quoted = false;
      else out.back() += c;
    } else if (c == '"') {
      quoted = true;
    } else if (c == ',') {
      out.emplace_back();
    } else if (c != '\r') {
      out.back() += c;
    }
  }
  return out;
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
  // "%016llx" without snprintf (the catalogue computes 34,000 kernel IDs at start-up).
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string s(16, '0');
  for (int i = 15; i >= 0; --i, v >>= 4) s[static_cast<size_t>(i)] = kDigits[v & 15];
  return s;
}

void progress(std::string_view what, size_t done, size_t total) {
  static const bool tty = isatty(2) || std::getenv("CKS_PROGRESS") != nullptr;
  if (!tty) return;
  std::fprintf(stderr, "\r%.*s: %zu/%zu", static_cast<int>(what.size()), what.data(), done, total);
  if (done >= total) std::fputc('\n', stderr);
  std::fflush(stderr);
}

}  // namespace cks
