#include "cks/hw.hpp"

#include <dlfcn.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <nlohmann/json.hpp>

#include "cks/common.hpp"

namespace fs = std::filesystem;

namespace cks {

std::string hw_presets_path() {
  if (const char* d = std::getenv("CKS_DATA_DIR")) {
    fs::path p = fs::path(d) / "hw" / "presets.json";
    if (fs::exists(p)) return p.string();
  }
  fs::path src = fs::path(CKS_SOURCE_DIR) / "data" / "hw" / "presets.json";
  if (fs::exists(src)) return src.string();
  // Relocated binary: <root>/build/bin/cks -> <root>/data/hw/presets.json
  std::error_code ec;
  fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    fs::path p = exe.parent_path().parent_path().parent_path() / "data" / "hw" / "presets.json";
    if (fs::exists(p)) return p.string();
  }
  throw Error("hardware presets file not found (set CKS_DATA_DIR to the repository's data/ folder)");
}

static const nlohmann::json& presets_json() {
  static std::once_flag once;
  static nlohmann::json j;
  std::call_once(once, [] {
    std::string path = hw_presets_path();
    std::ifstream in(path);
    try {
      j = nlohmann::json::parse(in);
    } catch (const std::exception& e) {
      throw Error("cannot parse " + path + ": " + e.what());
    }
  });
  return j;
}

std::vector<std::string> hw_preset_names() {
  std::vector<std::string> out;
  for (auto& [k, v] : presets_json().at("presets").items()) out.push_back(k);
  return out;
}

static HardwareDesc from_json(const std::string& key, const nlohmann::json& p) {
  HardwareDesc h;
  h.preset = key;
  try {
    h.name = p.at("name").get<std::string>();
    h.cc_major = p.at("cc_major");
    h.cc_minor = p.at("cc_minor");
    h.sm_count = p.at("sm_count");
    h.sm_clock_mhz = p.at("sm_clock_mhz");
    h.smem_per_sm_bytes = p.at("smem_per_sm_bytes");
    h.smem_per_block_optin_bytes = p.at("smem_per_block_optin_bytes");
    h.regs_per_sm = p.at("regs_per_sm");
    h.regs_per_thread_max = p.at("regs_per_thread_max");
    h.max_threads_per_sm = p.at("max_threads_per_sm");
    h.max_blocks_per_sm = p.at("max_blocks_per_sm");
    h.max_cluster_size_portable = p.at("max_cluster_size_portable");
    h.max_cluster_size_nonportable = p.at("max_cluster_size_nonportable");
    h.l2_bytes = p.at("l2_bytes");
    h.hbm_bytes = p.at("hbm_bytes");
    h.hbm_bw_bytes_per_s = p.at("hbm_bw_bytes_per_s");
    h.bf16_dense_flops_per_s = p.at("bf16_dense_flops_per_s");
    h.tma_bw_bytes_per_s = p.at("tma_bw_bytes_per_s");
  } catch (const nlohmann::json::exception& e) {
    throw Error("hardware preset '" + key + "' is incomplete: " + e.what());
  }
  if (h.sm_count <= 0 || h.hbm_bw_bytes_per_s <= 0 || h.bf16_dense_flops_per_s <= 0)
    throw Error("hardware preset '" + key + "' has non-positive rates");
  return h;
}

HardwareDesc hw_preset(const std::string& name) {
  const auto& ps = presets_json().at("presets");
  auto it = ps.find(name);
  if (it == ps.end()) {
    std::string known;
    for (auto& n : hw_preset_names()) known += (known.empty() ? "" : ", ") + n;
    throw Error("unknown hardware preset '" + name + "' (known: " + known + ")");
  }
  return from_json(name, *it);
}

const HardwareDesc& default_hw() {
  static const HardwareDesc h = hw_preset(kDefaultPreset);
  return h;
}

// --- live device through the CUDA runtime, loaded at run time ----------------------------
namespace {
// cudaDeviceAttr values (stable across CUDA versions).
enum : int {
  kAttrMaxThreadsPerBlock = 1, kAttrClockRate = 13, kAttrMultiProcessorCount = 16,
  kAttrMemoryClockRate = 36, kAttrGlobalMemoryBusWidth = 37, kAttrL2CacheSize = 38,
  kAttrMaxThreadsPerMultiProcessor = 39, kAttrComputeCapabilityMajor = 75,
  kAttrComputeCapabilityMinor = 76, kAttrMaxSharedMemoryPerMultiprocessor = 81,
  kAttrMaxRegistersPerMultiprocessor = 82, kAttrMaxSharedMemoryPerBlockOptin = 97,
  kAttrMaxBlocksPerMultiprocessor = 106,
};
using GetCount = int (*)(int*);
using GetAttr = int (*)(int*, int, int);
using GetErr = const char* (*)(int);
using GetName = int (*)(char*, int, int);  // cuDeviceGetName from libcuda
}  // namespace

