// The collection monitor (cks/monitor.hpp, docs/monitor.md).
//
// One thread runs an event loop over: the compile source (libraries appear while GPUs
// measure), one worker process per GPU (poll() on their stdout pipes), deadlines and
// heartbeats, the time budget and stop signals, periodic checkpoints. Every registry write
// happens on this thread, one committed transaction per measurement, so a kill -9 of the
// monitor loses at most the measurement in flight (which stays pending and is redone).
//
// Failure attribution: a worker runs at most one request at a time, so a crash (EOF on its
// stdout, protocol garbage) or timeout (deadline passed, heartbeats silent) is charged to the
// request it was running: a measurement gets a crash/timeout row; a group set-up gets a
// crash/timeout cuBLAS row; an idle or starting worker charges nothing. The worker is then
// killed, reaped and respawned. A worker killed from outside (SIGKILL, SIGTERM, SIGINT, SIGHUP:
// signals a crashing kernel does not raise, e.g. an operator or the OOM killer) is charged
// nothing: its measurement goes back to the queue and the worker is respawned after a back-off.
#include "cks/monitor.hpp"

#include <poll.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <deque>
#include <filesystem>
#include <limits>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <tuple>
#include <unordered_map>
#include <unordered_set>

#include "cks/common.hpp"
#include "cks/plan.hpp"
#include "cks/registry.hpp"
#include "monitor/compile_source.hpp"
#include "monitor/environment.hpp"
#include "monitor/worker_process.hpp"
#include "worker/fake.hpp"
#include "worker/protocol.hpp"

namespace cks {

namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;
using monitor::CompileSource;
using monitor::KernelToBuild;
using monitor::WorkerProcess;
using worker::Event;
using worker::EventType;
using worker::Request;
using worker::RequestType;

// A GPU whose worker fails this many times in a row outside any request (at start-up or while
// idle) is given up: nothing can be attributed, so retrying would loop forever.
constexpr int kMaxIdleFailures = 3;
// External kills (see the header comment) are not failures of the GPU or of a kernel: the worker
// is respawned after a back-off (kKillBackoffS doubling per kill in a row, up to kKillBackoffMaxS),
// up to kMaxExternalKills times in a run per GPU. A candidate whose measurement was killed
// kMaxExternalKillsPerItem times is charged from then on (its kernel may be what draws the kill:
// the OOM killer, say), so crash attempts still bound it.
constexpr int kMaxExternalKills = 100;
constexpr int kMaxExternalKillsPerItem = 10;
constexpr double kKillBackoffS = 0.05;
constexpr double kKillBackoffMaxS = 2.0;
// A kernel whose results left the worker's context unusable this many times, with no status-ok
// result in the run, is quarantined (a fatal launch_error is final for its candidate, so
// max_attempts does not bound these: without this, every group would restart a worker for it).
constexpr int kMaxFatalWithoutOk = 3;
// Ready items that make a group beyond the window worth a set-up (next_group()).
constexpr size_t kSetupItems = 64;
constexpr int kPollMs = 50;
constexpr double kQuitGraceS = 1.0;  // a worker asked to quit is killed after this long
constexpr double kInf = std::numeric_limits<double>::infinity();

double seconds_since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }
Clock::time_point after(double seconds) {
  return Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(seconds));
}
std::string fmt_s(double s) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f s", s);
  return buf;
}

// Copies a timing into a row. Absent readings (NaN) are stored as 0, the registry's "absent";
// tflops = 2 M N K / mean.
void set_timing(MeasurementRow& r, const worker::Timing& t, const GroupInfo& g) {
  const auto value = [](double v) { return std::isfinite(v) ? v : 0.0; };
  r.mean_us = value(t.mean_us);
  r.std_us = value(t.std_us);
  r.n = t.n;
  r.tflops = r.mean_us > 0 ? 2.0 * g.m * g.n * g.k / (r.mean_us * 1e-6) / 1e12 : 0;
  r.sm_clock_mhz = value(t.sm_clock_mhz);
  r.mem_clock_mhz = value(t.mem_clock_mhz);
  r.temp_c = value(t.temp_c);
  r.power_w = value(t.power_w);
}

// ---- state --------------------------------------------------------------------------------

struct Item {
  std::string kernel, knobs;
};

struct GroupState {
  GroupInfo info;
  std::deque<Item> queue;    // items without a final row, in measurement order; retries first
  size_t ready = 0;          // items in `queue` whose kernel library is ready
  // The first `not_ready` items of `queue` are known not to be ready: dispatch() scans from
  // there. Reset when a kernel of the group becomes ready or items are put at the front, so
  // picking work costs O(1) per item, not O(queue) (issue 18, defect 15).
  size_t not_ready = 0;
  size_t in_flight = 0;      // items being measured
  size_t workers_on = 0;     // workers set up (or setting up) for this group
  bool cublas_recorded = false;
  double cublas_us = kInf, best_us = kInf;
  std::unordered_set<std::string> checked;  // kernels whose results were checked in this run
  int setup_failures = 0;
  bool abandoned = false;    // set-up failed max_attempts times: skipped for this run
  bool whole = false;        // set up only once every queued item is ready (PlanGroup::whole)
  // Whether a worker may set this group up now: it has ready items, and a whole group has
  // nothing left to compile (its repetitions then run in one stretch).
  bool startable() const { return ready > 0 && (!whole || ready == queue.size()); }
  bool done() const { return queue.empty() && in_flight == 0; }
};

enum class KernelStatus { building, ready, compile_error, quarantined };

struct KernelState {
  KernelStatus status = KernelStatus::building;
  std::string lib_path;
  int index = 0;
  size_t rank = SIZE_MAX;                    // best position in any group's measurement order
  std::map<size_t, size_t> queued_in_group;  // group index -> items of this kernel in its queue
  std::optional<KernelDesc> desc;
  std::string final_error;                   // why it was quarantined / failed to compile
  int ok_results = 0;                        // status-ok measurements in this run
  int fatal_results = 0;                     // results that left the worker's context unusable
};

enum class WorkerStatus {
  starting,    // spawned, hello sent
  idle,
  setting_up,  // group request sent
  measuring,   // measure request sent
  exiting,     // reported a fatal result; respawned when it exits
  backoff,     // killed from outside; respawned at respawn_at
  stopped,     // not restarted (stop, or given up)
};

struct Running {
  size_t group = 0;
  Item item;
  int attempt = 1;
  int64_t id = 0;
  std::string started_at;
  Clock::time_point t0;
};

