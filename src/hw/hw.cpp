#include "cks/hw.hpp"

#include <dlfcn.h>
#include <unistd.h>

#include <cmath>
#include <cstdlib>
#include <type_traits>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <nlohmann/json.hpp>

#include "cks/common.hpp"
#include "common/data_files.hpp"
#include "common/json_limits.hpp"

namespace fs = std::filesystem;

namespace cks {

std::string hw_presets_path() {
  // $CKS_DATA_DIR, the installed share/cks, the source tree, a relocated build tree
  // (common/data_files.hpp).
  if (std::string p = find_data_file("hw/presets.json"); !p.empty()) return p;
  throw Error("hardware presets file hw/presets.json not found (set CKS_DATA_DIR to the repository's data/ folder "
              "or an installed share/cks folder)");
}

namespace {

// The presets file, read and schema-checked once: {"presets": {"<key>": {<fields>}, ...}}.
struct Presets {
  std::string path;
  nlohmann::json json;
};

const Presets& presets() {
  static std::once_flag once;
  static Presets p;
  std::call_once(once, [] {
    Presets loaded;
    loaded.path = hw_presets_path();
    loaded.json = parse_json_limited(read_file_limited(loaded.path, "hardware presets file", 16u << 20),
                                     "hardware presets file " + loaded.path);
    const auto it = loaded.json.is_object() ? loaded.json.find("presets") : loaded.json.end();
    if (it == loaded.json.end() || !it->is_object() || it->empty())
      throw Error("hardware presets file " + loaded.path + ": expected {\"presets\": {\"<name>\": {...}, ...}}");
    p = std::move(loaded);
  });
  return p;
}

// One numeric field of a preset, checked against its schema range.
template <typename T>
T preset_number(const nlohmann::json& p, const std::string& key, const char* field, double lo, double hi,
                const std::string& path) {
  const std::string where = "hardware preset '" + key + "' in " + path + ": ";
  const auto it = p.find(field);
  if (it == p.end()) throw Error(where + "\"" + field + "\" is missing");
  if (std::is_integral_v<T> ? !it->is_number_integer() : !it->is_number())
    throw Error(where + "\"" + field + "\" must be " + (std::is_integral_v<T> ? "an integer" : "a number") +
                " (got " + it->dump() + ")");
  const double v = it->get<double>();
  if (!std::isfinite(v) || v < lo || v > hi)
    throw Error(where + "\"" + field + "\" must be in [" + format_double(lo) + ", " + format_double(hi) + "] (got " +
                it->dump() + ")");
  return it->get<T>();
}

}  // namespace

std::vector<std::string> hw_preset_names() {
  std::vector<std::string> out;
  for (auto& [k, v] : presets().json.at("presets").items()) out.push_back(k);
  return out;
}

// The preset schema (data/hw/presets.json): every field present, of its type, and in a range
// that a Hopper-class GPU can have; zero or negative resources (which would empty the catalogue
// or divide by zero in the features) are refused with the field's name.
static HardwareDesc from_json(const std::string& key, const nlohmann::json& p, const std::string& path) {
  if (!p.is_object()) throw Error("hardware preset '" + key + "' in " + path + " must be an object");
  HardwareDesc h;
  h.preset = key;
  const auto name = p.find("name");
  if (name == p.end() || !name->is_string() || name->get<std::string>().empty())
    throw Error("hardware preset '" + key + "' in " + path + ": \"name\" must be a non-empty string");
  h.name = name->get<std::string>();
  auto i = [&](const char* f, double lo, double hi) { return preset_number<long>(p, key, f, lo, hi, path); };
  auto d = [&](const char* f, double lo, double hi) { return preset_number<double>(p, key, f, lo, hi, path); };
  h.cc_major = static_cast<int>(i("cc_major", 1, 99));
  h.cc_minor = static_cast<int>(i("cc_minor", 0, 9));
  h.sm_count = static_cast<int>(i("sm_count", 1, 4096));
  h.sm_clock_mhz = static_cast<int>(i("sm_clock_mhz", 1, 100000));
  h.smem_per_sm_bytes = i("smem_per_sm_bytes", 1, 1L << 30);
  h.smem_per_block_optin_bytes = i("smem_per_block_optin_bytes", 1, 1L << 30);
  h.regs_per_sm = i("regs_per_sm", 1, 1L << 30);
  h.regs_per_thread_max = static_cast<int>(i("regs_per_thread_max", 1, 1 << 16));
  h.max_threads_per_sm = static_cast<int>(i("max_threads_per_sm", 1, 1 << 20));
  h.max_blocks_per_sm = static_cast<int>(i("max_blocks_per_sm", 1, 1 << 16));
  h.max_cluster_size_portable = static_cast<int>(i("max_cluster_size_portable", 1, 1024));
  h.max_cluster_size_nonportable = static_cast<int>(i("max_cluster_size_nonportable", 1, 1024));
  h.l2_bytes = d("l2_bytes", 1, 1e15);
  h.hbm_bytes = d("hbm_bytes", 1, 1e18);
  h.hbm_bw_bytes_per_s = d("hbm_bw_bytes_per_s", 1, 1e18);
  h.bf16_dense_flops_per_s = d("bf16_dense_flops_per_s", 1, 1e21);
  h.tma_bw_bytes_per_s = d("tma_bw_bytes_per_s", 1, 1e18);
  const std::string where = "hardware preset '" + key + "' in " + path + ": ";
  if (h.smem_per_block_optin_bytes > h.smem_per_sm_bytes)
    throw Error(where + "\"smem_per_block_optin_bytes\" exceeds \"smem_per_sm_bytes\"");
  if (h.max_cluster_size_portable > h.max_cluster_size_nonportable)
    throw Error(where + "\"max_cluster_size_portable\" exceeds \"max_cluster_size_nonportable\"");
  return h;
}

HardwareDesc hw_preset(const std::string& name) {
  const Presets& all = presets();
  const auto& ps = all.json.at("presets");
  auto it = ps.find(name);
  if (it == ps.end()) {
    std::string known;
    for (auto& n : hw_preset_names()) known += (known.empty() ? "" : ", ") + n;
    throw Error("unknown hardware preset '" + name + "' (known: " + known + ")");
  }
  return from_json(name, *it, all.path);
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
