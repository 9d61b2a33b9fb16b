// The GEMM runtime's engine (runtime/gpu/engine.hpp).
#include "runtime/gpu/engine.hpp"

#include <dlfcn.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <functional>
#include <limits>
#include <nlohmann/json.hpp>
#include <thread>

#include "cks/c_api.h"
#include "cks/common.hpp"

namespace cks::rt {

namespace fs = std::filesystem;

static_assert(kMaxTuningLtAlgo == kMaxLtAlgos - 1, "the tuning file's lt_algo covers autotune_lt_algos");

namespace {

constexpr size_t kOpSlots = 8;                  // initialized ops kept per choice
constexpr size_t kTuneMemory = size_t{1} << 30;  // rotating replicas of one tuning, at most
constexpr int kMaxReplicas = 8;
constexpr double kTuneBatchUs = 100;            // a timed batch lasts at least this long
constexpr int kMaxInner = 64;                   // launches per timed batch, at most

// A launch gate for timed batches: the stream waits in a host function until the host has
// enqueued the whole batch and its closing event, so the batch runs back to back on the GPU and
// its time is the kernels', not the host's launch rate (a small cuBLASLt call costs ~10 us of host
// time, more than its kernel: ungated, a host-bound batch made cuBLASLt look slower than it runs).
// Tickets are global (tunings are serialized), so a host function never reads freed state; a gate
// the host never opens (an exception between close and open) times out.
class HostGate {
 public:
  static uint64_t close(cudaStream_t s) {
    const uint64_t t = issued().fetch_add(1) + 1;
    cuda_check(cudaLaunchHostFunc(s, &wait, reinterpret_cast<void*>(static_cast<uintptr_t>(t))), "cudaLaunchHostFunc (gate)");
    return t;
  }
  static void open(uint64_t t) {
    uint64_t cur = released().load();
    while (cur < t && !released().compare_exchange_weak(cur, t)) {
    }
  }

 private:
  static std::atomic<uint64_t>& issued() {
    static std::atomic<uint64_t> n{0};
    return n;
  }
  static std::atomic<uint64_t>& released() {
    static std::atomic<uint64_t> n{0};
    return n;
  }
  static void CUDART_CB wait(void* ticket) {
    const auto t = static_cast<uint64_t>(reinterpret_cast<uintptr_t>(ticket));
    const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(2);
    while (released().load(std::memory_order_acquire) < t && std::chrono::steady_clock::now() < until)
      std::this_thread::yield();
  }
};

std::mutex g_libraries_mu;
std::map<std::string, std::unique_ptr<KernelLib>> g_libraries;

std::string problem_text(Layout l, int64_t m, int64_t n, int64_t k) {
  return std::string(to_string(l)) + " " + std::to_string(m) + "x" + std::to_string(n) + "x" + std::to_string(k);
}

cks_knobs to_abi(const RuntimeKnobs& k) {
  return {static_cast<int>(k.raster), k.max_swizzle, static_cast<int>(k.decomposition), k.splits,
          static_cast<int>(k.reduction)};
}

// The catalogue's check of the problem ("" when the kernels can run it).
std::string shape_limit(int64_t m, int64_t n, int64_t k, Layout layout) {
  try {
    check_problem(m, n, k, layout);
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

template <size_t N>
void copy_text(char (&dst)[N], const std::string& src) {
  const size_t n = std::min(src.size(), N - 1);
  std::memcpy(dst, src.data(), n);
  dst[n] = '\0';
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t h = v.size() / 2;
  return v.size() % 2 ? v[h] : 0.5 * (v[h - 1] + v[h]);
}

}  // namespace

const KernelLib& load_kernel_library(const std::string& path) {
  std::lock_guard lk(g_libraries_mu);
  if (auto it = g_libraries.find(path); it != g_libraries.end()) return *it->second;
  void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle) throw Error("cannot load kernel library " + path + ": " + dlerror());
  auto get = reinterpret_cast<const cks_kernel_lib* (*)()>(dlsym(handle, "cks_kernel_lib_get"));
  const cks_kernel_lib* api = get ? get() : nullptr;
  if (!api || api->abi_version != CKS_KERNEL_LIB_ABI_VERSION) {
    dlclose(handle);
    throw Error("kernel library " + path + " does not export ABI version " + std::to_string(CKS_KERNEL_LIB_ABI_VERSION));
  }
  auto lib = std::make_unique<KernelLib>();
  lib->path = path;
  lib->api = api;
  return *g_libraries.emplace(path, std::move(lib)).first->second;
}

std::string_view to_string(Source s) {
  switch (s) {
    case Source::bundle: return "bundle";
    case Source::tuned: return "tuned";
    case Source::compiled: return "compiled";
    case Source::cublas: return "cublas";
  }
  return "?";
}

// An initialized kernel (the ABI's cks_op), destroyed when the last user lets go.
struct Engine::Op {
  const cks_kernel_lib* api = nullptr;
  cks_op op = nullptr;
  Op(const cks_kernel_lib* a, cks_op o) : api(a), op(o) {}
  ~Op() {
    if (op) api->destroy(op);
  }
};

struct Engine::OpSlot {
  const void* a;
  const void* b;
  void* d;
  float alpha;
  cudaStream_t stream;
  void* workspace;
  std::shared_ptr<Op> op;
  uint64_t used;
};

// What a problem runs: a kernel with its knobs (api set) or cuBLASLt (api null).
struct Engine::Choice {
  Source source = Source::cublas;
  const cks_kernel_lib* api = nullptr;
  int index = -1;
  std::string kernel_id, canonical, knobs_text, library;
  cks_knobs knobs{};
  int rank = 0;
  int sm_count = 0;
  size_t workspace = 0;  // bytes this problem needs (stream-K, split-K)
  std::string reason;
  double tuned_us = 0, cublas_us = 0;
  int lt_algo = 0;  // cuBLASLt (api null): the heuristic's algorithm for 256-byte-aligned operands (autotune)
  bool compile_pending = false;
  mutable std::mutex ops_mu;
  mutable std::vector<OpSlot> ops;
  mutable uint64_t clock = 0;
};

struct Engine::Entry {
  std::mutex resolve_mu;
  std::atomic<const Choice*> choice{nullptr};
  std::string shape_limit;  // set by resolve
  std::mutex mu;            // choices, plans, pending, last_fallback
  std::vector<std::unique_ptr<Choice>> choices;
  std::atomic<LtPlan*> plans[3] = {nullptr, nullptr, nullptr};  // by operand alignment 256, 16, 2
  std::atomic<LtPlan*> algo_plan{nullptr};  // alignment 256, the choice's lt_algo > 0 (autotune)
  std::vector<std::unique_ptr<LtPlan>> plan_store;
  std::optional<Candidate> pending;  // the pick being compiled (select)
  std::optional<std::vector<Candidate>> retune;  // autotune's candidates, some compiling: tuned once all are settled
  std::atomic<uint64_t> seen_generation{0};
  std::atomic<uint64_t> calls{0}, fallback_calls{0};
  std::string last_fallback;

