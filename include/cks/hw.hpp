// cks/hw.hpp — hardware descriptor h of the paper (architecture descriptors).
#pragma once
#include <string>
#include <vector>

namespace cks {

struct HardwareDesc {
  std::string preset;  // preset key ("h200-sxm") or "device:N"
  std::string name;
  int cc_major = 9, cc_minor = 0;
  int sm_count = 0;
  int sm_clock_mhz = 0;
  long smem_per_sm_bytes = 0;           // shared memory per SM
  long smem_per_block_optin_bytes = 0;  // max dynamic smem per block after opt-in
  long regs_per_sm = 0;                 // 32-bit registers per SM
  int regs_per_thread_max = 255;
  int max_threads_per_sm = 2048;
  int max_blocks_per_sm = 32;
  int max_cluster_size_portable = 8;
  int max_cluster_size_nonportable = 16;
  double l2_bytes = 0;                  // LLC capacity
  double hbm_bytes = 0;
  double hbm_bw_bytes_per_s = 0;        // HBM bandwidth
  double bf16_dense_flops_per_s = 0;    // dense BF16 tensor peak
  double tma_bw_bytes_per_s = 0;        // L2/TMA -> SMEM bandwidth estimate (whole chip)

  // Derived quantities.
  double ridge_flops_per_byte() const { return bf16_dense_flops_per_s / hbm_bw_bytes_per_s; }
  double bf16_flops_per_sm_per_s() const { return bf16_dense_flops_per_s / sm_count; }
  double tma_bw_per_sm_bytes_per_s() const { return tma_bw_bytes_per_s / sm_count; }
};

// Path of the presets file hw/presets.json: $CKS_DATA_DIR, the installed share/cks beside the library
// or executable, the source tree's data/, a relocated build tree's data/ (docs/library.md "Data files").
std::string hw_presets_path();
std::vector<std::string> hw_preset_names();
// Throws cks::Error "unknown hardware preset 'x' (known: ...)".
HardwareDesc hw_preset(const std::string& name);
// The default preset for features/sampling: "h200-sxm".
inline const char* kDefaultPreset = "h200-sxm";
const HardwareDesc& default_hw();
// Reads the live GPU through the CUDA runtime (dlopen of libcudart, so the binary runs on
// machines without CUDA). Rates the runtime does not expose (HBM bandwidth, tensor peak, TMA
// bandwidth) come from the preset whose name matches, else are estimated from clocks/bus width.
// Throws cks::Error "no CUDA device N: <reason>" when none is present.
HardwareDesc hw_from_device(int index);

}  // namespace cks