struct Worker {
  int device = 0;
  std::string name;  // "gpu<device>"
  std::unique_ptr<WorkerProcess> proc;
  uint64_t generation = 0;   // bumped at every spawn: events of a killed process are dropped
  WorkerStatus status = WorkerStatus::stopped;
  std::optional<size_t> group;  // group whose buffers the worker holds (or is setting up)
  std::optional<Running> running;
  Clock::time_point deadline, last_heard;
  int idle_failures = 0;  // consecutive failures outside a request (reset by an answered request)
  int external_kills = 0;  // in this run
  int kill_streak = 0;     // external kills in a row (reset by an answered request)
  Clock::time_point respawn_at;
  std::string last_failure;
  bool busy() const { return status == WorkerStatus::setting_up || status == WorkerStatus::measuring; }
};

// ---- the collector ------------------------------------------------------------------------

class Collector {
 public:
  explicit Collector(const CollectOptions& o) : o_(o), signals_(o.handle_signals) {}
  CollectSummary run();

 private:
  void validate();
  void load();
  bool start_workers();
  void begin_run();
  void start_compiles();
  void loop();
  void finish();

  // compile
  void pump_compile();
  void on_kernel_compiled(const LibraryResult& lib, const KernelCompileInfo& k);
  void record_compile(const LibraryResult& lib, const KernelCompileInfo& k);
  void mark_ready(const std::string& kernel, const std::string& lib_path, int index);
  // work
  void assign(Worker& w);
  void dispatch(Worker& w, size_t gi);
  void detach(Worker& w);
  // workers
  void spawn(Worker& w);
  void poll_workers();
  void on_readable(Worker& w);
  void on_event(Worker& w, const Event& e);
  void on_group_ready(Worker& w, const Event& e);
  void on_result(Worker& w, const Event& e);
  void check_timers();
  void fail_worker(Worker& w, const std::string& status, const std::string& reason);
  bool on_external_kill(Worker& w, int sig, const std::string& how);
  void abandon(Worker& w);
  // rows
  MeasurementRow row(const GroupState& g, const std::string& kernel, const std::string& knobs,
                     const std::string& status, const std::string& worker);
  void insert(MeasurementRow r);
  void record_failure(Worker& w, const std::string& status, const std::string& reason);
  void drop_kernel(const std::string& kernel, KernelStatus final_status, const std::string& error);
  // run control
  void update_stop();
  std::optional<size_t> next_group() const;
  bool finished() const;
  void checkpoint(bool force);
  void progress(bool force);
  size_t remaining_items() const;
  void note(const std::string& msg) const { std::fprintf(stderr, "cks collect: %s\n", msg.c_str()); }

  CollectOptions o_;
  monitor::SignalScope signals_;
  worker::fake::FaultSpec faults_;
  Plan plan_;
  std::unique_ptr<Registry> reg_;
  std::string run_uuid_;
  std::vector<GroupState> groups_;
  std::unordered_map<std::string, KernelState> kernels_;
  std::vector<Worker> workers_;
  std::unique_ptr<CompileSource> compile_;
  std::optional<worker::DeviceInfo> first_device_;
  CollectSummary summary_;
  int64_t next_measurement_id_ = 0;
  std::string stop_;  // why dispatching stopped ("time budget", "signal"); empty while running
  Clock::time_point t_start_, last_checkpoint_, last_progress_;
  double longest_checkpoint_s_ = 0;
  double measure_seconds_ = 0;  // sum over answered measurements (dispatch to result)
  size_t measured_ = 0;
  std::map<std::tuple<size_t, std::string, std::string>, int> item_kills_;  // (group, kernel, knobs) -> external kills
  size_t building_ = 0;  // kernels whose status is still `building`
};

void Collector::validate() {
  if (o_.plan_path.empty()) throw Error("no plan given (--plan)");
  if (o_.registry_path.empty()) throw Error("no registry given (--registry)");
  if (o_.backend != "cuda" && o_.backend != "fake")
    throw Error("unknown backend '" + o_.backend + "' (expected cuda or fake)");
  const bool fake = o_.backend == "fake";
  faults_ = worker::fake::FaultSpec::parse(o_.fault_spec);
  if (!fake) {
    // The real backend injects only real device faults (worker/fake.hpp, cuda_injectable).
    if (faults_.crash_p > 0 || faults_.slow_us > 0 || faults_.slow_start_us > 0 || !faults_.start_gate.empty())
      throw Error("--fault with --backend cuda: only hang, launch_error and misaligned faults (crash:p=, slow=, "
                  "slow_start= and start_gate= need --backend fake)");
    for (const auto& f : faults_.faults)
      if (!worker::fake::cuda_injectable(f.kind))
        throw Error("--fault with --backend cuda: '" + f.kernel_id + "' has a fault the GPU cannot inject (only hang, "
                    "launch_error and misaligned; the others need --backend fake)");
  }
  if (!fake && o_.fake_compile_s > 0) throw Error("--fake-compile-seconds needs --backend fake");
  if (!fake && o_.real_compile) throw Error("--real-compile needs --backend fake (the cuda backend always compiles)");
  if (o_.max_attempts < 1) throw Error("--max-attempts must be at least 1");
  if (!(o_.deadline_s > 0)) throw Error("--deadline must be positive");
  if (!(o_.heartbeat_timeout_s > 0)) throw Error("--heartbeat-timeout must be positive");
  if (o_.time_budget_s < 0) throw Error("--time-budget must not be negative");
  if (o_.cut_factor != 0 && !(o_.cut_factor >= 1)) throw Error("--cut-factor must be at least 1 (or 0: off)");
  if (o_.kernels_per_tu < 1) throw Error("--kernels-per-tu must be at least 1");
  if (!(o_.mem_per_kernel_gb > 0)) throw Error("--mem-per-kernel-gb must be positive");
  if (!(o_.checkpoint_every_s > 0)) throw Error("--checkpoint-every must be positive");
  for (int g : o_.gpus)
    if (g < 0) throw Error("--gpus: device indices must be >= 0");
  if (std::set<int>(o_.gpus.begin(), o_.gpus.end()).size() != o_.gpus.size()) throw Error("--gpus lists a device twice");
  if (o_.worker_exe.empty()) o_.worker_exe = monitor::default_worker_exe();
  if (::access(o_.worker_exe.c_str(), X_OK) != 0)
    throw Error("worker executable '" + o_.worker_exe + "' not found or not executable (pass --worker)");
  if (o_.cutlass_dir.empty()) o_.cutlass_dir = default_cutlass_dir();
  o_.cache_dir = fs::absolute(o_.cache_dir).string();  // workers dlopen() libraries by this path
}

