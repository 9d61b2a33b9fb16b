// The parallel nvcc compile pool with its executable cache and failure bisection.
//
// submit() cuts a batch into translation units of at most kernels_per_tu kernels; each TU is
// looked up in the cache (cache.hpp: the whole TU by its hash, else each kernel by its own key, in
// whatever library it was built) and, on a miss, queued. `jobs` worker threads each run one
// nvcc at a time, admitted under a memory budget (mem_per_job_gb per kernel of the TU). A TU
// that fails is split in halves which are compiled (and, if they fail, split) in turn, so every
// compile error ends up attributed to the one kernel that causes it while the others still get
// libraries. next() hands out one LibraryResult per library as soon as it is built (a bisected
// TU yields several, plus one without a library holding its compile errors); pending() counts
// TUs not yet settled and results not yet handed out.
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <condition_variable>
#include <cstdlib>
#include <deque>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <regex>
#include <set>
#include <sstream>
#include <thread>

#include "cks/common.hpp"
#include "cks/compile.hpp"
#include "cks/files.hpp"
#include "cks/kernel_lib_abi.h"
#include "compile/cache.hpp"
#include "compile/process.hpp"
#include "compile/ptxas.hpp"
#include "common/data_files.hpp"

namespace cks {

namespace fs = std::filesystem;
using compile::ExitStatus;

namespace {

constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;

// MemAvailable from /proc/meminfo in GiB (0 when unreadable).
double mem_available_gb() {
  std::ifstream f("/proc/meminfo");
  std::string key;
  double kb = 0;
  std::string unit;
  while (f >> key >> kb >> unit)
    if (key == "MemAvailable:") return kb * 1024.0 / kGiB;
  return 0;
}

std::string exe_dir() {
  std::error_code ec;
  auto p = fs::read_symlink("/proc/self/exe", ec);
  return ec ? std::string() : p.parent_path().string();
}

// First candidate directory that contains `probe`.
std::string first_with(const std::vector<std::string>& dirs, const std::string& probe) {
  for (const auto& d : dirs)
    if (!d.empty() && fs::exists(fs::path(d) / probe)) return fs::absolute(d).lexically_normal().string();
  return "";
}

std::string env_or_empty(const char* name) {
  const char* v = std::getenv(name);
  return v ? v : "";
}

std::vector<KernelDesc> pick(const std::vector<KernelDesc>& all, const std::vector<int>& members) {
  std::vector<KernelDesc> out;
  for (int i : members) out.push_back(all[static_cast<size_t>(i)]);
  return out;
}

KernelCompileInfo blank_info(const KernelDesc& k) {
  KernelCompileInfo info;
  info.kernel_id = k.id();
  info.canonical = k.canonical();
  return info;
}

}  // namespace

std::vector<std::string> nvcc_flags(const CompileOptions& o) {
  std::vector<std::string> f{"-shared",
                             "-Xcompiler=-fPIC",
                             "-Xcompiler=-fvisibility=hidden",  // only cks_kernel_lib_get is exported
                             "-O3",
                             "-DNDEBUG",  // without it ptxas serializes wgmma (warning C7510)
                             // WGMMA 64xNx16 for every N multiple of 8 (CUTLASS CMake option
                             // CUTLASS_ENABLE_SM90_EXTENDED_MMA_SHAPES); without it tile N outside
                             // {8,16,32,64,96,128,192,256} silently uses a narrower instruction.
                             "-DCUTE_SM90_EXTENDED_MMA_SHAPES_ENABLED",
                             "-std=c++17",
                             "--expt-relaxed-constexpr",
                             "-gencode=arch=compute_90a,code=sm_90a",
                             "-Xptxas=-v"};
  f.insert(f.end(), o.extra_flags.begin(), o.extra_flags.end());
  return f;
}

// Hash of everything that determines the library's content: the generated source (member
// kernels, in order, and the code generator's output), the code-generation flags, the ABI
// version and the CUDA and CUTLASS versions. Include paths are left out so a cache built on one
// machine is valid on another.
// An empty cuda_version means "this nvcc's": detected once per nvcc, as the pool does.
std::string library_hash(const std::vector<KernelDesc>& kernels, const CompileOptions& o) {
  std::string cuda = o.cuda_version;
  if (cuda.empty()) {
    static std::mutex mu;
    static std::map<std::string, std::string> detected;
    std::lock_guard lk(mu);
    auto it = detected.find(o.nvcc);
    if (it == detected.end()) it = detected.emplace(o.nvcc, nvcc_version(o.nvcc)).first;
    cuda = it->second;
  }
  std::string key = "cks-kernel-lib abi " + std::to_string(CKS_KERNEL_LIB_ABI_VERSION) + "\n";
  key += generate_tu(kernels);
  for (const auto& f : nvcc_flags(o)) key += "\nflag " + f;
  key += "\ncuda " + cuda + "\ncutlass " + o.cutlass_version;
  return hex64(fnv1a64(key));
}

std::string find_nvcc(const std::string& nvcc) {
  if (auto p = compile::which(nvcc); !p.empty()) return p;
  if (nvcc != "nvcc") return "";
  const std::string cuda_home = env_or_empty("CUDA_HOME");
  for (const std::string& c : {cuda_home.empty() ? std::string() : cuda_home + "/bin/nvcc", std::string("/usr/local/cuda/bin/nvcc")})
    if (auto p = compile::which(c); !c.empty() && !p.empty()) return p;
  return "";
}

std::string nvcc_version(const std::string& nvcc) {
  const std::string path = find_nvcc(nvcc);
  if (path.empty()) return "";
  const std::string out = compile::run_capture({path, "--version"});
  std::smatch m;
  static const std::regex full(R"(, V(\d+\.\d+\.\d+))"), release(R"(release (\d+\.\d+))");
  if (std::regex_search(out, m, full) || std::regex_search(out, m, release)) return m[1].str();
  return "";
}

std::string default_cutlass_dir() {
  const std::string exe = exe_dir();
  return first_with({env_or_empty("CKS_CUTLASS_DIR"), CKS_CUTLASS_DIR,
                     exe.empty() ? "" : exe + "/../../third_party/cutlass"},
                    "include/cutlass/cutlass.h");
}

std::string kernel_abi_include_dir() {
  const std::string exe = exe_dir();
  // An installed copy (cks or libcks_runtime.so under a prefix): <prefix>/include beside the
  // <prefix>/share/cks the data lookup finds.
  const std::string data = installed_data_dir();
  const std::string installed = data.empty() ? "" : (fs::path(data).parent_path().parent_path() / "include").string();
  return first_with({env_or_empty("CKS_INCLUDE_DIR"), std::string(CKS_SOURCE_DIR) + "/include", installed,
                     exe.empty() ? "" : exe + "/../../include"},
                    "cks/kernel_lib_abi.h");
}

struct CompilePool::Impl {
  // One submitted translation unit, settled kernel by kernel (bisection may split it).
  struct Batch {
    std::vector<KernelDesc> kernels;
    std::string hash;
    std::vector<KernelCompileInfo> results;
    std::map<std::string, std::vector<std::string>> warnings;
    int open_tasks = 1;
    double seconds = 0;       // nvcc wall time over all its tasks
    bool split = false;       // the whole TU failed and was bisected
    bool memoizable = true;   // every failure is a genuine compile error (not a killed nvcc)
  };
  // A set of a batch's kernels to compile into one library.
  struct Task {
    uint64_t batch = 0;
    std::vector<int> members;
  };
  // What compiling one task produced.
  struct Outcome {
    std::string hash;                      // of the task's kernels
    bool cached = false;
    std::vector<KernelCompileInfo> infos;  // per member (empty when the task was split)
    std::map<std::string, std::vector<std::string>> warnings;
    double seconds = 0;
    double max_rss_mb = 0;                 // peak resident set of nvcc's largest process
    bool split = false;
    bool memoizable = true;
  };