HardwareDesc hw_from_device(int index) {
  void* rt = nullptr;
  for (const char* lib : {"libcudart.so", "libcudart.so.13", "libcudart.so.12"}) {
    if ((rt = dlopen(lib, RTLD_NOW | RTLD_LOCAL))) break;
  }
  if (!rt) throw Error("no CUDA device " + std::to_string(index) + ": CUDA runtime library (libcudart) not found");
  auto get_count = reinterpret_cast<GetCount>(dlsym(rt, "cudaGetDeviceCount"));
  auto get_attr = reinterpret_cast<GetAttr>(dlsym(rt, "cudaDeviceGetAttribute"));
  auto get_err = reinterpret_cast<GetErr>(dlsym(rt, "cudaGetErrorString"));
  if (!get_count || !get_attr) throw Error("no CUDA device: libcudart lacks cudaGetDeviceCount");
  int n = 0;
  int rc = get_count(&n);
  if (rc != 0) throw Error("no CUDA device " + std::to_string(index) + ": " + (get_err ? get_err(rc) : "cudaGetDeviceCount failed"));
  if (index < 0 || index >= n)
    throw Error("no CUDA device " + std::to_string(index) + " (" + std::to_string(n) + " visible)");
  auto attr = [&](int a) {
    int v = 0;
    if (get_attr(&v, a, index) != 0) throw Error("cudaDeviceGetAttribute(" + std::to_string(a) + ") failed");
    return v;
  };
  HardwareDesc h;
  h.preset = "device:" + std::to_string(index);
  h.cc_major = attr(kAttrComputeCapabilityMajor);
  h.cc_minor = attr(kAttrComputeCapabilityMinor);
  h.sm_count = attr(kAttrMultiProcessorCount);
  h.sm_clock_mhz = attr(kAttrClockRate) / 1000;
  h.smem_per_sm_bytes = attr(kAttrMaxSharedMemoryPerMultiprocessor);
  h.smem_per_block_optin_bytes = attr(kAttrMaxSharedMemoryPerBlockOptin);
  h.regs_per_sm = attr(kAttrMaxRegistersPerMultiprocessor);
  h.max_threads_per_sm = attr(kAttrMaxThreadsPerMultiProcessor);
  h.max_blocks_per_sm = attr(kAttrMaxBlocksPerMultiprocessor);
  h.l2_bytes = attr(kAttrL2CacheSize);
  double mem_khz = attr(kAttrMemoryClockRate);
  double bus_bits = attr(kAttrGlobalMemoryBusWidth);
  // Name via the driver API when available.
  h.name = "CUDA device " + std::to_string(index);
  if (void* drv = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL)) {
    using Init = int (*)(unsigned);
    auto init = reinterpret_cast<Init>(dlsym(drv, "cuInit"));
    auto name = reinterpret_cast<GetName>(dlsym(drv, "cuDeviceGetName"));
    char buf[256] = {0};
    if (init && name && init(0) == 0 && name(buf, sizeof buf, index) == 0) h.name = buf;
  }
  // Rates the runtime does not report: take them from a matching preset, else estimate.
  std::string key;
  if (h.name.find("H200") != std::string::npos) key = "h200-sxm";
  else if (h.name.find("GH200") != std::string::npos) key = "gh200";
  else if (h.name.find("H100") != std::string::npos) key = "h100-sxm";
  if (!key.empty()) {
    HardwareDesc p = hw_preset(key);
    h.hbm_bw_bytes_per_s = p.hbm_bw_bytes_per_s;
    h.bf16_dense_flops_per_s = p.bf16_dense_flops_per_s;
    h.tma_bw_bytes_per_s = p.tma_bw_bytes_per_s;
    h.hbm_bytes = p.hbm_bytes;
    h.regs_per_thread_max = p.regs_per_thread_max;
    h.max_cluster_size_portable = p.max_cluster_size_portable;
    h.max_cluster_size_nonportable = p.max_cluster_size_nonportable;
  } else {
    // DDR: 2 transfers per clock.
    h.hbm_bw_bytes_per_s = 2.0 * mem_khz * 1e3 * bus_bits / 8.0;
    // Hopper dense BF16: 1024 FMA/clk/SM per tensor-core quad x 4 = 4096 flop/clk/SM... (estimate)
    h.bf16_dense_flops_per_s = 4096.0 * h.sm_count * h.sm_clock_mhz * 1e6;
    h.tma_bw_bytes_per_s = 2.0 * h.hbm_bw_bytes_per_s;
  }
  return h;
}

}  // namespace cks
