#include "worker/nvml.hpp"

#include <dlfcn.h>

#include <limits>
#include <string>

namespace cks::worker {

namespace {

// The few NVML declarations used (nvml.h is not needed: the ABI is stable C).
using nvmlReturn_t = int;
using nvmlDevice_t = struct nvmlDevice_st*;
constexpr nvmlReturn_t NVML_SUCCESS = 0;
constexpr int NVML_CLOCK_SM = 1;
constexpr int NVML_CLOCK_MEM = 2;
constexpr int NVML_TEMPERATURE_GPU = 0;

template <class F>
F sym(void* lib, const char* name) {
  return reinterpret_cast<F>(dlsym(lib, name));
}

// NVML ships with the driver, next to libcuda.so.1; when it is not on the loader's path, look in
// the directory the CUDA runtime (initialized before this) loaded libcuda.so.1 from.
void* open_nvml() {
  constexpr const char* kName = "libnvidia-ml.so.1";
  if (void* h = dlopen(kName, RTLD_NOW | RTLD_LOCAL)) return h;
  void* cuda = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
  if (!cuda) return nullptr;
  Dl_info info{};
  void* h = nullptr;
  if (void* fn = dlsym(cuda, "cuInit"); fn && dladdr(fn, &info) && info.dli_fname) {
    std::string dir = info.dli_fname;
    dir = dir.substr(0, dir.find_last_of('/') + 1);
    h = dlopen((dir + kName).c_str(), RTLD_NOW | RTLD_LOCAL);
  }
  dlclose(cuda);
  return h;
}

}  // namespace

struct Nvml::Impl {
  void* lib = nullptr;
  nvmlDevice_t dev = nullptr;
  nvmlReturn_t (*get_clock)(nvmlDevice_t, int, unsigned int*) = nullptr;
  nvmlReturn_t (*get_temperature)(nvmlDevice_t, int, unsigned int*) = nullptr;
  nvmlReturn_t (*get_power)(nvmlDevice_t, unsigned int*) = nullptr;
  nvmlReturn_t (*driver_version)(char*, unsigned int) = nullptr;
  nvmlReturn_t (*shutdown)() = nullptr;
};

Nvml::Nvml(const std::string& pci_bus_id) : impl_(std::make_unique<Impl>()) {
  Impl& n = *impl_;
  n.lib = open_nvml();
  if (!n.lib) return;
  auto init = sym<nvmlReturn_t (*)()>(n.lib, "nvmlInit_v2");
  auto by_bus = sym<nvmlReturn_t (*)(const char*, nvmlDevice_t*)>(n.lib, "nvmlDeviceGetHandleByPciBusId_v2");
  n.get_clock = sym<decltype(n.get_clock)>(n.lib, "nvmlDeviceGetClockInfo");
  n.get_temperature = sym<decltype(n.get_temperature)>(n.lib, "nvmlDeviceGetTemperature");
  n.get_power = sym<decltype(n.get_power)>(n.lib, "nvmlDeviceGetPowerUsage");
  n.driver_version = sym<decltype(n.driver_version)>(n.lib, "nvmlSystemGetDriverVersion");
  n.shutdown = sym<decltype(n.shutdown)>(n.lib, "nvmlShutdown");
  if (!init || !by_bus || init() != NVML_SUCCESS) {
    dlclose(n.lib);
    n.lib = nullptr;
    return;
  }
  if (by_bus(pci_bus_id.c_str(), &n.dev) != NVML_SUCCESS) n.dev = nullptr;
}

Nvml::~Nvml() {
  if (impl_->lib) {
    if (impl_->shutdown) impl_->shutdown();
    dlclose(impl_->lib);
  }
}

bool Nvml::available() const { return impl_->dev != nullptr; }

Nvml::Sample Nvml::sample() const {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  Sample s{nan, nan, nan, nan};
  const Impl& n = *impl_;
  if (!n.dev) return s;
  unsigned int v = 0;
  if (n.get_clock && n.get_clock(n.dev, NVML_CLOCK_SM, &v) == NVML_SUCCESS) s.sm_clock_mhz = v;
  if (n.get_clock && n.get_clock(n.dev, NVML_CLOCK_MEM, &v) == NVML_SUCCESS) s.mem_clock_mhz = v;
  if (n.get_temperature && n.get_temperature(n.dev, NVML_TEMPERATURE_GPU, &v) == NVML_SUCCESS) s.temp_c = v;
  if (n.get_power && n.get_power(n.dev, &v) == NVML_SUCCESS) s.power_w = v / 1000.0;  // NVML reports mW
  return s;
}

std::string Nvml::driver_version() const {
  char buf[96] = {0};
  if (!impl_->lib || !impl_->driver_version || impl_->driver_version(buf, sizeof buf) != NVML_SUCCESS) return "";
  return buf;
}

}  // namespace cks::worker