  CompileOptions o;
  std::string nvcc, include_dir;
  int jobs = 1;
  double mem_budget_gb = 0;

  std::mutex mu;
  std::condition_variable work_cv, done_cv;
  std::map<uint64_t, Batch> batches;
  std::deque<Task> queue;
  std::deque<LibraryResult> finished;
  std::set<pid_t> running;
  int running_tasks = 0;
  double running_mem_gb = 0;
  bool stopping = false;
  uint64_t next_batch = 0;
  std::vector<std::thread> threads;

  explicit Impl(CompileOptions opts) : o(std::move(opts)) {
    if (o.kernels_per_tu < 1) throw Error("kernels per TU must be at least 1");
    if (o.jobs < 0) throw Error("compile jobs must be >= 0 (0 = automatic)");
    if (!(o.mem_per_job_gb > 0)) throw Error("memory per kernel must be positive");
    if (o.mem_limit_gb < 0) throw Error("memory limit must be >= 0 (0 = MemAvailable)");
    nvcc = find_nvcc(o.nvcc);
    if (nvcc.empty()) throw Error("nvcc not found ('" + o.nvcc + "'; set PATH, CUDA_HOME or --nvcc)");
    if (o.cuda_version.empty()) o.cuda_version = nvcc_version(nvcc);
    // The build-time default path does not exist where the binaries are carried to: resolve it
    // the same way as an empty one. An explicit other path must exist.
    if (o.cutlass_dir.empty() || (o.cutlass_dir == CKS_CUTLASS_DIR && !fs::exists(o.cutlass_dir)))
      o.cutlass_dir = default_cutlass_dir();
    if (o.cutlass_dir.empty() || !fs::exists(fs::path(o.cutlass_dir) / "include/cutlass/cutlass.h"))
      throw Error("CUTLASS headers not found in '" + o.cutlass_dir + "' (expected include/cutlass/cutlass.h)");
    include_dir = kernel_abi_include_dir();
    if (include_dir.empty()) throw Error("cks/kernel_lib_abi.h not found (set CKS_INCLUDE_DIR to the repository's include/)");
    std::error_code ec;
    fs::create_directories(o.cache_dir, ec);
    if (ec || !fs::is_directory(o.cache_dir)) throw Error("cannot create kernel cache directory '" + o.cache_dir + "'");
    o.cache_dir = fs::absolute(o.cache_dir).lexically_normal().string();

    index_cached_kernels();
    mem_budget_gb = o.mem_limit_gb > 0 ? o.mem_limit_gb : mem_available_gb();
    const int cores = std::max(1u, std::thread::hardware_concurrency());
    const int by_memory = static_cast<int>(std::floor(mem_budget_gb / (o.mem_per_job_gb * o.kernels_per_tu)));
    jobs = o.jobs > 0 ? o.jobs : std::clamp(by_memory, 1, cores);
    for (int i = 0; i < jobs; ++i) threads.emplace_back([this] { worker_loop(); });
  }

