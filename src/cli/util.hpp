// Small helpers shared by the subcommand files.
#pragma once
#include <CLI/CLI.hpp>
#include <cstdint>
#include <string>
#include <vector>

#include "cks/catalogue.hpp"
#include "cks/common.hpp"
#include "cks/hw.hpp"

namespace cks::cli {

// Adds --format csv|json|md (default given) and returns the option.
inline CLI::Option* add_format(CLI::App* cmd, std::string& fmt, const char* def = "csv") {
  fmt = def;
  return cmd->add_option("--format,-o", fmt, "output format: csv, json or md")->capture_default_str();
}

// --- Numeric options (issue 18) -------------------------------------------------------------
// Every numeric option of every subcommand takes one of these validators, so that a bad value is
// refused while parsing, with one line naming the option ("--limit: ..."), before any work.
// CLI11's own conversion is lax (strtoll base 0: "010" is octal, "-1" wraps into an unsigned,
// overflow saturates; doubles take nan and inf), so:
//   integers: optional '-', decimal digits only, in [lo, hi]; the text is rewritten to its
//             canonical decimal form, so the conversion reads exactly what was checked (attach
//             them with ->transform(), which lets a validator rewrite; ->check() would not);
//   reals:    a finite number (no nan, no inf, no overflow) in [lo, hi] (lo excluded when open_lo).
CLI::Validator int_in(int64_t lo, int64_t hi);
CLI::Validator uint_in(uint64_t lo, uint64_t hi);
CLI::Validator real_in(double lo, double hi, bool open_lo = false);
inline CLI::Validator count() { return uint_in(0, UINT32_MAX); }          // 0, 1, 2, ... (a size)
inline CLI::Validator positive_count() { return uint_in(1, UINT32_MAX); } // 1, 2, ...
inline CLI::Validator seed() { return uint_in(0, UINT64_MAX); }            // any unsigned 64-bit seed
inline CLI::Validator non_negative_real() { return real_in(0, 1e300); }
inline CLI::Validator positive_real() { return real_in(0, 1e300, true); }
inline CLI::Validator fraction() { return real_in(0, 1); }                 // [0, 1]
inline CLI::Validator finite_real() { return real_in(-1e300, 1e300); }     // any finite number (the command checks its range)

// Problem options shared by features/sample/select: --m --n --k --layout [--preset].
struct ProblemOpts {
  long m = 0, n = 0, k = 0;
  std::string layout;
  std::string preset = kDefaultPreset;
};
inline void add_problem(CLI::App* cmd, ProblemOpts& p, bool with_preset = true) {
  // Sign and overflow here; range and alignment in validate_problem (cks::check_problem).
  cmd->add_option("--m", p.m, "rows of A and D")->required()->transform(int_in(INT64_MIN, INT64_MAX));
  cmd->add_option("--n", p.n, "columns of B and D")->required()->transform(int_in(INT64_MIN, INT64_MAX));
  cmd->add_option("--k", p.k, "contraction dimension")->required()->transform(int_in(INT64_MIN, INT64_MAX));
  cmd->add_option("--layout", p.layout, "operand layout: tn, nt, nn or tt")->required();
  if (with_preset) cmd->add_option("--preset", p.preset, "hardware preset")->capture_default_str();
}
// Where a reading command takes its data (the convention of `cks data`, `train`, `eval`):
// --registry DB, or --data DIR of shards (*.db.xz, *.db.gz, *.cols.xz) merged when read (default data/shards).
struct SourceOpts {
  std::string registry, data;
};
inline void add_source(CLI::App* cmd, SourceOpts& o) {
  auto* r = cmd->add_option("--registry", o.registry, "a registry file (.db)");
  auto* d = cmd->add_option("--data", o.data, "a directory of shards (*.db.xz, *.db.gz, *.cols.xz), merged when read (default data/shards)");
  r->excludes(d);
}

// Validates the layout, then M, N, K with cks::check_problem (positive, at most 2^31-1, the
// layout's contiguous dimensions multiples of 8). Throws cks::Error with one clear line.
Layout validate_problem(const ProblemOpts& p);

// Layout names as given to a comma-delimited option (empty: no filter); one-line error on a bad name.
std::vector<Layout> parse_layouts(const std::vector<std::string>& names);

}  // namespace cks::cli
