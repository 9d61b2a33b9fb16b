#include "monitor/compile_source.hpp"

#include <algorithm>
#include <chrono>
#include <deque>
#include <limits>
#include <numeric>
#include <tuple>

#include "cks/common.hpp"

namespace cks::monitor {

namespace {

using Clock = std::chrono::steady_clock;

class NvccSource final : public CompileSource {
 public:
  explicit NvccSource(const CompileOptions& o) : options_(o), pool_(o) {}
  void submit(std::vector<KernelToBuild> batch) override {
    std::vector<KernelDesc> descs;
    for (auto& k : batch) {
      if (!k.desc) throw std::logic_error("nvcc compile of kernel " + k.id + " without a descriptor");
      descs.push_back(*k.desc);
    }
    pool_.submit(std::move(descs));
  }
  std::vector<bool> take_cached(const std::vector<KernelToBuild>& kernels) override {
    std::vector<KernelDesc> descs;
    std::vector<size_t> at;
    for (size_t i = 0; i < kernels.size(); ++i)
      if (kernels[i].desc) {
        descs.push_back(*kernels[i].desc);
        at.push_back(i);
      }
    std::vector<bool> served(kernels.size(), false);
    const std::vector<bool> got = pool_.take_cached(descs);
    for (size_t j = 0; j < got.size(); ++j) served[at[j]] = got[j];
    return served;
  }
  std::optional<LibraryResult> poll() override { return pool_.next(std::chrono::milliseconds(0)); }
  size_t pending() const override { return pool_.pending(); }
  std::string flags() const override {
    std::string s;
    for (const auto& f : nvcc_flags(options_)) s += (s.empty() ? "" : " ") + f;
    return s;
  }
  std::string compiler_version() const override { return options_.cuda_version; }
  size_t jobs() const override { return static_cast<size_t>(std::max(1, pool_.jobs())); }

 private:
  CompileOptions options_;
  CompilePool pool_;
};

// Batches become ready one after another, each `seconds_per_batch` after the previous one
// (a single simulated compile slot), so tests see libraries appear while GPUs measure.
class FakeSource final : public CompileSource {
 public:
  FakeSource(worker::fake::FaultSpec faults, double seconds_per_batch)
      : faults_(std::move(faults)), delay_(std::chrono::duration_cast<Clock::duration>(
                                         std::chrono::duration<double>(seconds_per_batch))) {}
  void submit(std::vector<KernelToBuild> batch) override {
    const auto start = std::max(Clock::now(), queue_.empty() ? Clock::time_point{} : queue_.back().ready_at);
    queue_.push_back({std::move(batch), start + delay_});
  }
  std::optional<LibraryResult> poll() override {
    if (queue_.empty() || queue_.front().ready_at > Clock::now()) return std::nullopt;
    Pending p = std::move(queue_.front());
    queue_.pop_front();
    LibraryResult lib;
    std::string members;
    for (const auto& k : p.kernels) members += k.id + ";";
    lib.lib_hash = "fake-" + hex64(fnv1a64(members));  // no file: the fake backend needs none
    lib.seconds = std::chrono::duration<double>(delay_).count();
    for (size_t i = 0; i < p.kernels.size(); ++i) {
      KernelCompileInfo info;
      info.kernel_id = p.kernels[i].id;
      if (p.kernels[i].desc) info.canonical = p.kernels[i].desc->canonical();
      if (faults_.compile_fails(info.kernel_id)) {
        info.status = "compile_error";
        info.error = "fake compile error (fault spec)";
      } else {
        info.status = "ok";
        info.index = static_cast<int>(i);
      }
      info.compile_seconds = lib.seconds / static_cast<double>(p.kernels.size());
      lib.kernels.push_back(std::move(info));
    }
    return lib;
  }
  size_t pending() const override { return queue_.size(); }
  std::string flags() const override { return "fake"; }
  std::string compiler_version() const override { return "fake"; }