  ~Impl() {
    {
      std::lock_guard lk(mu);
      stopping = true;
      for (pid_t pid : running) compile::kill_group(pid, SIGKILL);
    }
    work_cv.notify_all();
    done_cv.notify_all();
    for (auto& t : threads) t.join();
  }

  // Every compiled kernel of the cache directory by its own key (library_hash of the kernel
  // alone): a cache carried from another lease, whose libraries grouped the kernels into other
  // translation units, still serves each kernel it holds. Only sidecars whose library exists and
  // whose key matches today's flags and versions can match (the key covers them).
  std::map<std::string, KernelCompileInfo> by_kernel_key;
  void index_cached_kernels() {
    std::error_code ec;
    for (fs::directory_iterator it(o.cache_dir, ec), end; !ec && it != end; it.increment(ec)) {
      const std::string name = it->path().filename().string();
      if (name.size() != 4 + 16 + 5 || name.rfind("cks_", 0) != 0 || it->path().extension() != ".json") continue;
      const auto infos = compile::load_sidecar(o.cache_dir, name.substr(4, 16));
      if (!infos) continue;
      for (const auto& k : *infos)
        if (k.status == "ok" && !k.kernel_key.empty()) by_kernel_key.emplace(k.kernel_key, k);
    }
  }

  // The kernels of `kernels` found in the index, grouped by library, as cached results; the rest
  // is left in `kernels`.
  void take_indexed(std::vector<KernelDesc>& kernels) {
    const std::vector<bool> served = serve_indexed(kernels);
    std::vector<KernelDesc> rest;
    for (size_t i = 0; i < kernels.size(); ++i)
      if (!served[i]) rest.push_back(std::move(kernels[i]));
    kernels = std::move(rest);
  }