  const Choice* install(std::unique_ptr<Choice> c) {
    const Choice* p = c.get();
    choices.push_back(std::move(c));
    choice.store(p, std::memory_order_release);
    return p;
  }
};

struct Engine::StreamWorkspace {
  std::mutex mu;
  void* ptr = nullptr;  // kernel workspace (cudaMallocAsync on the stream)
  size_t bytes = 0;
  std::atomic<void*> lt{nullptr};  // cuBLASLt workspace (kCublasWorkspace)
  int device = 0;
};

Engine::Engine(RuntimeConfig config) : config_(std::move(config)), mode_(config_.mode) {
  if (!config_.model_path.empty()) {
    std::error_code ec;
    if (!fs::is_regular_file(config_.model_path, ec)) throw Error("model file '" + config_.model_path + "' not found");
    model_file_ = config_.model_path;
  } else {
    const char* p = nullptr;
    if (cks_data_path("model", &p) == 0 && p) model_file_ = p;
  }
  if (!config_.bundle_dir.empty()) {
    bundle_ = BundleIndex::load(config_.bundle_dir);
    if (bundle_->abi_version != CKS_KERNEL_LIB_ABI_VERSION)
      throw Error("bundle " + config_.bundle_dir + " holds kernel libraries of ABI version " +
                  std::to_string(bundle_->abi_version) + ", this runtime loads version " +
                  std::to_string(CKS_KERNEL_LIB_ABI_VERSION) + " (rebuild it with this cks bundle)");
    if (bundle_->gpu_arch != "sm_90a")
      throw Error("bundle " + config_.bundle_dir + " is for " + bundle_->gpu_arch + ", this runtime runs sm_90a kernels");
    const std::string& hash = model_hash();
    if (model_file_.empty())
      bundle_note_ = "";  // no model here: the bundle's rankings are the only ones
    else if (hash != bundle_->model_hash)
      bundle_note_ = "the bundle was ranked by another model (" + bundle_->model_hash + ", this runtime's " + hash +
                     "): its kernels are used, its rankings are not";
  }
  if (config_.mode == Mode::autotune) set_mode(Mode::autotune);  // checks the tuning file
  cublas_ = std::make_unique<CublasLt>();
}

Engine::~Engine() {
  compiler_.reset();  // stops compiling first
  {
    std::unique_lock lk(entries_mu_);
    entries_.clear();  // ops and plans
  }
  // Device memory and streams, if any were made (a handle that never ran a GEMM touches no GPU).
  if (!workspaces_.empty() || !tuning_streams_.empty()) {
    int current = 0;
    const bool have_device = cudaGetDevice(&current) == cudaSuccess;
    for (auto& [key, ws] : workspaces_) {
      if (cudaSetDevice(ws->device) != cudaSuccess) continue;
      if (ws->ptr) cudaFree(ws->ptr);  // waits for the work using it
      if (void* lt = ws->lt.load()) cudaFree(lt);
    }
    for (auto& [device, s] : tuning_streams_)
      if (cudaSetDevice(device) == cudaSuccess) cudaStreamDestroy(s);
    if (have_device) cudaSetDevice(current);
  }
  cublas_.reset();
  if (selector_) cks_selector_free(selector_);
}

void Engine::set_mode(Mode m) {
  if (m == Mode::autotune) {
    // A bad tuning file is reported now, not at the first call (the GPU name, which decides which
    // records apply, is known only then).
    std::error_code ec;
    if (fs::exists(config_.tuning_file, ec)) {
      TuningTable syntax(config_.tuning_file, "", "", "");
      syntax.load();
    }
  }
  mode_.store(m, std::memory_order_relaxed);
}

const std::string& Engine::model_hash() {
  std::lock_guard lk(model_mu_);
  if (!model_hashed_) {
    model_hash_ = model_file_.empty() ? "none" : file_hash(model_file_);
    model_hashed_ = true;
  }
  return model_hash_;
}

int Engine::sm_count(int device) {
  std::lock_guard lk(device_mu_);
  if (auto it = sm_counts_.find(device); it != sm_counts_.end()) return it->second;
  int n = 0;
  cuda_check(cudaDeviceGetAttribute(&n, cudaDevAttrMultiProcessorCount, device), "cudaDeviceGetAttribute");
  sm_counts_[device] = n;
  return n;
}

cudaStream_t Engine::tuning_stream(int device) {
  std::lock_guard lk(device_mu_);
  if (auto it = tuning_streams_.find(device); it != tuning_streams_.end()) return it->second;
  cudaStream_t s = nullptr;
  cuda_check(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), "cudaStreamCreate (tuning)");
  tuning_streams_[device] = s;
  return s;
}

Engine::StreamWorkspace& Engine::stream_workspace(int device, cudaStream_t stream) {
  std::lock_guard lk(device_mu_);
  auto& ws = workspaces_[{device, stream}];
  if (!ws) {
    ws = std::make_unique<StreamWorkspace>();
    ws->device = device;
  }
  return *ws;
}

CompileService* Engine::compiler(std::string& why) {
  std::lock_guard lk(compile_mu_);
  if (!config_.compile_on_miss) {
    why = "the compile cache is off";
    return nullptr;
  }
  if (!compile_checked_) {
    compile_checked_ = true;
    CompileService::Options o;
    o.cache_dir = config_.kernel_cache;
    o.jobs = config_.compile_jobs;
    compile_unavailable_ = CompileService::unavailable(o);
    if (compile_unavailable_.empty()) compiler_ = std::make_unique<CompileService>(o);
  }
  if (!compiler_) why = "no compile cache: " + compile_unavailable_;
  return compiler_.get();
}

TuningTable& Engine::tuning() {
  std::lock_guard lk(tuning_mu_);
  if (!tuning_) {
    int device = 0;
    cuda_check(cudaGetDevice(&device), "cudaGetDevice");
    cudaDeviceProp prop{};
    cuda_check(cudaGetDeviceProperties(&prop, device), "cudaGetDeviceProperties");
    gpu_name_ = prop.name;
    auto t = std::make_unique<TuningTable>(config_.tuning_file, gpu_name_, CKS_VERSION, model_hash());
    t->load();
    tuning_ = std::move(t);
  }
  return *tuning_;
}

Engine::Entry& Engine::entry(const Key& key) {
  {
    std::shared_lock lk(entries_mu_);
    if (auto it = entries_.find(key); it != entries_.end()) return *it->second;
  }
  std::unique_lock lk(entries_mu_);
  auto& e = entries_[key];
  if (!e) e = std::make_unique<Entry>();
  return *e;
}

void Engine::gemm(int64_t m, int64_t n, int64_t k, Layout layout, const void* a, const void* b, void* d, float alpha,
                  float beta, cudaStream_t stream) {
  as_column_problem(m, n, layout, a, b);  // a row product (M = 1) runs as the column (N, 1, K)
  int device = 0;
  cuda_check(cudaGetDevice(&device), "cudaGetDevice");
  const Call c{m, n, k, layout, a, b, d, alpha, beta, stream, device};
  Entry& e = entry({static_cast<int>(mode()), device, static_cast<int>(layout), m, n, k});
  const Choice* ch = e.choice.load(std::memory_order_acquire);
  if (!ch) {
    // Resolved once; concurrent first calls wait here. A resolution that throws (a CUDA error, an
    // autotune inside graph capture) leaves the entry unresolved for the next call to try again.
    std::lock_guard lk(e.resolve_mu);
    if (!e.choice.load(std::memory_order_acquire)) resolve(e, c);
    ch = e.choice.load(std::memory_order_acquire);
  }
  e.calls.fetch_add(1, std::memory_order_relaxed);
  if (ch->compile_pending) {
    maybe_upgrade(e, c);
    ch = e.choice.load(std::memory_order_acquire);
  }
  run_choice(*ch, e, c);
}

std::vector<Candidate> Engine::ranking(const Call& c, size_t depth, std::string& note) {
  std::vector<Candidate> out;
  if (bundle_ && bundle_note_.empty()) {
    if (const BundleProblem* bp = bundle_->find(c.layout, c.m, c.n, c.k)) {
      for (const auto& p : bp->picks) {
        if (p.rank > static_cast<int>(depth)) continue;
        const auto& k = bundle_->kernels.at(p.kernel_id);
        out.push_back({p.kernel_id, k.canonical, p.knobs, p.rank, p.variant});
      }
      note = "the bundle's ranking";
      return with_reduction(std::move(out));
    }
  }
  {
    std::lock_guard lk(selector_mu_);
    if (!selector_tried_) {  // the model is loaded once, at the first problem the bundle does not rank
      selector_tried_ = true;
      cks_selector_handle h = nullptr;
      if (cks_selector_create_with(model_file_.empty() ? nullptr : model_file_.c_str(), config_.orientations.c_str(), &h) == 0)
        selector_ = h;
      else selector_error_ = cks_last_error();
    }
  }
  if (!selector_) {
    note = "no selector (" + selector_error_ + ")";
    return out;
  }
  std::vector<cks_selection> sel(depth);
  uint32_t got = 0;
  if (cks_selector_select(selector_, c.m, c.n, c.k, std::string(to_string(c.layout)).c_str(), static_cast<uint32_t>(depth),
                          sel.data(), &got) != 0) {
    note = std::string("the selector failed: ") + cks_last_error();
    return out;
  }
  for (uint32_t i = 0; i < got; ++i) out.push_back({sel[i].kernel_id, sel[i].canonical, sel[i].knobs, static_cast<int>(i + 1), false});
  note = "the model's ranking";
  return with_reduction(std::move(out));
}

// The opt-in nondeterministic reduction (RuntimeConfig::nondeterministic) on the ranking's stream-K
// candidates; the others, and every candidate without the option, as they are.
std::vector<Candidate> Engine::with_reduction(std::vector<Candidate> ranked) const {
  if (!config_.nondeterministic) return ranked;
  for (auto& cand : ranked)
    cand.knobs = cks::with_reduction(KernelDesc::from_canonical(cand.canonical), RuntimeKnobs::from_canonical(cand.knobs),
                                     Reduction::nondeterministic)
                     .canonical();
  return ranked;
}

std::unique_ptr<Engine::Choice> Engine::cublas_choice(std::string reason) const {
  auto ch = std::make_unique<Choice>();
  ch->source = Source::cublas;
  ch->reason = std::move(reason);
  return ch;
}

std::unique_ptr<Engine::Choice> Engine::kernel_choice(const Candidate& cand, const Call& c, Source source,
                                                      std::string& why, bool compile, bool* compiling) {
  if (compiling) *compiling = false;
  const std::string pick = cand.rank == 1 && !cand.variant ? "the model's top-1 " + cand.kernel_id
                                                           : "pick " + std::to_string(cand.rank) + " " + cand.kernel_id;
  std::string lib_path;
  int index = -1;
  Source from = source;
  const BundleKernel* bk = nullptr;
  if (bundle_)
    if (auto it = bundle_->kernels.find(cand.kernel_id); it != bundle_->kernels.end() && it->second.ok()) bk = &it->second;
  if (bk) {
    lib_path = (fs::path(config_.bundle_dir) / bk->library).string();
    index = bk->index;
  } else {
    std::string no_compile;
    CompileService* cs = compiler(no_compile);
    CompileService::Status st;
    if (cs) st = compile ? cs->request(KernelDesc::from_canonical(cand.canonical)) : cs->status(cand.kernel_id);
    if (!cs || st.state == CompileService::State::failed) {
      why = pick + " is not in the bundle (" + (cs ? st.error : no_compile) + ")";
      return nullptr;
    }
    if (st.state == CompileService::State::pending) {
      why = pick + " is not in the bundle; " + (compile ? "compiling it in the background" : "not compiled");
      if (compiling) *compiling = compile;
      return nullptr;
    }
    lib_path = st.where.lib_path;
    index = st.where.index;
    if (source == Source::bundle) from = Source::compiled;
  }
  const KernelLib* loaded = nullptr;
  try {
    loaded = &load_kernel_library(lib_path);
  } catch (const Error& e) {
    // A damaged bundle or cache file: this candidate is out, the call still runs.
    why = pick + ": " + e.what();
    static std::once_flag warned;
    std::call_once(warned, [&] { std::fprintf(stderr, "cks runtime: warning: %s\n", one_line(e.what(), 400).c_str()); });
    return nullptr;
  }
  const KernelLib& lib = *loaded;
  if (index < 0 || index >= lib.api->count() || cand.kernel_id != lib.api->kernel_id(index))
    throw Error("kernel library " + lib_path + " does not hold " + cand.kernel_id + " at index " + std::to_string(index));
  auto ch = std::make_unique<Choice>();
  ch->source = from;
  ch->api = lib.api;
  ch->index = index;
  ch->kernel_id = cand.kernel_id;
  ch->canonical = cand.canonical;
  ch->knobs_text = cand.knobs;
  ch->knobs = to_abi(RuntimeKnobs::from_canonical(cand.knobs));
  ch->rank = cand.rank;
  ch->library = lib_path;
  ch->sm_count = sm_count(c.device);
  cks_problem p = kernel_problem(*ch, c, c.a, c.b, c.d);
  const int st = lib.api->can_implement(index, &p);
  if (st != CKS_OK) {
    why = pick + (st == CKS_CANNOT_IMPLEMENT ? " cannot run this problem (CUTLASS can_implement)"
                                             : " does not take the knobs " + cand.knobs);
    return nullptr;
  }
  ch->workspace = lib.api->workspace_size(index, &p);
  return ch;
}

void Engine::resolve(Entry& e, const Call& c) {
  const Mode m = mode();
  e.shape_limit = shape_limit(c.m, c.n, c.k, c.layout);
  std::unique_ptr<Choice> ch;
  if (!e.shape_limit.empty() && config_.strict && m != Mode::cublas) {
    throw Error(e.shape_limit + " (strict: the CUTLASS kernels cannot run " + problem_text(c.layout, c.m, c.n, c.k) + ")");
  } else if (!e.shape_limit.empty()) {
    ch = cublas_choice("the CUTLASS kernels cannot run it: " + e.shape_limit);
  } else if (m == Mode::cublas) {
    ch = cublas_choice("cublas mode");
  } else if (m == Mode::select) {
    std::string note;
    const auto ranked = ranking(c, static_cast<size_t>(config_.select_depth), note);
    std::string whys;
    std::optional<Candidate> pending;
    uint64_t generation = 0;
    {
      std::string ignored;
      if (CompileService* cs = compiler(ignored)) generation = cs->generation();
    }
    for (const auto& cand : ranked) {
      if (cand.variant) continue;
      std::string why;
      bool compiling = false;
      ch = kernel_choice(cand, c, Source::bundle, why, true, &compiling);
      if (ch) {
        ch->reason = note + ", rank " + std::to_string(cand.rank) + (whys.empty() ? "" : "; " + whys);
        break;
      }
      if (compiling && !pending) pending = cand;
      whys += (whys.empty() ? "" : "; ") + why;
    }
    if (!ch) {
      ch = cublas_choice(ranked.empty() ? note : whys);
      if (pending) {
        ch->compile_pending = true;
        std::lock_guard lk(e.mu);
        e.pending = pending;
        e.seen_generation.store(generation);
      }
    }
  } else {
    std::string note;
    const auto ranked = ranking(c, static_cast<size_t>(std::max(config_.autotune_top, 1)), note);
    ch = autotune(e, c, ranked, note);
  }
  if (config_.verbose)
    std::fprintf(stderr, "cks runtime: %s %s -> %s%s%s%s%s (%s)\n", std::string(to_string(m)).c_str(),
                 problem_text(c.layout, c.m, c.n, c.k).c_str(), std::string(to_string(ch->source)).c_str(),
                 ch->kernel_id.empty() ? "" : " ", ch->kernel_id.c_str(), ch->knobs_text.empty() ? "" : " ",
                 ch->knobs_text.c_str(), one_line(ch->reason, 400).c_str());
  std::lock_guard lk(e.mu);
  e.install(std::move(ch));
}

void Engine::maybe_upgrade(Entry& e, const Call& c) {
  CompileService* cs = nullptr;
  {
    std::lock_guard lk(compile_mu_);
    cs = compiler_.get();
  }
  if (!cs) return;
  const uint64_t g = cs->generation();
  if (g == e.seen_generation.load(std::memory_order_acquire)) return;
  if (maybe_retune(e, c, *cs, g)) return;
  std::lock_guard lk(e.mu);
  const Choice* cur = e.choice.load(std::memory_order_acquire);
  if (!cur->compile_pending || !e.pending) return;
  e.seen_generation.store(g, std::memory_order_release);
  const auto st = cs->status(e.pending->kernel_id);
  if (st.state == CompileService::State::pending) return;
  std::string why;
  std::unique_ptr<Choice> ch;
  if (st.state == CompileService::State::ready) ch = kernel_choice(*e.pending, c, Source::compiled, why, false);
  if (ch) {
    ch->reason = "compiled in the background: " + cur->reason;
    if (config_.verbose)
      std::fprintf(stderr, "cks runtime: %s %s -> compiled %s %s\n", std::string(to_string(mode())).c_str(),
                   problem_text(c.layout, c.m, c.n, c.k).c_str(), ch->kernel_id.c_str(), ch->knobs_text.c_str());
  } else {
    ch = cublas_choice(cur->reason + "; " + (st.state == CompileService::State::failed ? st.error : why));
  }
  e.pending.reset();
  e.install(std::move(ch));
}

bool Engine::maybe_retune(Entry& e, const Call& c, CompileService& cs, uint64_t generation) {
  std::vector<Candidate> ranked;
  {
    std::lock_guard lk(e.mu);
    if (!e.retune) return false;
    e.seen_generation.store(generation, std::memory_order_release);
    for (const auto& cand : *e.retune)
      if (cs.status(cand.kernel_id).state == CompileService::State::pending) return true;  // not yet
    // Not inside graph capture: the tuning launches and synchronizes (a later call tunes).
    cudaStreamCaptureStatus capture = cudaStreamCaptureStatusNone;
    if (cudaStreamIsCapturing(c.stream, &capture) != cudaSuccess || capture != cudaStreamCaptureStatusNone) {
      e.seen_generation.store(generation - 1, std::memory_order_release);
      return true;
    }
    ranked = std::move(*e.retune);
    e.retune.reset();
  }
  // One tuning per entry (resolve_mu, as the first resolution); autotune takes e.mu itself.
  std::lock_guard rl(e.resolve_mu);
  std::string note = "after the background compiles";
  std::unique_ptr<Choice> ch;
  try {
    ch = autotune(e, c, ranked, note);
  } catch (...) {  // as a first resolution that throws: the call fails, a later call tunes again
    std::lock_guard lk(e.mu);
    e.retune = std::move(ranked);
    e.seen_generation.store(generation - 1, std::memory_order_release);
    throw;
  }
  if (config_.verbose)
    std::fprintf(stderr, "cks runtime: autotune %s -> %s%s%s (after the background compiles)\n",
                 problem_text(c.layout, c.m, c.n, c.k).c_str(), std::string(to_string(ch->source)).c_str(),
                 ch->kernel_id.empty() ? "" : " ", ch->kernel_id.c_str());
  std::lock_guard lk(e.mu);
  e.install(std::move(ch));
  return true;
}

void Engine::run_choice(const Choice& ch, Entry& e, const Call& c) {
  if (!ch.api) return run_cublas(e, c, ch.lt_algo);
  // Per call: what the kernels cannot do with these operands (the shape was checked once).
  if (c.beta != 0.0f || alignment_of(c.a, c.b, c.d) < 16) {
    if (config_.strict)
      throw Error(std::string(c.beta != 0.0f ? "beta != 0 (the CUTLASS kernels have no C operand)"
                                             : "an operand is not 16-byte aligned (TMA needs it)") +
                  " (strict: the kernel " + ch.kernel_id + " cannot run this call)");
    e.fallback_calls.fetch_add(1, std::memory_order_relaxed);
    {
      std::lock_guard lk(e.mu);
      e.last_fallback = c.beta != 0.0f ? "beta != 0 (the CUTLASS kernels have no C operand)"
                                       : "an operand is not 16-byte aligned (TMA needs it)";
    }
    return run_cublas(e, c);
  }
  run_kernel(ch, c);
}

cks_problem Engine::kernel_problem(const Choice& ch, const Call& c, const void* a, const void* b, void* d) {
  cks_problem p{};
  p.m = static_cast<int>(c.m);
  p.n = static_cast<int>(c.n);
  p.k = static_cast<int>(c.k);
  p.A = a;
  p.B = b;
  p.D = d;
  p.alpha = c.alpha;
  p.beta = 0.0f;
  p.knobs = ch.knobs;
  p.device_id = c.device;
  p.sm_count = ch.sm_count;
  return p;
}

void Engine::run_kernel(const Choice& ch, const Call& c) {
  cks_problem p = kernel_problem(ch, c, c.a, c.b, c.d);
  // The op for these operands: cached, or initialized (and cached in place of the least recently used).
  auto op_for = [&](void* workspace, bool& fresh) {
    fresh = false;
    {
      std::lock_guard lk(ch.ops_mu);
      ++ch.clock;
      for (auto& s : ch.ops)
        if (s.a == c.a && s.b == c.b && s.d == c.d && s.alpha == c.alpha && s.stream == c.stream && s.workspace == workspace) {
          s.used = ch.clock;
          return s.op;
        }
    }
    cks_op raw = nullptr;
    const int st = ch.api->initialize(ch.index, &p, workspace, c.stream, &raw);
    if (st != CKS_OK || !raw)
      throw Error("kernel " + ch.kernel_id + " (" + ch.knobs_text + "): initialize() failed on " +
                  problem_text(c.layout, c.m, c.n, c.k) + " (status " + std::to_string(st) + ")");
    auto op = std::make_shared<Op>(ch.api, raw);
    fresh = true;
    std::lock_guard lk(ch.ops_mu);
    OpSlot slot{c.a, c.b, c.d, c.alpha, c.stream, workspace, op, ++ch.clock};
    if (ch.ops.size() < kOpSlots) {
      ch.ops.push_back(std::move(slot));
    } else {
      auto lru = std::min_element(ch.ops.begin(), ch.ops.end(), [](const OpSlot& x, const OpSlot& y) { return x.used < y.used; });
      *lru = std::move(slot);
    }
    return op;
  };
  auto launch = [&](const Op& op, bool fresh) {
    if (!fresh && ch.workspace > 0 && ch.api->reset_workspace(op.op, c.stream) != CKS_OK)
      throw Error("kernel " + ch.kernel_id + ": reset_workspace() failed");
    if (ch.api->run(op.op, c.stream) != CKS_OK)
      throw Error("kernel " + ch.kernel_id + " (" + ch.knobs_text + "): run() could not launch it on " +
                  problem_text(c.layout, c.m, c.n, c.k));
  };
  bool fresh = false;
  if (ch.workspace == 0) {
    const auto op = op_for(nullptr, fresh);
    launch(*op, fresh);
    return;
  }
  // Stream-K / split-K: the stream's workspace, grown stream-ordered; calls on the stream serialized.
  StreamWorkspace& ws = stream_workspace(c.device, c.stream);
  std::lock_guard lk(ws.mu);
  if (ws.bytes < ch.workspace) {
    if (ws.ptr) cuda_check(cudaFreeAsync(ws.ptr, c.stream), "cudaFreeAsync (workspace)");
    ws.ptr = nullptr;
    ws.bytes = 0;
    cuda_check(cudaMallocAsync(&ws.ptr, ch.workspace, c.stream), "cudaMallocAsync (workspace)");
    ws.bytes = ch.workspace;
  }
  const auto op = op_for(ws.ptr, fresh);
  launch(*op, fresh);
}

void Engine::run_cublas(Entry& e, const Call& c, int algo) {
  const uint32_t align = alignment_of(c.a, c.b, c.d);
  const int slot = align >= 256 ? 0 : align >= 16 ? 1 : 2;
  // Autotune's other heuristic algorithms were timed on 256-byte-aligned operands: other
  // alignments get other heuristic lists, so they run the top-1.
  LtPlan* plan = nullptr;
  if (algo > 0 && slot == 0) {
    plan = e.algo_plan.load(std::memory_order_acquire);
    if (!plan || plan->algo() != algo) {
      std::lock_guard lk(e.mu);
      plan = e.algo_plan.load(std::memory_order_acquire);
      if (!plan || plan->algo() != algo) {
        e.plan_store.push_back(std::make_unique<LtPlan>(cublas_->handle(c.device), c.layout, c.m, c.n, c.k, align, algo));
        plan = e.plan_store.back().get();
        e.algo_plan.store(plan, std::memory_order_release);
      }
    }
  }
  if (!plan) plan = e.plans[slot].load(std::memory_order_acquire);
  if (!plan) {
    std::lock_guard lk(e.mu);
    plan = e.plans[slot].load(std::memory_order_acquire);
    if (!plan) {
      e.plan_store.push_back(std::make_unique<LtPlan>(cublas_->handle(c.device), c.layout, c.m, c.n, c.k, align));
      plan = e.plan_store.back().get();
      e.plans[slot].store(plan, std::memory_order_release);
    }
  }
  void* lt = nullptr;
  if (plan->workspace() > 0) {
    StreamWorkspace& ws = stream_workspace(c.device, c.stream);
    lt = ws.lt.load(std::memory_order_acquire);
    if (!lt) {
      std::lock_guard lk(ws.mu);
      lt = ws.lt.load(std::memory_order_acquire);
      if (!lt) {
        cuda_check(cudaMalloc(&lt, kCublasWorkspace), "cudaMalloc (cuBLASLt workspace)");
        ws.lt.store(lt, std::memory_order_release);
      }
    }
  }
  plan->run(c.a, c.b, c.d, c.alpha, c.beta, lt, c.stream);
}

// Autotune: the tuning file's record of the problem, else the available candidates and cuBLASLt
// timed on a private stream, interleaved: a few rounds, in each every candidate once (in a rotated
// order) as a gated batch of launches between two CUDA events (HostGate: GPU time, not launch
// rate), on rotating copies of the operands (a working set of at least twice the L2, so no launch
// finds its operands cached); the winner has the lowest median time per call over the rounds.
// cuBLASLt is its heuristic's top-1 and, with autotune_lt_algos N > 1, its next N - 1 algorithms
// (256-byte-aligned operands only); a winning algorithm i > 0 is the Choice's lt_algo, its plan the
// entry's algo_plan, and the tuning file's lt_algo.
std::unique_ptr<Engine::Choice> Engine::autotune(Entry& e, const Call& c, const std::vector<Candidate>& ranked,
                                                 std::string& note) {
  TuningTable& table = tuning();
  {
    std::lock_guard lk(tuning_mu_);
    if (const TuningRecord* r = table.find(c.layout, c.m, c.n, c.k)) {
      const TuningRecord rec = *r;
      const std::string origin = "tuning file " + table.path() + ": ";
      if (rec.winner == kCublasWinner && rec.lt_algo > 0) {
        // Another of the heuristic's algorithms won: built now for 256-byte-aligned operands, as it
        // was timed (a heuristic that no longer finds it, another cuBLAS, is tuned again).
        std::unique_ptr<LtPlan> plan;
        std::string why;
        try {
          plan = std::make_unique<LtPlan>(cublas_->handle(c.device), c.layout, c.m, c.n, c.k, 256, rec.lt_algo);
        } catch (const LtAlgoNotFound& err) {
          why = err.what();
        }
        if (plan) {
          auto ch = cublas_choice(origin + "cuBLASLt algorithm " + std::to_string(rec.lt_algo) + " won (" +
                                  format_double(rec.us) + " us against the top-1's " + format_double(rec.cublas_us) + " us)");
          ch->source = Source::tuned;
          ch->tuned_us = rec.us;
          ch->cublas_us = rec.cublas_us;
          ch->lt_algo = rec.lt_algo;
          std::lock_guard elk(e.mu);
          e.plan_store.push_back(std::move(plan));
          e.algo_plan.store(e.plan_store.back().get(), std::memory_order_release);
          return ch;
        }
        note += "; the tuning file's cuBLASLt algorithm " + std::to_string(rec.lt_algo) + " is not available here (" +
                why + "): tuning again";
      } else if (rec.winner == kCublasWinner) {
        auto ch = cublas_choice(origin + "cuBLASLt won (" + format_double(rec.us) + " us)");
        ch->source = Source::tuned;
        ch->tuned_us = rec.us;
        ch->cublas_us = rec.cublas_us;
        return ch;
      } else if (!config_.nondeterministic && RuntimeKnobs::from_canonical(rec.knobs).reduction != Reduction::deterministic) {
        note += "; the tuning file's winner " + rec.winner + " (" + rec.knobs +
                ") runs the nondeterministic reduction, which this runtime is not set to: tuning again";
      } else {
        std::string canonical;
        if (bundle_ && bundle_->kernels.count(rec.winner)) canonical = bundle_->kernels.at(rec.winner).canonical;
        else if (auto desc = find_kernel(c.layout, rec.winner)) canonical = desc->canonical();
        int rank = 0;
        for (const auto& cand : ranked)
          if (cand.kernel_id == rec.winner && cand.knobs == rec.knobs) rank = cand.rank;
        std::string why;
        std::unique_ptr<Choice> ch;
        if (!canonical.empty()) ch = kernel_choice({rec.winner, canonical, rec.knobs, rank, false}, c, Source::tuned, why, false);
        if (ch) {
          ch->source = Source::tuned;
          ch->tuned_us = rec.us;
          ch->cublas_us = rec.cublas_us;
          ch->reason = origin + format_double(rec.us) + " us against cuBLASLt's " + format_double(rec.cublas_us) + " us";
          return ch;
        }
        note += "; the tuning file's winner " + rec.winner + " is not available here (" +
                (canonical.empty() ? "not a kernel of this catalogue" : why) + "): tuning again";
      }
    }
  }
  // The candidates available now (bundled or compiled before); those no bundle holds are compiled
  // in the background (compile_on_miss), and the problem runs on cuBLASLt until every one of them
  // is settled (compiled or failed): then the next call tunes (maybe_upgrade).
  uint64_t generation = 0;
  {
    std::string ignored;
    if (CompileService* cs = compiler(ignored)) generation = cs->generation();
  }
  std::vector<std::unique_ptr<Choice>> kernels;
  std::string whys;
  size_t compiling = 0;
  for (const auto& cand : ranked) {
    std::string why;
    bool started = false;
    if (auto ch = kernel_choice(cand, c, Source::tuned, why, true, &started)) kernels.push_back(std::move(ch));
    else whys += (whys.empty() ? "" : "; ") + why;
    if (started) ++compiling;
  }
  if (compiling > 0) {
    auto ch = cublas_choice("autotune: tuning once " + std::to_string(compiling) + " of the top " +
                            std::to_string(ranked.size()) + " are compiled (" + whys + ")");
    ch->compile_pending = true;
    std::lock_guard lk(e.mu);
    e.retune = ranked;
    e.seen_generation.store(generation);
    return ch;
  }
  cudaStreamCaptureStatus capture = cudaStreamCaptureStatusNone;
  cuda_check(cudaStreamIsCapturing(c.stream, &capture), "cudaStreamIsCapturing");
  if (capture != cudaStreamCaptureStatusNone)
    throw Error("autotune: the first call of " + problem_text(c.layout, c.m, c.n, c.k) +
                " times candidates and cannot run inside CUDA graph capture; call it once before capturing");

  if (kernels.empty())
    return cublas_choice("autotune: no candidate is available (" + (ranked.empty() ? note : whys) + ")");

  static std::mutex tune_mu;  // one tuning at a time: concurrent ones would disturb each other's timing
  std::lock_guard tune_lock(tune_mu);
  const cudaStream_t ts = tuning_stream(c.device);
  std::vector<cudaEvent_t> events;
  std::vector<std::function<void()>> cleanup;
  struct Cleanup {
    std::vector<std::function<void()>>& fns;
    ~Cleanup() {
      for (auto it = fns.rbegin(); it != fns.rend(); ++it) (*it)();
    }
  } guard{cleanup};
  cudaEvent_t ready = nullptr;
  cuda_check(cudaEventCreateWithFlags(&ready, cudaEventDisableTiming), "cudaEventCreate");
  cleanup.push_back([ready] { cudaEventDestroy(ready); });
  cuda_check(cudaEventRecord(ready, c.stream), "cudaEventRecord");
  cuda_check(cudaStreamWaitEvent(ts, ready, 0), "cudaStreamWaitEvent");

  // Rotating operands: the caller's (when the kernels can use them) and copies.
  struct Replica {
    const void* a;
    const void* b;
    void* d;
  };
  const size_t a_bytes = 2 * static_cast<size_t>(c.m) * c.k, b_bytes = 2 * static_cast<size_t>(c.k) * c.n,
               d_bytes = 2 * static_cast<size_t>(c.m) * c.n, per = a_bytes + b_bytes + d_bytes;
  int l2 = 0;
  cuda_check(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, c.device), "cudaDeviceGetAttribute");
  const bool own_usable = c.beta == 0.0f && alignment_of(c.a, c.b, c.d) >= 16;
  int replicas = per >= 2 * static_cast<size_t>(l2) ? 1 : static_cast<int>(std::ceil(2.0 * l2 / per)) + 1;
  replicas = std::clamp(replicas, 1, kMaxReplicas);
  while (replicas > 1 && static_cast<size_t>(replicas - (own_usable ? 1 : 0)) * per > kTuneMemory) --replicas;
  std::vector<Replica> reps;
  if (own_usable) reps.push_back({c.a, c.b, c.d});
  while (static_cast<int>(reps.size()) < replicas) {
    void* buf = nullptr;
    cuda_check(cudaMallocAsync(&buf, a_bytes + b_bytes + d_bytes + 512, ts), "cudaMallocAsync (tuning operands)");
    cleanup.push_back([buf, ts] { cudaFreeAsync(buf, ts); });
    char* base = static_cast<char*>(buf);
    auto align256 = [](size_t x) { return (x + 255) / 256 * 256; };
    Replica r{base, base + align256(a_bytes), base + align256(a_bytes) + align256(b_bytes)};
    cuda_check(cudaMemcpyAsync(const_cast<void*>(r.a), c.a, a_bytes, cudaMemcpyDeviceToDevice, ts), "copy A (tuning)");
    cuda_check(cudaMemcpyAsync(const_cast<void*>(r.b), c.b, b_bytes, cudaMemcpyDeviceToDevice, ts), "copy B (tuning)");
    reps.push_back(r);
  }
  size_t ws_bytes = 0;
  for (const auto& k : kernels) ws_bytes = std::max(ws_bytes, k->workspace);
  void* ws = nullptr;
  if (ws_bytes > 0) {
    cuda_check(cudaMallocAsync(&ws, ws_bytes, ts), "cudaMallocAsync (tuning workspace)");
    cleanup.push_back([ws, ts] { cudaFreeAsync(ws, ts); });
  }
  void* lt_ws = nullptr;
  cuda_check(cudaMallocAsync(&lt_ws, kCublasWorkspace, ts), "cudaMallocAsync (tuning cuBLASLt workspace)");
  cleanup.push_back([lt_ws, ts] { cudaFreeAsync(lt_ws, ts); });
  // cuBLASLt's plan for the replicas' alignment (the caller's pointers may be less aligned).
  uint32_t align = 256;
  for (const auto& r : reps) align = std::min(align, alignment_of(r.a, r.b, r.d));
  // The heuristic's top-1 (the reference), and with autotune_lt_algos > 1 its next algorithms, found
  // for 256-byte-aligned operands only (other alignments run the top-1: run_cublas).
  std::vector<std::unique_ptr<LtPlan>> lt;
  lt.push_back(std::make_unique<LtPlan>(cublas_->handle(c.device), c.layout, c.m, c.n, c.k, align));
  std::string lt_note;
  if (config_.autotune_lt_algos > 1) {
    if (align < 256) {
      lt_note = "cuBLASLt's other algorithms not timed (operands not 256-byte aligned)";
    } else {
      for (int j = 1; j < config_.autotune_lt_algos; ++j) {
        try {
          lt.push_back(std::make_unique<LtPlan>(cublas_->handle(c.device), c.layout, c.m, c.n, c.k, align, j));
        } catch (const LtAlgoNotFound&) {
          lt_note = "the cuBLASLt heuristic found " + std::to_string(j) + " algorithm(s)";
          break;
        }
      }
    }
  }

