// Where the monitor's kernel libraries come from: the real nvcc CompilePool, or (with the fake
// backend, which needs no library) a fake compiler that "compiles" every kernel after a delay
// and fails the kernels named by compile_error faults.
#pragma once
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "cks/compile.hpp"
#include "worker/fake.hpp"

namespace cks::monitor {

// A kernel to build. The fake compiler needs only the ID; nvcc needs the descriptor.
struct KernelToBuild {
  std::string id;
  std::optional<KernelDesc> desc;
};

class CompileSource {
 public:
  virtual ~CompileSource() = default;
  virtual void submit(std::vector<KernelToBuild> batch) = 0;
  // Serves the kernels a cache already holds (they come back through poll() like a batch);
  // which of `kernels` were served. Called before make_batches, so only the rest is cut into
  // translation units. The fake compiler has no cache.
  virtual std::vector<bool> take_cached(const std::vector<KernelToBuild>& kernels) {
    return std::vector<bool>(kernels.size(), false);
  }
  // A finished library, if one is ready now (never blocks).
  virtual std::optional<LibraryResult> poll() = 0;
  virtual size_t pending() const = 0;  // batches submitted and not yet returned by poll()
  // Provenance recorded with each compiled kernel.
  virtual std::string flags() const = 0;
  virtual std::string compiler_version() const = 0;
};

std::unique_ptr<CompileSource> make_nvcc_source(const CompileOptions& options);
std::unique_ptr<CompileSource> make_fake_source(worker::fake::FaultSpec faults, double seconds_per_batch);

// Splits kernels into batches of at most `per_batch` that share instantiations: sorted by
// priority tier (rank >> 32), then layout, then CTA tile, then schedules, then cluster and stages (kernels without a
// descriptor sort by ID), then the batches are ordered by the best (lowest) `rank` of their
// members so the most promising kernels are compiled first. `rank` parallels `kernels`.
std::vector<std::vector<KernelToBuild>> make_batches(const std::vector<KernelToBuild>& kernels,
                                                     const std::vector<size_t>& rank, size_t per_batch);

}  // namespace cks::monitor