  // Queues a cached result for each library holding some of `kernels` (by kernel key); which
  // kernels were served.
  std::vector<bool> serve_indexed(const std::vector<KernelDesc>& kernels) {
    std::vector<bool> served(kernels.size(), false);
    if (by_kernel_key.empty()) return served;
    std::map<std::string, LibraryResult> by_lib;
    for (size_t i = 0; i < kernels.size(); ++i) {
      const auto it = by_kernel_key.find(library_hash({kernels[i]}, o));
      if (it == by_kernel_key.end() || !fs::exists(it->second.lib_path)) continue;
      served[i] = true;
      LibraryResult& r = by_lib[it->second.lib_path];
      if (r.kernels.empty()) {
        r.lib_path = it->second.lib_path;
        r.lib_hash = fs::path(r.lib_path).stem().string().substr(4);
        r.cached = true;
      }
      r.kernels.push_back(it->second);
    }
    if (by_lib.empty()) return served;
    std::lock_guard lk(mu);
    for (auto& [lib, r] : by_lib) finished.push_back(std::move(r));
    done_cv.notify_all();
    return served;
  }

  double task_mem_gb(const Task& t) const { return o.mem_per_job_gb * static_cast<double>(t.members.size()); }

  // The first job always runs, so a TU larger than the budget is still compiled (alone).
  bool admissible(const Task& t) const {
    return running_tasks == 0 || running_mem_gb + task_mem_gb(t) <= mem_budget_gb;
  }

  void submit(std::vector<KernelDesc> kernels) {
    if (kernels.empty()) throw Error("cannot compile an empty kernel batch");
    std::set<std::string> ids;
    for (const auto& k : kernels)
      if (!ids.insert(k.id()).second) throw Error("kernel " + k.canonical() + " submitted twice in one batch");
    take_indexed(kernels);
    const size_t per_tu = static_cast<size_t>(o.kernels_per_tu);
    for (size_t b = 0; b < kernels.size(); b += per_tu) {
      Batch batch;
      batch.kernels.assign(kernels.begin() + static_cast<long>(b),
                           kernels.begin() + static_cast<long>(std::min(kernels.size(), b + per_tu)));
      batch.hash = library_hash(batch.kernels, o);
      if (auto cached = compile::load_sidecar(o.cache_dir, batch.hash)) {
        std::lock_guard lk(mu);
        for (auto& r : group_by_library(*cached, batch.hash, true, 0)) finished.push_back(std::move(r));
        done_cv.notify_all();
        continue;
      }
      Task task;
      for (size_t i = 0; i < batch.kernels.size(); ++i) task.members.push_back(static_cast<int>(i));
      batch.results.resize(batch.kernels.size());
      std::lock_guard lk(mu);
      task.batch = next_batch++;
      batches.emplace(task.batch, std::move(batch));
      queue.push_back(std::move(task));
      work_cv.notify_one();
    }
  }

  // The results of one settled compile task (or cache entry): one LibraryResult per library
  // holding some of `kernels`, plus one without a library for the kernels that failed.
  static std::vector<LibraryResult> group_by_library(const std::vector<KernelCompileInfo>& kernels,
                                                     const std::string& hash, bool cached, double seconds) {
    std::map<std::string, LibraryResult> by_lib;  // "" collects compile errors
    for (const auto& k : kernels) {
      const std::string lib = k.status == "ok" ? k.lib_path : "";
      LibraryResult& r = by_lib[lib];
      if (r.kernels.empty()) {
        r.lib_path = lib;
        // cks_<hash>.so names its library's hash; errors carry the hash of the TU they failed in.
        r.lib_hash = lib.empty() ? hash : fs::path(lib).stem().string().substr(4);
        r.cached = cached;
        r.seconds = seconds;
      }
      r.kernels.push_back(k);
    }
    std::vector<LibraryResult> out;
    for (auto& [lib, r] : by_lib) out.push_back(std::move(r));
    return out;
  }

  void worker_loop() {
    std::unique_lock lk(mu);
    while (true) {
      work_cv.wait(lk, [&] { return stopping || (!queue.empty() && admissible(queue.front())); });
      if (stopping) return;
      Task task = std::move(queue.front());
      queue.pop_front();
      const double mem = task_mem_gb(task);
      ++running_tasks;
      running_mem_gb += mem;
      const Batch& batch = batches.at(task.batch);
      const std::vector<KernelDesc> kernels = pick(batch.kernels, task.members);
      const bool whole = task.members.size() == batch.kernels.size();
      const std::string hash = whole ? batch.hash : std::string();
      lk.unlock();
      Outcome out = compile_task(kernels, hash);
      lk.lock();
      --running_tasks;
      running_mem_gb -= mem;
      settle(task, std::move(out));
      work_cv.notify_all();
    }
  }

