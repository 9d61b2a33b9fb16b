#include "cli/util.hpp"

#include <cerrno>
#include <cmath>
#include <cstdlib>

namespace cks::cli {

Layout validate_problem(const ProblemOpts& p) {
  const Layout layout = parse_layout(p.layout);
  check_problem(p.m, p.n, p.k, layout);
  return layout;
}

std::vector<Layout> parse_layouts(const std::vector<std::string>& names) {
  std::vector<Layout> out;
  for (const auto& n : names) out.push_back(parse_layout(n));
  return out;
}

namespace {

using Int128 = __int128;

std::string to_text(Int128 v) {
  if (v == 0) return "0";
  const bool neg = v < 0;
  unsigned __int128 u = neg ? static_cast<unsigned __int128>(-(v + 1)) + 1 : static_cast<unsigned __int128>(v);
  std::string s;
  while (u > 0) {
    s.insert(s.begin(), static_cast<char>('0' + static_cast<int>(u % 10)));
    u /= 10;
  }
  return neg ? "-" + s : s;
}

// Strict decimal integer: optional '-', 1 to 25 digits. nullopt-like false on anything else.
bool parse_decimal(const std::string& s, Int128& out) {
  size_t i = 0;
  const bool neg = !s.empty() && s[0] == '-';
  if (neg) i = 1;
  if (i == s.size() || s.size() - i > 25) return false;
  Int128 v = 0;
  for (; i < s.size(); ++i) {
    if (s[i] < '0' || s[i] > '9') return false;
    v = v * 10 + (s[i] - '0');
  }
  out = neg ? -v : v;
  return true;
}

CLI::Validator integer_validator(Int128 lo, Int128 hi) {
  const std::string range = "[" + to_text(lo) + ", " + to_text(hi) + "]";
  const std::string desc = lo == Int128(INT64_MIN) && hi == Int128(INT64_MAX) ? ""  // sign and overflow only
                           : hi >= Int128(UINT32_MAX) && lo >= 0                ? ">= " + to_text(lo)
                                                                                : "in " + range;
  return CLI::Validator(
      [lo, hi, range](std::string& text) -> std::string {
        Int128 v = 0;
        if (!parse_decimal(text, v)) return "'" + text + "' is not a decimal integer";
        if (v < lo || v > hi) {
          if (lo == 0 && v < 0) return "must not be negative (got " + text + ")";
          return text + " is out of range " + range;
        }
        text = to_text(v);
        return "";
      },
      desc);
}

}  // namespace

CLI::Validator int_in(int64_t lo, int64_t hi) { return integer_validator(lo, hi); }
CLI::Validator uint_in(uint64_t lo, uint64_t hi) { return integer_validator(lo, hi); }

CLI::Validator real_in(double lo, double hi, bool open_lo) {
  const std::string range = (open_lo ? "(" : "[") + format_double(lo) + ", " + format_double(hi) + "]";
  return CLI::Validator(
      [lo, hi, open_lo, range](std::string& text) -> std::string {
        if (text.empty()) return "'' is not a number";
        errno = 0;
        char* end = nullptr;
        const double v = std::strtod(text.c_str(), &end);
        if (end != text.c_str() + text.size() || std::isspace(static_cast<unsigned char>(text[0])))
          return "'" + text + "' is not a number";
        if (!std::isfinite(v) || (errno == ERANGE && std::fabs(v) > 1)) return "must be a finite number (got " + text + ")";
        if (v < lo || v > hi || (open_lo && v == lo)) {
          if (open_lo && lo == 0 && v <= 0) return "must be positive (got " + text + ")";
          if (lo == 0 && v < 0) return "must not be negative (got " + text + ")";
          return text + " is out of range " + range;
        }
        return "";
      },
      "in " + range);
}

}  // namespace cks::cli
