// cks hw — print a hardware descriptor (preset or live device).
#include "cli/commands.hpp"
#include "cli/util.hpp"

#include <iostream>

namespace cks::cli {

static Table hw_table(const HardwareDesc& h) {
  Table t({"field", "value", "unit"});
  auto i = [&](const char* f, int64_t v, const char* u) { t.add_row({std::string(f), v, std::string(u)}); };
  auto d = [&](const char* f, double v, const char* u) { t.add_row({std::string(f), v, std::string(u)}); };
  t.add_row({std::string("preset"), h.preset, std::string("")});
  t.add_row({std::string("name"), h.name, std::string("")});
  t.add_row({std::string("compute_capability"), std::to_string(h.cc_major) + "." + std::to_string(h.cc_minor), std::string("")});
  i("sm_count", h.sm_count, "SMs");
  i("sm_clock_mhz", h.sm_clock_mhz, "MHz");
  i("smem_per_sm", h.smem_per_sm_bytes, "bytes");
  i("smem_per_block_optin", h.smem_per_block_optin_bytes, "bytes");
  i("regs_per_sm", h.regs_per_sm, "32-bit registers");
  i("regs_per_thread_max", h.regs_per_thread_max, "32-bit registers");
  i("max_threads_per_sm", h.max_threads_per_sm, "threads");
  i("max_blocks_per_sm", h.max_blocks_per_sm, "blocks");
  i("max_cluster_size_portable", h.max_cluster_size_portable, "CTAs");
  d("llc_bytes", h.l2_bytes, "bytes");
  d("hbm_bytes", h.hbm_bytes, "bytes");
  d("hbm_bw", h.hbm_bw_bytes_per_s, "bytes/s");
  d("bf16_dense_peak", h.bf16_dense_flops_per_s, "flop/s");
  d("tma_l2_bw_estimate", h.tma_bw_bytes_per_s, "bytes/s");
  d("ridge_intensity", h.ridge_flops_per_byte(), "flop/byte");
  d("bf16_peak_per_sm", h.bf16_flops_per_sm_per_s(), "flop/s");
  d("tma_bw_per_sm", h.tma_bw_per_sm_bytes_per_s(), "bytes/s");
  return t;
}

void register_hw(CLI::App& app) {
  auto* cmd = app.add_subcommand("hw", "print a hardware descriptor (preset or live GPU)");
  static std::string preset = kDefaultPreset, fmt;
  static int device = -1;
  static bool list = false;
  cmd->add_option("--preset", preset, "preset name from data/hw/presets.json")->capture_default_str();
  cmd->add_option("--device", device, "read the live CUDA device N instead of a preset")->transform(uint_in(0, 1023));
  cmd->add_flag("--list", list, "list the preset names");
  add_format(cmd, fmt, "md");
  cmd->callback([] {
    Format f = parse_format(fmt);
    if (list) {
      Table t({"preset", "name", "ridge_intensity"});
      for (auto& n : hw_preset_names()) {
        auto h = hw_preset(n);
        t.add_row({n, h.name, h.ridge_flops_per_byte()});
      }
      t.write(std::cout, f);
      return;
    }
    HardwareDesc h = device >= 0 ? hw_from_device(device) : hw_preset(preset);
    hw_table(h).write(std::cout, f);
  });
}

}  // namespace cks::cli