  // Compiles `kernels` into one library (or finds it in the cache). Never throws.
  Outcome compile_task(const std::vector<KernelDesc>& kernels, std::string hash) {
    Outcome out;
    try {
      if (hash.empty()) hash = library_hash(kernels, o);
      out.hash = hash;
      if (auto cached = compile::load_sidecar(o.cache_dir, hash)) {
        out.cached = true;
        out.infos = std::move(*cached);
        return out;
      }
      return run_nvcc(kernels, hash);
    } catch (const std::exception& e) {
      return unsettled(kernels, e.what());
    }
  }

  // Every kernel a compile_error that says nothing about the kernel itself (not memoized).
  static Outcome unsettled(const std::vector<KernelDesc>& kernels, const std::string& why) {
    Outcome out;
    out.memoizable = false;
    for (const auto& k : kernels) {
      auto info = blank_info(k);
      info.status = "compile_error";
      info.error = why;
      out.infos.push_back(std::move(info));
    }
    return out;
  }

  Outcome run_nvcc(const std::vector<KernelDesc>& kernels, const std::string& hash) {
    const std::string base = o.cache_dir + "/cks_" + hash;
    const std::string src = base + ".cu", log = base + ".log", lib = compile::library_file(o.cache_dir, hash);
    static std::atomic<unsigned> counter{0};
    const std::string tmp_lib = lib + ".tmp." + std::to_string(getpid()) + "." + std::to_string(counter++);
    write_file_atomic(src, generate_tu(kernels));
    std::error_code ec;
    fs::remove(log, ec);
    std::vector<std::string> argv{nvcc};
    for (const auto& f : nvcc_flags(o)) argv.push_back(f);
    for (const std::string& dir : {o.cutlass_dir + "/include", o.cutlass_dir + "/tools/util/include", include_dir})
      argv.push_back("-I" + dir);
    // Phase timing (nvcc --time: one CSV row per compile phase) for the compile profile of
    // issue 20, when $CKS_NVCC_TIME_DIR names a directory; not a code-generation flag, so it
    // leaves the library hash alone.
    if (const std::string dir = env_or_empty("CKS_NVCC_TIME_DIR"); !dir.empty())
      argv.insert(argv.end(), {"--time", dir + "/cks_" + hash + ".time.csv"});
    argv.insert(argv.end(), {"-o", tmp_lib, src});

    const auto t0 = std::chrono::steady_clock::now();
    const ExitStatus st = run_tracked(argv, log);
    Outcome out;
    out.hash = hash;
    out.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    out.max_rss_mb = static_cast<double>(st.max_rss_kb) / 1024.0;
    std::string text;
    {
      std::ifstream f(log);
      std::stringstream ss;
      ss << f.rdbuf();
      text = ss.str();
    }

    if (st.ok() && fs::exists(tmp_lib)) {
      fs::rename(tmp_lib, lib, ec);
      if (ec) throw Error("cannot move the compiled library to " + lib);
      const auto ptxas = compile::parse_ptxas_log(text);
      for (size_t i = 0; i < kernels.size(); ++i) {
        auto info = blank_info(kernels[i]);
        info.status = "ok";
        info.lib_path = lib;
        info.index = static_cast<int>(i);
        info.kernel_key = library_hash({kernels[i]}, o);
        info.compile_seconds = out.seconds / static_cast<double>(kernels.size());
        if (auto p = ptxas.find(info.kernel_id); p != ptxas.end()) {
          info.registers = p->second.registers;
          info.spill_store_bytes = p->second.spill_store_bytes;
          info.spill_load_bytes = p->second.spill_load_bytes;
          info.smem_bytes = p->second.smem_bytes;
          if (!p->second.warnings.empty()) out.warnings[info.kernel_id] = p->second.warnings;
        }
        out.infos.push_back(std::move(info));
      }
      compile::store_sidecar(o.cache_dir, hash, out.infos, out.warnings, meta(out.seconds, out.max_rss_mb));
      return out;
    }
    fs::remove(tmp_lib, ec);
    if (is_stopping()) return unsettled(kernels, "the compile pool was stopped");
    if (kernels.size() > 1) {
      out.split = true;
      return out;
    }
    // A killed nvcc (out of memory, say) says nothing about the kernel: it is reported but not
    // memoized, so the next run compiles it again.
    out.memoizable = st.signal == 0;
    auto info = blank_info(kernels.front());
    info.status = "compile_error";
    info.compile_seconds = out.seconds;
    info.error = st.signal != 0 ? "nvcc " + st.describe() : "nvcc " + st.describe() + ":\n" + compile::error_excerpt(text);
    out.infos.push_back(std::move(info));
    if (out.memoizable) compile::store_sidecar(o.cache_dir, hash, out.infos, {}, meta(out.seconds, out.max_rss_mb));
    return out;
  }