  // One op per kernel and replica. Candidates: the kernels [0, n), cuBLASLt's algorithms [n, total).
  const size_t n = kernels.size(), total = n + lt.size();
  std::vector<std::vector<std::shared_ptr<Op>>> ops(n);
  std::vector<bool> alive(total, true);
  for (size_t i = 0; i < n; ++i) {
    for (const auto& r : reps) {
      cks_problem p = kernel_problem(*kernels[i], c, r.a, r.b, r.d);
      cks_op raw = nullptr;
      if (kernels[i]->api->initialize(kernels[i]->index, &p, ws, ts, &raw) != CKS_OK || !raw) {
        alive[i] = false;
        break;
      }
      ops[i].push_back(std::make_shared<Op>(kernels[i]->api, raw));
    }
  }
  size_t cursor = 0;
  auto launch = [&](size_t i) {
    const size_t r = cursor++ % reps.size();
    if (i == n) {
      lt[0]->run(reps[r].a, reps[r].b, reps[r].d, c.alpha, 0.0f, lt_ws, ts);
      return;
    }
    if (i > n) {
      try {
        lt[i - n]->run(reps[r].a, reps[r].b, reps[r].d, c.alpha, 0.0f, lt_ws, ts);
      } catch (const Error&) {
        alive[i] = false;  // another algorithm that cannot run: out, as a kernel would be
      }
      return;
    }
    const Op& op = *ops[i][r];
    if (kernels[i]->api->reset_workspace(op.op, ts) != CKS_OK || kernels[i]->api->run(op.op, ts) != CKS_OK) alive[i] = false;
  };
  auto event = [&] {
    cudaEvent_t ev = nullptr;
    cuda_check(cudaEventCreate(&ev), "cudaEventCreate");
    events.push_back(ev);
    return ev;
  };
  cleanup.push_back([&events] {
    for (auto ev : events) cudaEventDestroy(ev);
  });
  auto elapsed_us = [](cudaEvent_t a, cudaEvent_t b) {
    float ms = 0;
    cuda_check(cudaEventElapsedTime(&ms, a, b), "cudaEventElapsedTime");
    return 1000.0 * ms;
  };
  // Warm-up (two launches each), then one timed launch each: the batch sizes.
  std::vector<std::pair<cudaEvent_t, cudaEvent_t>> est(total);
  for (size_t i = 0; i < total; ++i) {
    if (!alive[i]) continue;
    launch(i);
    launch(i);
    est[i] = {event(), event()};
    cuda_check(cudaEventRecord(est[i].first, ts), "cudaEventRecord");
    launch(i);
    cuda_check(cudaEventRecord(est[i].second, ts), "cudaEventRecord");
  }
  cuda_check(cudaStreamSynchronize(ts), "autotune warm-up");
  std::vector<int> inner(total, 1);
  for (size_t i = 0; i < total; ++i)
    if (alive[i]) inner[i] = std::clamp(static_cast<int>(std::ceil(kTuneBatchUs / std::max(elapsed_us(est[i].first, est[i].second), 1.0))), 1, kMaxInner);
  const int rounds = config_.autotune_rounds;
  std::vector<std::vector<std::pair<cudaEvent_t, cudaEvent_t>>> marks(rounds, std::vector<std::pair<cudaEvent_t, cudaEvent_t>>(total));
  for (int r = 0; r < rounds; ++r) {
    for (size_t j = 0; j < total; ++j) {
      const size_t i = (j + static_cast<size_t>(r)) % total;
      if (!alive[i]) continue;
      marks[r][i] = {event(), event()};
      const uint64_t gate = HostGate::close(ts);
      cuda_check(cudaEventRecord(marks[r][i].first, ts), "cudaEventRecord");
      for (int x = 0; x < inner[i]; ++x) launch(i);
      cuda_check(cudaEventRecord(marks[r][i].second, ts), "cudaEventRecord");
      HostGate::open(gate);
    }
  }
  cuda_check(cudaStreamSynchronize(ts), "autotune timing");
  std::vector<double> us(total, std::numeric_limits<double>::infinity());
  for (size_t i = 0; i < total; ++i) {
    if (!alive[i]) continue;
    std::vector<double> per_round;
    for (int r = 0; r < rounds; ++r) per_round.push_back(elapsed_us(marks[r][i].first, marks[r][i].second) / inner[i]);
    us[i] = median(per_round);
  }
  // With autotune_host_us > 0 (a caller whose own host time per call is that long, cks.torch): each
  // candidate's launch cost, measured ungated after the timing (launches enqueued behind the gate cost
  // the host more: lease 24 measured cuBLASLt's there at ~13 us against 7 in steady state), and the
  // time per call of back-to-back calls, max(GPU time, launch cost + autotune_host_us). A product the
  // host bounds goes to the cheaper launch (lease 24, from Python: a CUTLASS launch ~13 us a call,
  // cuBLASLt ~16.7, for kernels of 4-7 us on the GPU). Otherwise GPU time alone decides.
  std::vector<double> call_us = us;
  if (config_.autotune_host_us > 0) {
    for (size_t i = 0; i < total; ++i) {
      if (!alive[i] || !std::isfinite(us[i])) continue;
      std::vector<double> per_rep;
      for (int r = 0; r < 3; ++r) {
        cuda_check(cudaStreamSynchronize(ts), "autotune launch cost");
        const auto h0 = std::chrono::steady_clock::now();
        for (int x = 0; x < inner[i]; ++x) launch(i);
        per_rep.push_back(std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - h0).count() / inner[i]);
      }
      call_us[i] = per_call_us(us[i], median(per_rep), config_.autotune_host_us);
    }
    cuda_check(cudaStreamSynchronize(ts), "autotune launch cost");
  }
  ops.clear();
  const size_t plain = tuned_winner(call_us, n);
  const size_t best = tuned_winner(call_us, n, n, config_.autotune_lt_margin_pct, config_.autotune_lt_margin_us);
  if (!std::isfinite(us[n])) throw Error("autotune: cuBLASLt failed on " + problem_text(c.layout, c.m, c.n, c.k));

  std::string timed;
  for (size_t i = 0; i < n; ++i)
    timed += (timed.empty() ? "" : ", ") + kernels[i]->kernel_id + " " + kernels[i]->knobs_text + " " +
             (std::isfinite(us[i]) ? format_double(std::round(us[i] * 100) / 100) + " us" : "failed");
  std::string lt_timed;
  for (size_t i = n + 1; i < total; ++i)
    lt_timed += (lt_timed.empty() ? "" : ", ") +
                (std::isfinite(us[i]) ? format_double(std::round(us[i] * 100) / 100) + " us" : std::string("failed"));
  if (!lt_timed.empty())
    lt_timed = "; algorithm" + std::string(total - n > 2 ? "s 1-" + std::to_string(total - n - 1) : " 1") + ": " + lt_timed;
  const int lt_win = best >= n ? static_cast<int>(best - n) : 0;
  std::unique_ptr<Choice> win;
  if (best >= n) {
    win = cublas_choice("");
    win->lt_algo = lt_win;
    if (lt_win > 0) {  // the winning plan (256-byte-aligned operands) is the one calls run
      std::lock_guard elk(e.mu);
      e.plan_store.push_back(std::move(lt[static_cast<size_t>(lt_win)]));
      e.algo_plan.store(e.plan_store.back().get(), std::memory_order_release);
    }
  } else {
    win = std::move(kernels[best]);
  }
  win->source = Source::tuned;
  win->tuned_us = us[best];
  win->cublas_us = us[n];
  // When the host's time changed the winner, the reason says so first (the query's reason is cut at 319 characters).
  const size_t gpu_best = tuned_winner(us, n);
  const auto us2 = [](double v) { return format_double(std::round(v * 100) / 100); };
  const std::string margin_note =
      plain != best ? "kernel kept over cuBLASLt (margin " + std::to_string(config_.autotune_lt_margin_pct) + " % + " +
                          std::to_string(config_.autotune_lt_margin_us) + " us: " + us2(call_us[best]) + " us against " +
                          us2(call_us[plain]) + " us): "
                    : "";
  const std::string host_note =
      gpu_best != plain ? "host-bound (per call, launch cost + " + std::to_string(config_.autotune_host_us) + " us: " +
                             us2(call_us[plain]) + " us against " + us2(call_us[gpu_best]) + " us for the GPU's fastest): "
                        : "";
  win->reason = margin_note + host_note + std::string(lt_win > 0 ? "cuBLASLt algorithm " + std::to_string(lt_win) + " won: " : "") + "autotuned " +
                std::to_string(n) + " candidate(s) and cuBLASLt (" + format_double(std::round(us[n] * 100) / 100) + " us" +
                lt_timed + ") over " + std::to_string(rounds) + " rounds, " + std::to_string(reps.size()) +
                " operand cop" + (reps.size() == 1 ? "y" : "ies") + ": " + timed + (whys.empty() ? "" : "; " + whys) +
                (lt_note.empty() ? "" : "; " + lt_note);
  TuningRecord rec;
  rec.gpu = gpu_name_;
  rec.cks_version = CKS_VERSION;
  rec.model_hash = model_hash();
  rec.layout = c.layout;
  rec.m = c.m;
  rec.n = c.n;
  rec.k = c.k;
  rec.winner = best >= n ? kCublasWinner : win->kernel_id;
  rec.knobs = best >= n ? "" : win->knobs_text;
  rec.us = us[best];
  rec.cublas_us = us[n];
  rec.lt_algo = lt_win;
  try {
    std::lock_guard lk(tuning_mu_);
    table.add(rec);
  } catch (const Error& err) {
    static std::once_flag warned;
    std::call_once(warned, [&] { std::fprintf(stderr, "cks runtime: warning: %s (tuning results are not kept)\n", err.what()); });
    win->reason += std::string("; not persisted: ") + err.what();
  }
  return win;
}