// Plan -> registry (groups, plan items) -> per-group queues of pending items in plan order.
void Collector::load() {
  plan_ = read_plan(o_.plan_path);
  // The one writer of this registry: a second `cks collect` on it fails at once (RegistryLock).
  reg_ = std::make_unique<Registry>(o_.registry_path, RegistryOptions{.exclusive = true});
  const bool fake = o_.backend == "fake" && !o_.real_compile;  // fake compiles need no descriptor
  for (size_t gi = 0; gi < plan_.groups.size(); ++gi) {
    const PlanGroup& pg = plan_.groups[gi];
    reg_->upsert_group(pg.group);
    reg_->add_plan_items(pg.group.key, pg.candidates);
    const auto pending = reg_->pending_items(pg.group.key, o_.max_attempts);
    const std::set<CandidateRef> pending_set(pending.begin(), pending.end());
    GroupState g;
    g.info = pg.group;
    g.whole = pg.whole;
    for (size_t pos = 0; pos < pg.candidates.size(); ++pos) {
      const auto& [kernel, knobs] = pg.candidates[pos];
      if (!pending_set.count(pg.candidates[pos])) continue;
      g.queue.push_back({kernel, knobs});
      KernelState& ks = kernels_[kernel];
      // Compile order: the group's priority tier, then the position (monitor::make_batches).
      ks.rank = std::min(ks.rank, (static_cast<size_t>(pg.priority) << 32) | pos);
      ++ks.queued_in_group[gi];
      if (!fake && !ks.desc) {
        // A kernel of the group layout's catalogue, or a swapped kernel of that layout.
        const auto desc = find_kernel(pg.group.layout, kernel);
        if (!desc)
          throw Error("plan group " + pg.group.key + ": kernel " + kernel + " is not in the " +
                      std::string(to_string(pg.group.layout)) + " catalogue");
        ks.desc = *desc;
      }
    }
    summary_.items += pg.candidates.size();
    summary_.pending_at_start += g.queue.size();
    groups_.push_back(std::move(g));
  }
  summary_.groups = groups_.size();
  building_ = kernels_.size();  // every kernel starts `building`
}

std::vector<std::string> worker_argv(const CollectOptions& o, int device) {
  std::vector<std::string> argv{o.worker_exe, "--backend", o.backend, "--device", std::to_string(device),
                                "--seed", std::to_string(o.seed)};
  if (o.pool_gb > 0) argv.insert(argv.end(), {"--pool-gb", std::to_string(o.pool_gb)});
  if (!o.fault_spec.empty()) argv.insert(argv.end(), {"--fault", o.fault_spec});
  return argv;
}

void Collector::spawn(Worker& w) {
  w.proc = std::make_unique<WorkerProcess>(worker_argv(o_, w.device));
  ++w.generation;
  w.status = WorkerStatus::starting;
  w.group.reset();
  w.running.reset();
  w.deadline = after(o_.deadline_s);
  w.last_heard = Clock::now();
  Request hello;
  hello.type = RequestType::hello;
  w.proc->send(hello);  // a worker that died at once shows up as EOF
}

// Spawns one worker per GPU and waits for the first hello (its device is the run's
// provenance). False when a stop was requested meanwhile.
bool Collector::start_workers() {
  std::vector<int> gpus = o_.gpus;
  if (gpus.empty()) gpus = o_.backend == "fake" ? std::vector<int>{0} : monitor::visible_gpus();
  workers_.resize(gpus.size());
  for (size_t i = 0; i < gpus.size(); ++i) {
    workers_[i].device = gpus[i];
    workers_[i].name = "gpu" + std::to_string(gpus[i]);
    spawn(workers_[i]);
  }
  while (!first_device_) {
    update_stop();
    if (!stop_.empty()) return false;
    if (std::all_of(workers_.begin(), workers_.end(), [](const Worker& w) { return w.status == WorkerStatus::stopped; }))
      throw Error("no worker could be started (last: " + workers_.front().last_failure + "; see messages above)");
    poll_workers();
    check_timers();
  }
  return true;
}

void Collector::begin_run() {
  RunInfo info;
  info.kind = "collect";
  info.gpu_name = first_device_->gpu_name;
  info.gpu_uuid = first_device_->gpu_uuid;
  info.driver_version = first_device_->driver_version;
  info.cuda_version = first_device_->cuda_runtime_version;
  info.cublas_version = first_device_->cublas_version;
  info.cutlass_version = monitor::cutlass_version(o_.cutlass_dir);
  info.git_sha = monitor::git_sha();
  info.host = monitor::host_name();
  info.command = o_.command;
  info.started_at = utc_now();
  nlohmann::ordered_json extra{{"backend", o_.backend},
                               {"plan", o_.plan_path},
                               {"plan_name", plan_.name},
                               {"deadline_s", o_.deadline_s},
                               {"heartbeat_timeout_s", o_.heartbeat_timeout_s},
                               {"max_attempts", o_.max_attempts},
                               {"cut_factor", o_.cut_factor},
                               {"time_budget_s", o_.time_budget_s}};
  nlohmann::json devices = nlohmann::json::array();
  for (const auto& w : workers_) devices.push_back(w.device);
  extra["gpus"] = devices;
  if (!o_.fault_spec.empty()) extra["fault_spec"] = o_.fault_spec;
  info.extra_json = extra.dump();
  run_uuid_ = reg_->begin_run(info);
  summary_.run_uuid = run_uuid_;
}