 private:
  struct Pending {
    std::vector<KernelToBuild> kernels;
    Clock::time_point ready_at;
  };
  worker::fake::FaultSpec faults_;
  Clock::duration delay_;
  std::deque<Pending> queue_;
};

// Sort key that puts kernels sharing CUTLASS instantiations next to each other.
auto instantiation_key(const KernelToBuild& k) {
  const KernelDesc d = k.desc.value_or(KernelDesc{});
  return std::make_tuple(!k.desc.has_value(), d.layout, d.tm, d.tn, d.tk, d.mainloop, d.epilogue, d.scheduler,
                         d.cm, d.cn, d.stages, k.id);
}

}  // namespace

std::unique_ptr<CompileSource> make_nvcc_source(const CompileOptions& options) {
  return std::make_unique<NvccSource>(options);
}

std::unique_ptr<CompileSource> make_fake_source(worker::fake::FaultSpec faults, double seconds_per_batch) {
  return std::make_unique<FakeSource>(std::move(faults), seconds_per_batch);
}

size_t balanced_per_tu(const std::vector<size_t>& segments, size_t jobs, size_t max_per_tu) {
  max_per_tu = std::max<size_t>(max_per_tu, 1);
  jobs = std::max<size_t>(jobs, 1);
  size_t best = max_per_tu;
  double best_cost = std::numeric_limits<double>::infinity();
  for (size_t p = max_per_tu; p >= 1; --p) {
    size_t tus = 0;
    for (size_t s : segments) tus += (s + p - 1) / p;
    if (tus == 0) return max_per_tu;
    const size_t waves = (tus + jobs - 1) / jobs;
    const double cost = static_cast<double>(waves) * (kTuFrontEndKernels + static_cast<double>(p));
    if (cost < best_cost) best_cost = cost, best = p;  // ties: the larger p (fewer TUs, fewer core-seconds)
  }
  return best;
}

size_t balanced_per_tu(size_t kernels, size_t jobs, size_t max_per_tu) {
  return balanced_per_tu(std::vector<size_t>{kernels}, jobs, max_per_tu);
}

std::vector<std::vector<KernelToBuild>> make_batches(const std::vector<KernelToBuild>& kernels,
                                                     const std::vector<size_t>& rank, size_t per_batch, size_t jobs) {
  std::vector<size_t> order(kernels.size());
  std::iota(order.begin(), order.end(), 0);
  // Batches never mix priority tiers (rank >> 32, PlanGroup::priority): within a tier, kernels
  // sharing instantiations go together.
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    const size_t ta = rank[a] >> 32, tb = rank[b] >> 32;
    if (ta != tb) return ta < tb;
    return instantiation_key(kernels[a]) < instantiation_key(kernels[b]);
  });
  // Segments: runs of one tier and one layout (a TU holds one layout: its kernels share the
  // operand types and copy atoms).
  const auto layout_of = [](const KernelToBuild& k) { return k.desc ? static_cast<int>(k.desc->layout) : -1; };
  std::vector<std::pair<size_t, size_t>> segments;  // [begin, end) in `order`
  for (size_t i = 0; i < order.size(); ++i)
    if (i == 0 || (rank[order[i]] >> 32) != (rank[order[i - 1]] >> 32) ||
        layout_of(kernels[order[i]]) != layout_of(kernels[order[i - 1]]))
      segments.emplace_back(i, i + 1);
    else
      segments.back().second = i + 1;
  per_batch = std::max<size_t>(per_batch, 1);
  if (jobs > 0) {
    std::vector<size_t> sizes;
    for (const auto& [b, e] : segments) sizes.push_back(e - b);
    per_batch = balanced_per_tu(sizes, jobs, per_batch);
  }
  struct Batch {
    std::vector<KernelToBuild> kernels;
    size_t best_rank = SIZE_MAX;
  };
  std::vector<Batch> batches;
  for (const auto& [b, e] : segments) {
    // The segment's TUs evenly sized: 13 kernels at 12 per TU are TUs of 7 and 6, not 12 and 1.
    const size_t n = e - b, tus = (n + per_batch - 1) / per_batch;
    for (size_t t = 0, at = b; t < tus; ++t) {
      const size_t size = n / tus + (t < n % tus ? 1 : 0);
      Batch& batch = batches.emplace_back();
      for (size_t i = at; i < at + size; ++i) {
        batch.kernels.push_back(kernels[order[i]]);
        batch.best_rank = std::min(batch.best_rank, rank[order[i]]);
      }
      at += size;
    }
  }
  std::stable_sort(batches.begin(), batches.end(),
                   [](const Batch& a, const Batch& b) { return a.best_rank < b.best_rank; });
  std::vector<std::vector<KernelToBuild>> out;
  for (auto& b : batches) out.push_back(std::move(b.kernels));
  return out;
}

}  // namespace cks::monitor
