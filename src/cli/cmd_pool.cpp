// cks pool — select a compiled-kernel pool covering every catalogue axis (include/cks/pool.hpp).
#include <iostream>
#include <map>

#include "cks/pool.hpp"
#include "cli/commands.hpp"
#include "cli/util.hpp"

namespace cks::cli {

void register_pool(CLI::App& app) {
  auto* cmd = app.add_subcommand("pool", "select a kernel pool to compile (covers every catalogue axis)");
  static PoolOptions o;
  static std::string layout = "tn", preset = kDefaultPreset, fmt;
  static bool ids_only = false;
  cmd->add_option("--layout", layout, "operand layout: tn, nt, nn or tt")->capture_default_str();
  cmd->add_option("--size", o.size, "number of kernels")->transform(positive_count())->capture_default_str();
  cmd->add_option("--seed", o.seed, "seed of the exploration draw")->transform(seed())->capture_default_str();
  cmd->add_option("--top-fraction", o.top_fraction, "share of the pool taken by prior score")->check(fraction())->capture_default_str();
  cmd->add_option("--preset", preset, "hardware preset")->capture_default_str();
  cmd->add_flag("--ids", ids_only, "print a pool file (kernel IDs, one per line, with a provenance header)");
  add_format(cmd, fmt);
  cmd->callback([] {
    o.layout = parse_layout(layout);
    const HardwareDesc hw = hw_preset(preset);
    const Format f = parse_format(fmt);
    const auto pool = select_pool(o, hw);
    const auto& kernels = Catalogue::get(o.layout).kernels();
    if (ids_only) {
      std::cout << "# cks pool --layout " << layout << " --size " << o.size << " --seed " << o.seed
                << " --top-fraction " << format_double(o.top_fraction) << " --preset " << preset << "\n";
      std::map<std::string, int> by_reason;
      for (const auto& e : pool) ++by_reason[e.reason.substr(0, e.reason.find(':'))];
      std::cout << "# " << pool.size() << " kernels:";
      for (auto& [r, c] : by_reason) std::cout << " " << r << "=" << c;
      std::cout << "\n";
      for (const auto& e : pool) std::cout << kernels[e.kernel].id() << "\n";
      return;
    }
    Table t({"kernel_id", "canonical", "prior", "reason"});
    for (const auto& e : pool) t.add_row({kernels[e.kernel].id(), kernels[e.kernel].canonical(), e.prior, e.reason});
    t.write(std::cout, f);
  });
}

}  // namespace cks::cli