// Kernels whose library is already in the cache are ready at once; a kernel the registry
// knows as a compile error is not retried (its pending items get compile_error rows); the
// rest is compiled in batches, most promising first. The nvcc pool is only started when
// something needs compiling (a fully cached plan runs where no nvcc is installed).
void Collector::start_compiles() {
  const bool fake = o_.backend == "fake" && !o_.real_compile;
  std::vector<KernelToBuild> to_build;
  std::vector<size_t> rank;
  std::vector<std::string> ids;
  for (const auto& [id, ks] : kernels_) ids.push_back(id);
  std::sort(ids.begin(), ids.end());
  for (const auto& id : ids) {
    const KernelState& ks = kernels_.at(id);
    if (!fake) {
      if (const auto known = reg_->kernel(id)) {
        const fs::path lib = fs::path(o_.cache_dir) / ("cks_" + known->lib_hash + ".so");
        if (known->status == "ok" && !known->lib_hash.empty() && fs::exists(lib)) {
          mark_ready(id, lib.string(), known->index);
          continue;
        }
        if (known->status == "compile_error") {
          drop_kernel(id, KernelStatus::compile_error, known->error);
          continue;
        }
      }
    }
    to_build.push_back({id, ks.desc});
    rank.push_back(ks.rank);
  }
  if (to_build.empty()) return;
  if (fake) {
    compile_ = monitor::make_fake_source(faults_, o_.fake_compile_s);
  } else {
    CompileOptions co;
    co.cutlass_dir = o_.cutlass_dir;
    co.cache_dir = o_.cache_dir;
    co.nvcc = o_.nvcc;
    co.jobs = o_.jobs;
    co.kernels_per_tu = o_.kernels_per_tu;
    co.mem_limit_gb = o_.mem_limit_gb;
    co.mem_per_job_gb = o_.mem_per_kernel_gb;
    co.cuda_version = nvcc_version(o_.nvcc);
    compile_ = monitor::make_nvcc_source(co);
  }
  // Kernels a cached library holds (a carried cache groups them into other TUs) are served
  // first, so only the rest is cut into full translation units.
  const std::vector<bool> served = compile_->take_cached(to_build);
  std::vector<KernelToBuild> rest;
  std::vector<size_t> rest_rank;
  for (size_t i = 0; i < to_build.size(); ++i)
    if (!served[i]) {
      rest.push_back(std::move(to_build[i]));
      rest_rank.push_back(rank[i]);
    }
  for (auto& batch : monitor::make_batches(rest, rest_rank, static_cast<size_t>(o_.kernels_per_tu), compile_->jobs()))
    compile_->submit(std::move(batch));
}

void Collector::mark_ready(const std::string& kernel, const std::string& lib_path, int index) {
  KernelState& ks = kernels_.at(kernel);
  if (ks.status == KernelStatus::building) --building_;
  ks.status = KernelStatus::ready;
  ks.lib_path = lib_path;
  ks.index = index;
  for (const auto& [gi, n] : ks.queued_in_group) {
    groups_[gi].ready += n;
    if (n > 0) groups_[gi].not_ready = 0;
  }
}

void Collector::pump_compile() {
  if (!compile_) return;
  while (auto lib = compile_->poll())
    for (const auto& k : lib->kernels) on_kernel_compiled(*lib, k);
  // Defensive: a kernel the compiler never reported would otherwise wait forever. Checked by a
  // count: scanning every kernel on each turn of the loop made a run quadratic in its items.
  if (compile_->pending() > 0 || building_ == 0) return;
  for (auto& [id, ks] : kernels_) {
    ++summary_.scan_steps;
    if (ks.status == KernelStatus::building) {
      ++summary_.compile_errors;
      drop_kernel(id, KernelStatus::compile_error, "the compile pool returned no result for this kernel");
    }
  }
}

void Collector::on_kernel_compiled(const LibraryResult& lib, const KernelCompileInfo& k) {
  auto it = kernels_.find(k.kernel_id);
  if (it == kernels_.end() || it->second.status != KernelStatus::building) return;
  // The fake compiler builds no library: the registry's kernels table is for real compiles.
  if (o_.backend != "fake" || o_.real_compile) record_compile(lib, k);
  if (k.status == "ok") {
    ++summary_.kernels_compiled;
    mark_ready(k.kernel_id, lib.lib_path, k.index);
  } else {
    ++summary_.compile_errors;
    drop_kernel(k.kernel_id, KernelStatus::compile_error, k.error);
  }
}

void Collector::record_compile(const LibraryResult& lib, const KernelCompileInfo& k) {
  KernelCompileRow row;
  row.kernel_id = k.kernel_id;
  row.canonical = k.canonical;
  row.status = k.status;
  row.error = k.error;
  row.lib_hash = k.status == "ok" ? lib.lib_hash : "";
  row.index = k.index;
  row.registers = k.registers;
  row.spill_store_bytes = k.spill_store_bytes;
  row.spill_load_bytes = k.spill_load_bytes;
  row.smem_bytes = k.smem_bytes;
  row.compile_seconds = k.compile_seconds;
  row.host = monitor::host_name();
  row.nvcc_version = compile_->compiler_version();
  row.flags = compile_->flags();
  reg_->upsert_kernel(row);
}

MeasurementRow Collector::row(const GroupState& g, const std::string& kernel, const std::string& knobs,
                              const std::string& status, const std::string& worker) {
  MeasurementRow r;
  r.run_uuid = run_uuid_;
  r.group_key = g.info.key;
  r.kernel_id = kernel;
  r.knobs = knobs;
  r.status = status;
  r.started_at = r.finished_at = utc_now();
  r.worker = worker;
  return r;
}

void Collector::insert(MeasurementRow r) {
  if (r.kernel_id == "cublas") ++summary_.cublas_rows;
  else ++summary_.rows[r.status];
  reg_->insert_measurement(std::move(r));
}

// Gives a kernel its final status (compile_error or quarantined): every queued item of it, in
// every group, gets a row with that status and leaves the queue.
void Collector::drop_kernel(const std::string& kernel, KernelStatus final_status, const std::string& error) {
  const std::string status = final_status == KernelStatus::quarantined ? "quarantined" : "compile_error";
  KernelState& ks = kernels_.at(kernel);
  const bool was_ready = ks.status == KernelStatus::ready;
  if (ks.status == KernelStatus::building) --building_;
  ks.status = final_status;
  ks.final_error = error;
  std::vector<MeasurementRow> rows;
  for (auto& [gi, n] : ks.queued_in_group) {
    GroupState& g = groups_[gi];
    auto keep = std::stable_partition(g.queue.begin(), g.queue.end(), [&](const Item& it) { return it.kernel != kernel; });
    for (auto it = keep; it != g.queue.end(); ++it) {
      MeasurementRow r = row(g, kernel, it->knobs, status, "");
      r.error = error;
      r.attempt = reg_->attempts(g.info.key, kernel, it->knobs) + 1;
      ++summary_.rows[status];
      rows.push_back(std::move(r));
    }
    summary_.scan_steps += g.queue.size();
    g.queue.erase(keep, g.queue.end());
    g.not_ready = 0;
    if (was_ready) g.ready -= n;
    n = 0;
  }
  reg_->insert_measurements(std::move(rows));
}

