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
  // nvcc processes run at once (1 for the fake compiler's single slot).
  virtual size_t jobs() const { return 1; }
};

std::unique_ptr<CompileSource> make_nvcc_source(const CompileOptions& options);
std::unique_ptr<CompileSource> make_fake_source(worker::fake::FaultSpec faults, double seconds_per_batch);

// A TU of n kernels costs about kTuFrontEndKernels + n kernels' compile time: nvcc's front end is
// paid once per TU (lease 13's `nvcc --time` profiles: 75 + 10 n core-seconds, docs/harness-gpu.md).
inline constexpr double kTuFrontEndKernels = 7.5;

// Kernels per TU for compile segments of these sizes (runs of one priority tier and one layout,
// which never share a TU) on `jobs` parallel compiles, at most `max_per_tu`: the size p whose
// waves of `jobs` TUs finish first, waves(p) * (kTuFrontEndKernels + p) with waves(p) =
// ceil(sum ceil(s_i / p) / jobs); ties go to the larger p (fewer core-seconds). Full TUs are
// cheapest per kernel, but a last wave of a few TUs leaves most cores idle: lease 14's 262
// kernels in TUs of 12 ran as 16 + 9 TUs, where 32 TUs of 9 fill both waves; lease 15's 150
// kernels in 3 tiers and layouts made 18 TUs of a balanced 16 (two waves).
size_t balanced_per_tu(const std::vector<size_t>& segments, size_t jobs, size_t max_per_tu);
size_t balanced_per_tu(size_t kernels, size_t jobs, size_t max_per_tu);  // one segment

// Splits kernels into batches that share instantiations: sorted by priority tier (rank >> 32),
// then layout, then CTA tile, then schedules, then cluster and stages (kernels without a
// descriptor sort by ID); each run of one tier and layout is cut into evenly sized TUs of at most
// `per_batch` (with jobs > 0, of balanced_per_tu(runs, jobs, per_batch)); the batches are ordered
// by the best (lowest) `rank` of their members so the most promising kernels are compiled first.
// `rank` parallels `kernels`.
std::vector<std::vector<KernelToBuild>> make_batches(const std::vector<KernelToBuild>& kernels,
                                                     const std::vector<size_t>& rank, size_t per_batch,
                                                     size_t jobs = 0);

}  // namespace cks::monitor
