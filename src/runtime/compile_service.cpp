// The runtime's compile cache (runtime/compile_service.hpp).
#include "runtime/compile_service.hpp"

#include <filesystem>

#include "cks/common.hpp"

namespace cks::rt {

namespace fs = std::filesystem;

namespace {

CompileService::Status failed(std::string error) {
  CompileService::Status s;
  s.state = CompileService::State::failed;
  s.error = std::move(error);
  return s;
}

}  // namespace

std::string CompileService::unavailable(const Options& o) {
  if (find_nvcc(o.nvcc).empty()) return "nvcc not found (PATH, CUDA_HOME or /usr/local/cuda)";
  const std::string cutlass = o.cutlass_dir.empty() ? default_cutlass_dir() : o.cutlass_dir;
  if (cutlass.empty() || !fs::exists(fs::path(cutlass) / "include/cutlass/cutlass.h"))
    return "the CUTLASS headers were not found (set CKS_CUTLASS_DIR to the CUTLASS root)";
  if (kernel_abi_include_dir().empty()) return "cks/kernel_lib_abi.h was not found (set CKS_INCLUDE_DIR)";
  return "";
}

CompileService::CompileService(Options o) : o_(std::move(o)) {}

CompileService::~CompileService() {
  {
    std::lock_guard lk(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
  pool_.reset();  // kills running nvcc
}

void CompileService::start_locked() {
  if (pool_ || !pool_error_.empty()) return;
  try {
    CompileOptions co;
    co.cache_dir = o_.cache_dir;
    co.nvcc = o_.nvcc;
    co.cutlass_dir = o_.cutlass_dir;
    co.jobs = o_.jobs;
    co.kernels_per_tu = 1;  // one kernel a library: each is usable as soon as it is built
    pool_ = std::make_unique<CompilePool>(co);
    thread_ = std::thread([this] { loop(); });
  } catch (const std::exception& e) {
    pool_error_ = std::string("the compile cache could not start: ") + e.what();
  }
}

void CompileService::settle(const LibraryResult& lib) {
  std::lock_guard lk(mu_);
  for (const auto& k : lib.kernels) {
    Status& s = kernels_[k.kernel_id];
    if (k.status == "ok") {
      s.state = State::ready;
      s.where = {k.lib_path, k.index};
    } else {
      s.state = State::failed;
      s.error = "compile of " + k.kernel_id + " failed: " + one_line(k.error, 240);
    }
  }
  generation_.fetch_add(1, std::memory_order_acq_rel);
  cv_.notify_all();
}

void CompileService::loop() {
  while (true) {
    {
      std::lock_guard lk(mu_);
      if (stop_) return;
    }
    if (auto lib = pool_->next(std::chrono::milliseconds(200))) settle(*lib);
  }
}

CompileService::Status CompileService::request(const KernelDesc& k) {
  const std::string id = k.id();
  std::unique_lock lk(mu_);
  if (auto it = kernels_.find(id); it != kernels_.end()) return it->second;
  start_locked();
  if (!pool_error_.empty()) return failed(pool_error_);
  kernels_[id] = Status{};
  CompilePool* pool = pool_.get();
  lk.unlock();
  // A kernel the cache folder holds is served at once (by its own key): wait briefly for the
  // background thread to take it, so the call that found it can use it.
  bool served = false;
  try {
    served = pool->take_cached({k})[0];
    if (!served) pool->submit({k});
  } catch (const std::exception& e) {
    lk.lock();
    kernels_[id] = failed(std::string("compile of ") + id + " could not start: " + e.what());
    generation_.fetch_add(1, std::memory_order_acq_rel);
    return kernels_[id];
  }
  lk.lock();
  if (served) cv_.wait_for(lk, std::chrono::seconds(2), [&] { return kernels_[id].state != State::pending || stop_; });
  return kernels_[id];
}

CompileService::Status CompileService::status(const std::string& kernel_id) const {
  std::lock_guard lk(mu_);
  if (auto it = kernels_.find(kernel_id); it != kernels_.end()) return it->second;
  return Status{};
}

int CompileService::pending() const {
  std::lock_guard lk(mu_);
  int n = 0;
  for (const auto& [id, s] : kernels_) n += s.state == State::pending;
  return n;
}

bool CompileService::wait_idle(std::chrono::milliseconds timeout) {
  std::unique_lock lk(mu_);
  return cv_.wait_for(lk, timeout, [&] {
    for (const auto& [id, s] : kernels_)
      if (s.state == State::pending) return false;
    return true;
  });
}

}  // namespace cks::rt