void Collector::detach(Worker& w) {
  if (w.group) --groups_[*w.group].workers_on;
  w.group.reset();
}

// The group an idle worker should set up next. Groups are completed roughly in plan order:
// among the first max(8, 4 x workers) unfinished groups, the one with the most ready items (a group
// set-up costs a cuBLAS reference and baseline, so it should pay off over many measurements),
// preferring one no other worker is on. While compilation lags and none of those has a set-up's
// worth of ready items (kSetupItems, or all it has left), the GPU keeps busy on the first later
// group (plan order) that has, else on a window group with fewer, else on the later group with
// the most. Plan order matters there: lease 3 took "most ready" and starved 15 exhaustive
// evaluation groups (2,000 items each) for training groups of 3,000. And so does a set-up's
// worth: lease 15 set up one window group after another for the single item each had ready
// (a TU at a time finished) while 1,700 cached fill groups waited, and the GPU measured ~150
// rows in a minute.
std::optional<size_t> Collector::next_group() const {
  const size_t window = std::max<size_t>(8, 4 * workers_.size());
  const auto better = [&](size_t a, std::optional<size_t> b) {
    if (!b) return true;
    const GroupState &ga = groups_[a], &gb = groups_[*b];
    if ((ga.workers_on == 0) != (gb.workers_on == 0)) return ga.workers_on == 0;
    return ga.ready > gb.ready;  // ties: the earlier group (scanned first)
  };
  std::optional<size_t> best;          // in the window, a set-up's worth ready: the most, free groups first
  std::optional<size_t> weak;          // in the window, fewer ready: the most, free groups first
  std::optional<size_t> first_enough;  // beyond it: the first busy group with a set-up's worth ready
  std::optional<size_t> most;          // beyond it: the most ready items
  size_t unfinished = 0;
  for (size_t gi = 0; gi < groups_.size(); ++gi) {
    const GroupState& g = groups_[gi];
    if (g.abandoned || g.queue.empty()) continue;
    const bool in_window = unfinished++ < window;
    if (!in_window && best) return best;
    if (!g.startable()) continue;
    const bool enough = g.ready >= std::min(kSetupItems, g.queue.size());
    if (in_window) {
      auto& slot = enough ? best : weak;
      if (better(gi, slot)) slot = gi;
      continue;
    }
    if (enough) {
      if (g.workers_on == 0) return gi;
      if (!first_enough) first_enough = gi;
    }
    if (better(gi, most)) most = gi;
  }
  if (best) return best;
  if (first_enough) return first_enough;
  return weak ? weak : most;
}

// An idle worker measures the next ready item of its group, or sets up another group
// (next_group()).
void Collector::assign(Worker& w) {
  if (w.status != WorkerStatus::idle) return;
  if (w.group && groups_[*w.group].ready > 0) {
    dispatch(w, *w.group);
    return;
  }
  const auto best = next_group();
  if (!best) return;
  detach(w);
  GroupState& g = groups_[*best];
  Request req;
  req.type = RequestType::group;
  req.group.group_id = static_cast<int64_t>(*best);
  req.group.m = static_cast<int>(g.info.m);
  req.group.n = static_cast<int>(g.info.n);
  req.group.k = static_cast<int>(g.info.k);
  req.group.layout = g.info.layout;
  req.group.seed = g.info.seed;
  w.group = *best;
  ++g.workers_on;
  w.status = WorkerStatus::setting_up;
  w.deadline = after(o_.deadline_s);
  if (!w.proc->send(req)) fail_worker(w, "crash", "worker pipe closed");
}

void Collector::dispatch(Worker& w, size_t gi) {
  GroupState& g = groups_[gi];
  auto it = g.queue.begin() + static_cast<std::ptrdiff_t>(std::min(g.not_ready, g.queue.size()));
  for (; it != g.queue.end() && kernels_.at(it->kernel).status != KernelStatus::ready; ++it) ++summary_.scan_steps;
  ++summary_.scan_steps;
  if (it == g.queue.end()) throw std::logic_error("monitor: group " + g.info.key + " counts a ready item it lacks");
  g.not_ready = static_cast<size_t>(it - g.queue.begin());  // erasing `it` keeps the prefix before it
  Running run;
  run.group = gi;
  run.item = *it;
  g.queue.erase(it);
  --g.ready;
  ++g.in_flight;
  KernelState& ks = kernels_.at(run.item.kernel);
  --ks.queued_in_group[gi];
  run.attempt = reg_->attempts(g.info.key, run.item.kernel, run.item.knobs) + 1;
  run.id = ++next_measurement_id_;
  run.started_at = utc_now();
  run.t0 = Clock::now();

  Request req;
  req.type = RequestType::measure;
  worker::MeasureSpec& m = req.measure;
  m.measurement_id = run.id;
  m.lib_path = ks.lib_path;
  m.index = ks.index;
  m.kernel_id = run.item.kernel;
  m.knobs = RuntimeKnobs::from_canonical(run.item.knobs);
  m.check = !g.checked.count(run.item.kernel);  // first answered measurement of the kernel here
  // Cut-off: cut_factor x the best known time in the group (cuBLAS or a candidate so far).
  if (o_.cut_factor > 0) {
    const double best = std::min(g.cublas_us, g.best_us);
    if (std::isfinite(best)) m.cutoff_us = o_.cut_factor * best;
  }
  w.running = std::move(run);
  w.status = WorkerStatus::measuring;
  w.deadline = after(o_.deadline_s);
  if (!w.proc->send(req)) fail_worker(w, "crash", "worker pipe closed");
}

void Collector::poll_workers() {
  std::vector<pollfd> fds;
  std::vector<Worker*> owners;
  for (auto& w : workers_)
    if (w.proc && w.proc->event_fd() >= 0) {
      fds.push_back({w.proc->event_fd(), POLLIN, 0});
      owners.push_back(&w);
    }
  if (fds.empty()) {
    ::usleep(kPollMs * 1000);
    return;
  }
  if (::poll(fds.data(), fds.size(), kPollMs) <= 0) return;  // timeout or EINTR (a stop signal)
  for (size_t i = 0; i < fds.size(); ++i)
    if (fds[i].revents & (POLLIN | POLLHUP | POLLERR)) on_readable(*owners[i]);
}

