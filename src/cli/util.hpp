// Small helpers shared by the subcommand files.
#pragma once
#include <CLI/CLI.hpp>
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

// Problem options shared by features/sample/select: --m --n --k --layout [--preset].
struct ProblemOpts {
  long m = 0, n = 0, k = 0;
  std::string layout;
  std::string preset = kDefaultPreset;
};
inline void add_problem(CLI::App* cmd, ProblemOpts& p, bool with_preset = true) {
  cmd->add_option("--m", p.m, "rows of A and D")->required();
  cmd->add_option("--n", p.n, "columns of B and D")->required();
  cmd->add_option("--k", p.k, "contraction dimension")->required();
  cmd->add_option("--layout", p.layout, "operand layout: tn, nt, nn or tt")->required();
  if (with_preset) cmd->add_option("--preset", p.preset, "hardware preset")->capture_default_str();
}
// Where a reading command takes its data (the convention of `cks data`, `train`, `eval`):
// --registry DB, or --data DIR of *.db.gz shards merged when read (default data/shards).
struct SourceOpts {
  std::string registry, data;
};
inline void add_source(CLI::App* cmd, SourceOpts& o) {
  auto* r = cmd->add_option("--registry", o.registry, "a registry file (.db)");
  auto* d = cmd->add_option("--data", o.data, "a directory of *.db.gz shards, merged when read (default data/shards)");
  r->excludes(d);
}

// Validates M, N, K (> 0 and multiples of 8, the catalogue's alignment) and the layout.
// Throws cks::Error with one clear line.
Layout validate_problem(const ProblemOpts& p);

// Layout names as given to a comma-delimited option (empty: no filter); one-line error on a bad name.
std::vector<Layout> parse_layouts(const std::vector<std::string>& names);

}  // namespace cks::cli