  bool is_stopping() {
    std::lock_guard lk(mu);
    return stopping;
  }

  // The TU's provenance, wall time and peak memory (the largest process of nvcc's tree: what
  // --mem-per-kernel-gb budgets, measured).
  nlohmann::json meta(double seconds, double max_rss_mb) const {
    return {{"flags", nvcc_flags(o)}, {"cuda_version", o.cuda_version}, {"cutlass_version", o.cutlass_version},
            {"seconds", seconds}, {"max_rss_mb", max_rss_mb}};
  }

  // Runs nvcc, registered so the destructor can kill its process group.
  ExitStatus run_tracked(const std::vector<std::string>& argv, const std::string& log) {
    pid_t pid = compile::spawn_logged(argv, log);
    {
      std::lock_guard lk(mu);
      running.insert(pid);
      if (stopping) compile::kill_group(pid, SIGKILL);
    }
    const ExitStatus st = compile::wait_child(pid);
    std::lock_guard lk(mu);
    running.erase(pid);
    return st;
  }

  // Records a task's outcome (caller holds mu): its libraries are handed out at once; a failed
  // multi-kernel task is replaced by its two halves at the front of the queue. When the last
  // task of a bisected TU settles, the TU's own sidecar memoizes where each kernel ended up.
  void settle(const Task& task, Outcome out) {
    Batch& b = batches.at(task.batch);
    b.seconds += out.seconds;
    if (out.split) {
      b.split = true;
      const size_t half = task.members.size() / 2;
      Task lo{task.batch, {task.members.begin(), task.members.begin() + static_cast<long>(half)}};
      Task hi{task.batch, {task.members.begin() + static_cast<long>(half), task.members.end()}};
      queue.push_front(std::move(hi));
      queue.push_front(std::move(lo));
      b.open_tasks += 1;
      return;
    }
    for (size_t i = 0; i < task.members.size(); ++i) b.results[static_cast<size_t>(task.members[i])] = out.infos[i];
    b.warnings.insert(out.warnings.begin(), out.warnings.end());
    b.memoizable = b.memoizable && out.memoizable;
    for (auto& r : group_by_library(out.infos, out.hash, out.cached, out.seconds)) finished.push_back(std::move(r));
    done_cv.notify_all();
    if (--b.open_tasks > 0) return;
    if (b.split && b.memoizable) {
      try {
        compile::store_sidecar(o.cache_dir, b.hash, b.results, b.warnings, meta(b.seconds, 0));
      } catch (const std::exception&) {
        // Only the memo is lost: the halves are cached on their own.
      }
    }
    batches.erase(task.batch);
  }

  std::optional<LibraryResult> next(std::chrono::milliseconds timeout) {
    std::unique_lock lk(mu);
    done_cv.wait_for(lk, timeout, [&] { return !finished.empty() || batches.empty() || stopping; });
    if (finished.empty()) return std::nullopt;
    LibraryResult r = std::move(finished.front());
    finished.pop_front();
    return r;
  }

  size_t pending() {
    std::lock_guard lk(mu);
    return batches.size() + finished.size();
  }
};

CompilePool::CompilePool(CompileOptions o) : impl_(new Impl(std::move(o))) {}
CompilePool::~CompilePool() { delete impl_; }
void CompilePool::submit(std::vector<KernelDesc> batch) { impl_->submit(std::move(batch)); }
std::vector<bool> CompilePool::take_cached(const std::vector<KernelDesc>& kernels) {
  return impl_->serve_indexed(kernels);
}
std::optional<LibraryResult> CompilePool::next(std::chrono::milliseconds timeout) { return impl_->next(timeout); }
size_t CompilePool::pending() const { return impl_->pending(); }
int CompilePool::jobs() const { return impl_->jobs; }

}  // namespace cks