void Collector::on_readable(Worker& w) {
  std::vector<Event> events;
  std::string protocol_error;
  auto read = WorkerProcess::Read::open;
  try {
    read = w.proc->read_events(events);
  } catch (const Error& e) {
    protocol_error = e.what();
  }
  if (!events.empty()) w.last_heard = Clock::now();
  const uint64_t generation = w.generation;
  for (const auto& e : events) {
    on_event(w, e);
    if (w.generation != generation || w.status == WorkerStatus::stopped) return;  // it was replaced
  }
  if (!protocol_error.empty()) {
    fail_worker(w, "crash", "protocol error: " + protocol_error);
  } else if (read == WorkerProcess::Read::closed) {
    const std::string how = "worker " + w.proc->reap();
    if (!on_external_kill(w, w.proc->term_signal(), how)) fail_worker(w, "crash", how);
  }
}

void Collector::on_event(Worker& w, const Event& e) {
  switch (e.type) {
    case EventType::hello:
      if (w.status != WorkerStatus::starting) return;
      if (!first_device_) first_device_ = e.info;
      w.status = WorkerStatus::idle;
      w.kill_streak = 0;
      return;
    case EventType::group_ready: on_group_ready(w, e); return;
    case EventType::result: on_result(w, e); return;
    case EventType::log: std::fprintf(stderr, "[%s] %s\n", w.name.c_str(), e.message.c_str()); return;
    case EventType::start:
    case EventType::hb: return;  // liveness only (last_heard)
  }
}

void Collector::on_group_ready(Worker& w, const Event& e) {
  if (w.status != WorkerStatus::setting_up || !w.group || static_cast<int64_t>(*w.group) != e.group_id) return;
  GroupState& g = groups_[*w.group];
  const worker::GroupResult& r = e.group;
  w.status = WorkerStatus::idle;
  if (r.status == "ok") {
    w.idle_failures = 0;
    w.kill_streak = 0;
    if (g.cublas_recorded) return;
    MeasurementRow c = row(g, "cublas", "", "ok", w.name);
    set_timing(c, r.cublas, g.info);
    insert(std::move(c));
    g.cublas_recorded = true;
    g.cublas_us = r.cublas.mean_us;
    return;
  }
  // A failed set-up may leave the device context unusable: record it, restart the worker.
  fail_worker(w, r.status, "group set-up failed: " + r.error);
}

void Collector::on_result(Worker& w, const Event& e) {
  if (w.status != WorkerStatus::measuring || !w.running || w.running->id != e.id) return;
  const Running run = *w.running;
  GroupState& g = groups_[run.group];
  const worker::MeasureResult& res = e.result;
  w.idle_failures = 0;
  w.kill_streak = 0;
  MeasurementRow r = row(g, run.item.kernel, run.item.knobs, res.status, w.name);
  r.started_at = run.started_at;
  r.attempt = run.attempt;
  r.error = res.error;
  r.max_rel_err = std::isfinite(res.max_rel_err) ? res.max_rel_err : -1;
  if (res.status == "ok" || res.status == "cut") set_timing(r, res.timing, g.info);
  if (!is_valid_status(res.status)) {  // a worker bug must not poison the registry
    r.status = "launch_error";
    r.error = "worker reported unknown status '" + res.status + "': " + res.error;
  }
  insert(std::move(r));
  measure_seconds_ += seconds_since(run.t0);
  ++measured_;
  --g.in_flight;
  g.checked.insert(run.item.kernel);
  if (res.status == "ok") g.best_us = std::min(g.best_us, res.timing.mean_us);
  w.running.reset();
  KernelState& ks = kernels_.at(run.item.kernel);
  if (res.status == "ok") ++ks.ok_results;
  if (res.fatal) {
    // Sticky error: the worker exits by itself; respawn it then, charging nothing more. A
    // kernel that only ever poisons the context (e.g. a misaligned-address fault on every
    // shape) is quarantined: each further try would cost a worker restart.
    ++ks.fatal_results;
    if (ks.ok_results == 0 && ks.fatal_results >= kMaxFatalWithoutOk && ks.status != KernelStatus::quarantined) {
      note(w.name + ": " + run.item.kernel + " left the CUDA context unusable " + std::to_string(ks.fatal_results) +
           " times and never ran: kernel quarantined");
      ++summary_.kernels_quarantined;
      drop_kernel(run.item.kernel, KernelStatus::quarantined,
                  "kernel quarantined: " + std::to_string(ks.fatal_results) +
                      " fatal launch errors and no successful run (last: " + res.error + ")");
    }
    w.status = WorkerStatus::exiting;
    w.deadline = after(o_.deadline_s);
    return;
  }
  w.status = WorkerStatus::idle;
}

void Collector::check_timers() {
  const auto now = Clock::now();
  for (auto& w : workers_) {
    if (w.status == WorkerStatus::backoff) {
      if (!stop_.empty()) w.status = WorkerStatus::stopped;
      else if (now >= w.respawn_at) {
        spawn(w);
        ++summary_.respawns;
      }
      continue;
    }
    if (!w.proc || w.status == WorkerStatus::stopped) continue;
    const bool waiting = w.status != WorkerStatus::idle;
    if (waiting && now > w.deadline)
      fail_worker(w, "timeout", "no answer within the " + fmt_s(o_.deadline_s) + " deadline");
    else if (seconds_since(w.last_heard) > o_.heartbeat_timeout_s)
      fail_worker(w, "timeout", "heartbeat silent for " + fmt_s(o_.heartbeat_timeout_s));
  }
}

// Charges the failure to what the worker was running, kills it and (unless stopping, or the
// GPU keeps failing to start) respawns it.
void Collector::fail_worker(Worker& w, const std::string& status, const std::string& reason) {
  w.last_failure = reason;
  switch (w.status) {
    case WorkerStatus::measuring: record_failure(w, status, reason); break;
    case WorkerStatus::setting_up: {
      GroupState& g = groups_[*w.group];
      MeasurementRow c = row(g, "cublas", "", status, w.name);
      c.error = reason;
      c.attempt = ++g.setup_failures;
      insert(std::move(c));
      if (g.setup_failures >= o_.max_attempts) {
        g.abandoned = true;
        note("group " + g.info.key + " skipped for this run: set-up failed " + std::to_string(g.setup_failures) +
             " times (last: " + reason + ")");
      }
      break;
    }
    case WorkerStatus::starting:
      ++w.idle_failures;
      note(w.name + ": worker failed to start: " + reason);
      break;
    case WorkerStatus::idle:
      ++w.idle_failures;
      note(w.name + ": idle worker lost: " + reason);
      break;
    case WorkerStatus::exiting:
    case WorkerStatus::backoff:
    case WorkerStatus::stopped: break;
  }
  w.proc->kill();
  w.running.reset();
  detach(w);
  if (!stop_.empty() || w.idle_failures >= kMaxIdleFailures) {
    if (w.idle_failures >= kMaxIdleFailures)
      note(w.name + ": giving up on this GPU: its worker failed " + std::to_string(w.idle_failures) +
           " times in a row outside any measurement");
    w.status = WorkerStatus::stopped;
    return;
  }
  spawn(w);
  ++summary_.respawns;
}