cks_dispatch_info Engine::query(int64_t m, int64_t n, int64_t k, Layout layout) const {
  const void* a = nullptr;
  const void* b = nullptr;
  as_column_problem(m, n, layout, a, b);  // as gemm: a row product is the column (N, 1, K)
  cks_dispatch_info info{};
  int device = 0;
  if (cudaGetDevice(&device) != cudaSuccess) device = 0;
  const Mode md = mode();
  copy_text(info.mode, std::string(to_string(md)));
  const Key key{static_cast<int>(md), device, static_cast<int>(layout), m, n, k};
  const Entry* e = nullptr;
  {
    std::shared_lock lk(entries_mu_);
    if (auto it = entries_.find(key); it != entries_.end()) e = it->second.get();
  }
  const Choice* ch = e ? e->choice.load(std::memory_order_acquire) : nullptr;
  if (!ch) {
    copy_text(info.source, "none");
    copy_text(info.reason, "not called yet in this mode on this device");
    return info;
  }
  copy_text(info.source, std::string(to_string(ch->source)));
  copy_text(info.kernel_id, ch->kernel_id);
  copy_text(info.knobs, ch->knobs_text);
  std::string reason = ch->reason;
  const uint64_t fallbacks = e->fallback_calls.load(std::memory_order_relaxed);
  if (fallbacks > 0) {
    std::lock_guard lk(const_cast<Entry*>(e)->mu);
    reason += "; " + std::to_string(fallbacks) + " call(s) ran on cuBLASLt: " + e->last_fallback;
  }
  copy_text(info.reason, one_line(reason, sizeof info.reason - 1));
  info.rank = ch->rank;
  info.compile_pending = ch->compile_pending ? 1 : 0;
  info.tuned_us = ch->tuned_us;
  info.cublas_us = ch->cublas_us;
  info.calls = e->calls.load(std::memory_order_relaxed);
  return info;
}

