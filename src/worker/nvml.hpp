// NVML through dlopen("libnvidia-ml.so.1"): clocks, temperature and power of the GPU a worker
// measures on. Nothing is linked, so the worker also runs where NVML is absent; every reading is
// then NaN.
#pragma once
#include <memory>
#include <string>

namespace cks::worker {

class Nvml {
 public:
  // pci_bus_id as cudaDeviceGetPCIBusId reports it: NVML's own device order may differ from
  // CUDA's (CUDA_VISIBLE_DEVICES), the bus ID does not.
  explicit Nvml(const std::string& pci_bus_id);
  ~Nvml();
  Nvml(const Nvml&) = delete;
  Nvml& operator=(const Nvml&) = delete;

  bool available() const;
  struct Sample {
    double sm_clock_mhz, mem_clock_mhz, temp_c, power_w;  // NaN when unavailable
  };
  Sample sample() const;
  std::string driver_version() const;  // e.g. "580.65.06"; "" when unavailable

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace cks::worker