// A worker that died of `sig` (0: not a signal) was killed from outside when the signal is one a
// crashing kernel does not raise. Then nothing is charged (a measurement it was running goes
// back to the front of its queue, a group set-up is redone), the GPU's failure count is left
// alone, and the worker is respawned after a back-off. False when the death is the worker's own
// (a crash: fail_worker charges it), or when this candidate was killed too often to keep
// excusing it.
bool Collector::on_external_kill(Worker& w, int sig, const std::string& how) {
  if (sig != SIGKILL && sig != SIGTERM && sig != SIGINT && sig != SIGHUP) return false;
  if (w.status == WorkerStatus::measuring) {
    const Running& run = *w.running;
    if (++item_kills_[{run.group, run.item.kernel, run.item.knobs}] > kMaxExternalKillsPerItem) return false;
    GroupState& g = groups_[run.group];
    KernelState& ks = kernels_.at(run.item.kernel);
    --g.in_flight;
    ++ks.queued_in_group[run.group];
    if (ks.status == KernelStatus::quarantined) {  // by another worker meanwhile: ends like its siblings
      g.queue.push_back(run.item);
      drop_kernel(run.item.kernel, KernelStatus::quarantined, ks.final_error);
    } else {
      g.queue.push_front(run.item);
      g.not_ready = 0;
      ++g.ready;
    }
  }
  w.last_failure = how;
  ++w.external_kills;
  ++w.kill_streak;
  w.proc->kill();
  w.running.reset();
  detach(w);
  if (!stop_.empty()) {
    w.status = WorkerStatus::stopped;
    return true;
  }
  if (w.external_kills > kMaxExternalKills) {
    note(w.name + ": " + how + "; giving up on this GPU: its worker was killed " + std::to_string(w.external_kills) +
         " times in this run");
    w.status = WorkerStatus::stopped;
    return true;
  }
  const double delay = std::min(kKillBackoffMaxS, kKillBackoffS * std::pow(2.0, std::min(w.kill_streak - 1, 20)));
  note(w.name + ": " + how + " (killed from outside: nothing charged); respawning in " + fmt_s(delay));
  w.status = WorkerStatus::backoff;
  w.respawn_at = after(delay);
  return true;
}

void Collector::record_failure(Worker& w, const std::string& status, const std::string& reason) {
  const Running& run = *w.running;
  GroupState& g = groups_[run.group];
  MeasurementRow r = row(g, run.item.kernel, run.item.knobs, status, w.name);
  r.started_at = run.started_at;
  r.attempt = run.attempt;
  r.error = reason;
  insert(std::move(r));
  --g.in_flight;
  KernelState& ks = kernels_.at(run.item.kernel);
  const std::string what = run.item.kernel + " " + run.item.knobs + " in " + g.info.key;
  const std::string failure = w.name + ": " + status + " of " + what + " (" + reason + "), attempt " +
                              std::to_string(run.attempt) + "/" + std::to_string(o_.max_attempts);
  if (run.attempt >= o_.max_attempts) {  // this row is final
    if (ks.status == KernelStatus::quarantined) return;
    note(failure + ": kernel quarantined; restarting the worker");
    ++summary_.kernels_quarantined;
    drop_kernel(run.item.kernel, KernelStatus::quarantined,
                "kernel quarantined: " + std::to_string(run.attempt) + " failed attempts on " + what + " (last: " +
                    status + ", " + reason + ")");
    return;
  }
  if (ks.status == KernelStatus::quarantined) {
    // Another worker's failures quarantined the kernel while this candidate ran: it ends
    // quarantined like the kernel's other pending candidates.
    note(failure + ": its kernel is quarantined meanwhile; restarting the worker");
    g.queue.push_back(run.item);
    ++ks.queued_in_group[run.group];
    drop_kernel(run.item.kernel, KernelStatus::quarantined, ks.final_error);
    return;
  }
  note(failure + ": will retry; restarting the worker");
  // Retried next: a deterministic failure is confirmed (and its kernel quarantined) before
  // the kernel's other candidates spend attempts on it.
  g.queue.push_front(run.item);
  g.not_ready = 0;
  ++g.ready;
  ++ks.queued_in_group[run.group];
}

// Stop without recording: the running measurement stays pending for the next run.
void Collector::abandon(Worker& w) {
  if (w.running) --groups_[w.running->group].in_flight;
  w.running.reset();
  if (w.proc) w.proc->kill();
  detach(w);
  w.status = WorkerStatus::stopped;
}

// Time budget: dispatching stops when what is left would not cover a typical measurement
// (twice the mean so far, 1 s before any) plus the final reserve; running work is abandoned
// at the final reserve, which covers ending the run and the last checkpoint (1 s plus twice
// the longest checkpoint so far). A second signal abandons at once.
void Collector::update_stop() {
  const int sigs = signals_.count();
  const double elapsed = seconds_since(t_start_);
  const double final_reserve = 1.0 + 2.0 * longest_checkpoint_s_;
  const double measure_reserve = 2.0 * (measured_ > 0 ? measure_seconds_ / static_cast<double>(measured_) : 0.5);
  const bool budget = o_.time_budget_s > 0;
  if (stop_.empty() && sigs > 0) stop_ = "signal";
  if (stop_.empty() && budget && elapsed >= o_.time_budget_s - final_reserve - measure_reserve) stop_ = "time budget";
  if (stop_.empty()) return;
  if (sigs > 1 || (budget && elapsed >= o_.time_budget_s - final_reserve))
    for (auto& w : workers_)
      if (w.busy()) abandon(w);
}