int Engine::wait_compiles(double timeout_s) {
  CompileService* cs = nullptr;
  {
    std::lock_guard lk(compile_mu_);
    cs = compiler_.get();
  }
  if (!cs) return 0;
  cs->wait_idle(std::chrono::milliseconds(static_cast<long>(std::max(0.0, timeout_s) * 1000)));
  return cs->pending();
}

std::string Engine::describe() const {
  nlohmann::json j{{"cks_version", CKS_VERSION},
                   {"mode", std::string(to_string(mode()))},
                   {"bundle", config_.bundle_dir},
                   {"model", model_file_},
                   {"tuning_file", config_.tuning_file},
                   {"kernel_cache", config_.kernel_cache},
                   {"compile_on_miss", config_.compile_on_miss},
                   {"compile_jobs", config_.compile_jobs},
                   {"autotune_top", config_.autotune_top},
                   {"autotune_rounds", config_.autotune_rounds},
                   {"autotune_lt_algos", config_.autotune_lt_algos},
                   {"autotune_host_us", config_.autotune_host_us},
                   {"autotune_lt_margin_pct", config_.autotune_lt_margin_pct},
                   {"autotune_lt_margin_us", config_.autotune_lt_margin_us},
                   {"select_depth", config_.select_depth},
                   {"strict", config_.strict},
                   {"nondeterministic", config_.nondeterministic}};
  if (bundle_) {
    size_t ok = 0;
    for (const auto& [id, k] : bundle_->kernels) ok += k.ok();
    j["bundle_problems"] = bundle_->problems.size();
    j["bundle_kernels"] = ok;
    j["bundle_model_hash"] = bundle_->model_hash;
    j["bundle_rankings_used"] = bundle_note_.empty();
    if (!bundle_note_.empty()) j["bundle_note"] = bundle_note_;
  }
  {
    std::lock_guard lk(model_mu_);
    if (model_hashed_) j["model_hash"] = model_hash_;
    j["orientations"] = config_.orientations;
  }
  {
    std::shared_lock lk(entries_mu_);
    j["problems_dispatched"] = entries_.size();
  }
  return j.dump();
}

}  // namespace cks::rt