bool Collector::finished() const {
  if (!stop_.empty())
    return std::none_of(workers_.begin(), workers_.end(), [](const Worker& w) { return w.busy(); });
  if (std::all_of(workers_.begin(), workers_.end(), [](const Worker& w) { return w.status == WorkerStatus::stopped; }))
    return true;
  return std::all_of(groups_.begin(), groups_.end(), [](const GroupState& g) { return g.done() || g.abandoned; });
}

void Collector::checkpoint(bool force) {
  if (o_.checkpoint_path.empty()) return;
  if (!force && seconds_since(last_checkpoint_) < o_.checkpoint_every_s) return;
  const auto t0 = Clock::now();
  reg_->checkpoint(o_.checkpoint_path);
  longest_checkpoint_s_ = std::max(longest_checkpoint_s_, seconds_since(t0));
  last_checkpoint_ = Clock::now();
}

void Collector::progress(bool force) {
  if (o_.progress_every_s <= 0 || (!force && seconds_since(last_progress_) < o_.progress_every_s)) return;
  last_progress_ = Clock::now();
  size_t done = 0, ok = summary_.rows["ok"], failed = 0, live = 0;
  for (const auto& g : groups_) done += g.done();
  for (const auto& [status, n] : summary_.rows)
    if (status != "ok") failed += n;
  for (const auto& w : workers_) live += w.status != WorkerStatus::stopped;
  const double minutes = seconds_since(t_start_) / 60.0;
  std::fprintf(stderr,
               "cks collect: %.1f min | groups %zu/%zu done | rows ok %zu, other %zu | %.0f/min | compile queue %zu | "
               "workers %zu/%zu | respawns %zu\n",
               minutes, done, groups_.size(), ok, failed,
               minutes > 0 ? static_cast<double>(measured_) / minutes : 0.0, compile_ ? compile_->pending() : 0, live,
               workers_.size(), summary_.respawns);
}

size_t Collector::remaining_items() const {
  size_t n = 0;
  for (const auto& pg : plan_.groups) {
    const auto pending = reg_->pending_items(pg.group.key, o_.max_attempts);
    const std::set<CandidateRef> planned(pg.candidates.begin(), pg.candidates.end());
    n += std::count_if(pending.begin(), pending.end(), [&](const CandidateRef& c) { return planned.count(c) > 0; });
  }
  return n;
}

void Collector::loop() {
  while (true) {
    pump_compile();
    update_stop();
    if (stop_.empty())
      for (auto& w : workers_) assign(w);
    if (finished()) return;
    poll_workers();
    check_timers();
    checkpoint(false);
    progress(false);
  }
}

// Quit the workers (killed if they linger), record what the compiler finished, end the run,
// checkpoint.
void Collector::finish() {
  Request quit;
  quit.type = RequestType::quit;
  for (auto& w : workers_)
    if (w.proc && w.status != WorkerStatus::stopped) w.proc->send(quit);
  const auto give_up = after(kQuitGraceS);
  for (auto& w : workers_) {
    while (w.proc && w.proc->event_fd() >= 0 && Clock::now() < give_up) {
      std::vector<Event> ignored;
      pollfd p{w.proc->event_fd(), POLLIN, 0};
      try {
        if (::poll(&p, 1, kPollMs) > 0 && w.proc->read_events(ignored) == WorkerProcess::Read::closed) break;
      } catch (const Error&) {
        break;  // garbage on the way out: it is killed below anyway
      }
    }
    if (w.proc) w.proc->kill();
  }
  if (compile_) {
    while (auto lib = compile_->poll())
      for (const auto& k : lib->kernels) on_kernel_compiled(*lib, k);
    compile_.reset();  // stops nvcc still running
  }
  reg_->end_run(run_uuid_);
  summary_.stop_reason = stop_;
  summary_.remaining = remaining_items();
  summary_.groups_done = std::count_if(groups_.begin(), groups_.end(), [](const GroupState& g) { return g.done(); });
  checkpoint(true);
  progress(true);
}

CollectSummary Collector::run() {
  t_start_ = last_checkpoint_ = last_progress_ = Clock::now();
  validate();
  load();
  bool lost_all = false;
  if (summary_.pending_at_start == 0) {
    note("nothing to do: every plan item already has a final row");
    summary_.groups_done = groups_.size();
    checkpoint(true);
  } else if (!start_workers()) {  // stopped before any worker said hello: no run to record
    for (auto& w : workers_) abandon(w);
    summary_.stop_reason = stop_;
    summary_.remaining = summary_.pending_at_start;
    checkpoint(true);
  } else {
    begin_run();
    start_compiles();
    loop();
    lost_all = stop_.empty() && std::all_of(workers_.begin(), workers_.end(),
                                            [](const Worker& w) { return w.status == WorkerStatus::stopped; });
    finish();
  }
  summary_.seconds = seconds_since(t_start_);
  if (lost_all && !summary_.complete())
    throw Error("every GPU was given up (last worker failure: " + workers_.front().last_failure +
                "); the registry is consistent, re-run to resume");
  return summary_;
}

}  // namespace

CollectSummary collect(const CollectOptions& options) { return Collector(options).run(); }

std::string format_summary(const CollectSummary& s) {
  std::string out;
  char buf[512];
  std::snprintf(buf, sizeof buf, "run %s: %.1f s, groups %zu/%zu done, items %zu (%zu pending at start, %zu remaining)\n",
                s.run_uuid.empty() ? "(none)" : s.run_uuid.c_str(), s.seconds, s.groups_done, s.groups, s.items,
                s.pending_at_start, s.remaining);
  out += buf;
  std::string rows;
  for (const auto& [status, n] : s.rows) rows += (rows.empty() ? "" : ", ") + status + " " + std::to_string(n);
  out += "rows: " + (rows.empty() ? std::string("none") : rows) + " (cublas " + std::to_string(s.cublas_rows) + ")\n";
  std::snprintf(buf, sizeof buf, "kernels compiled %zu, compile errors %zu, quarantined %zu; worker respawns %zu\n",
                s.kernels_compiled, s.compile_errors, s.kernels_quarantined, s.respawns);
  out += buf;
  if (!s.stop_reason.empty())
    out += "stopped early (" + s.stop_reason + "): re-run the same command to resume\n";
  else if (!s.complete())
    out += "incomplete: " + std::to_string(s.remaining) + " items left (skipped groups or exhausted attempts); re-run to retry\n";
  return out;
}

}  // namespace cks
