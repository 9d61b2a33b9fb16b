// cks-worker — one persistent process per GPU, driven by the monitor over pipes
// (protocol in worker/protocol.hpp). Stdout carries protocol lines only; logs go to stderr.
//
//   cks-worker --backend cuda|fake --device N [--pool-gb G] [--fault SPEC] [--seed S]
//   cks-worker --profile ITEMS.tsv --profile-out RESULTS.tsv --device N [--pool-gb G]
//
// The second form serves no monitor: it measures each listed candidate (the paper's protocol,
// checked against cuBLAS) and then launches it once more inside a cudaProfilerStart/Stop range,
// for `ncu --profile-from-start off` (the counter study, scripts/device/profile.sh). ITEMS.tsv
// has one candidate a line: tag m n k layout seed lib_path lib_index kernel_id knobs; the i-th
// profiled kernel in ncu's report is the i-th RESULTS.tsv row with profiled = 1.
//
// The main thread serves requests one at a time; a second thread sends a heartbeat every
// 0.5 s carrying the id of the measurement in progress, so the monitor can tell a slow
// kernel (heartbeats continue) from a wedged process (heartbeats stop). A fatal result
// (sticky CUDA error) is reported and then the worker exits: its context is unusable.
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "cks/common.hpp"
#include "worker/backend.hpp"
#include "worker/protocol.hpp"

namespace {

using namespace cks::worker;

constexpr auto kHeartbeatPeriod = std::chrono::milliseconds(500);
// Exit codes the monitor can tell apart (it attributes failures by protocol state, not code).
constexpr int kExitUsage = 2;
constexpr int kExitFatal = 3;

struct Args {
  std::string backend = "cuda";
  int device = 0;
  double pool_gb = 0;  // 0 => the backend's default
  std::string fault;
  uint64_t seed = 0;
  std::string profile, profile_out;
};

[[noreturn]] void usage(const std::string& why) {
  std::fprintf(stderr,
               "cks-worker: error: %s\n"
               "usage: cks-worker --backend cuda|fake --device N [--pool-gb G] [--fault SPEC] [--seed S]\n"
              "       cks-worker --profile ITEMS.tsv --profile-out RESULTS.tsv --device N [--pool-gb G]\n",
               why.c_str());
  std::exit(kExitUsage);
}

Args parse_args(int argc, char** argv) {
  Args a;
  for (int i = 1; i < argc; ++i) {
    const std::string opt = argv[i];
    if (i + 1 >= argc) usage("option " + opt + " needs a value");
    const std::string val = argv[++i];
    try {
      if (opt == "--backend") a.backend = val;
      else if (opt == "--device") a.device = std::stoi(val);
      else if (opt == "--pool-gb") a.pool_gb = std::stod(val);
      else if (opt == "--fault") a.fault = val;
      else if (opt == "--seed") a.seed = std::stoull(val);
      else if (opt == "--profile") a.profile = val;
      else if (opt == "--profile-out") a.profile_out = val;
      else usage("unknown option " + opt);
    } catch (const std::logic_error&) {
      usage("bad value '" + val + "' for " + opt);
    }
  }
  if (a.backend != "cuda" && a.backend != "fake") usage("unknown backend '" + a.backend + "' (expected cuda or fake)");
  if (a.device < 0) usage("--device must be >= 0");
  if (a.profile.empty() != a.profile_out.empty()) usage("--profile and --profile-out go together");
  return a;
}

std::unique_ptr<Backend> make_backend(const Args& a) {
  if (a.backend == "fake") return make_fake_backend(a.fault, a.seed);
#ifdef CKS_HAVE_CUDA
  return make_cuda_backend(a.device, a.pool_gb, a.fault);
#else
  throw cks::Error("this cks-worker was built without CUDA; only --backend fake is available");
#endif
}

// Serialises whole-line writes to stdout from the main and heartbeat threads.
class Channel {
 public:
  void send(const Event& e) {
    const std::string line = encode(e);
    std::lock_guard lock(mu_);
    if (!write_line(STDOUT_FILENO, line)) std::_Exit(0);  // the monitor is gone
  }

 private:
  std::mutex mu_;
};

class Heartbeat {
 public:
  explicit Heartbeat(Channel& ch) : ch_(ch), thread_([this] { loop(); }) {}
  ~Heartbeat() {
    {
      std::lock_guard lock(mu_);
      stop_ = true;
    }
    cv_.notify_all();
    thread_.join();
  }
  void set_current(int64_t id) { current_ = id; }

 private:
  void loop() {
    std::unique_lock lock(mu_);
    while (!cv_.wait_for(lock, kHeartbeatPeriod, [this] { return stop_; })) {
      Event hb;
      hb.type = EventType::hb;
      hb.id = current_;
      ch_.send(hb);
    }
  }
  Channel& ch_;
  std::atomic<int64_t> current_{0};
  std::mutex mu_;
  std::condition_variable cv_;
  bool stop_ = false;
  std::thread thread_;
};

void log_event(Channel& ch, const std::string& msg) {
  Event e;
  e.type = EventType::log;
  e.message = msg;
  ch.send(e);
}

int serve(const Args& args) {
  Channel ch;
  Heartbeat hb(ch);  // first, so a slow backend start-up (context, pool) still shows life
  std::unique_ptr<Backend> backend;
  try {
    backend = make_backend(args);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "cks-worker: error: %s\n", e.what());
    log_event(ch, std::string("backend start failed: ") + e.what());
    return kExitFatal;
  }
  LineReader in;
  while (true) {
    std::optional<std::string> line;
    while (!(line = in.next_line()))
      if (in.fill(STDIN_FILENO) == LineReader::Fill::eof) return 0;  // the monitor closed our stdin
    Request req;
    try {
      req = decode_request(*line);
    } catch (const cks::Error& e) {
      std::fprintf(stderr, "cks-worker: error: %s\n", e.what());
      return kExitUsage;
    }
    Event ev;
    switch (req.type) {
      case RequestType::hello:
        ev.type = EventType::hello;
        ev.info = backend->info();
        ev.info.device = args.device;
        ch.send(ev);
        break;
      case RequestType::group:
        ev.type = EventType::group_ready;
        ev.group_id = req.group.group_id;
        try {
          ev.group = backend->setup_group(req.group);
        } catch (const std::exception& e) {
          ev.group.status = "launch_error";
          ev.group.error = e.what();
        }
        ch.send(ev);
        break;
      case RequestType::measure: {
        const int64_t id = req.measure.measurement_id;
        hb.set_current(id);
        ev.type = EventType::start;
        ev.id = id;
        ch.send(ev);  // before the GPU is touched: a crash from here on is this measurement's
        ev.type = EventType::result;
        try {
          ev.result = backend->measure(req.measure);
        } catch (const std::exception& e) {
          ev.result.status = "launch_error";
          ev.result.error = e.what();
        }
        hb.set_current(0);
        ch.send(ev);
        if (ev.result.fatal) {
          // The context is unusable: exit without tearing the backend down.
          std::fflush(stderr);
          std::_Exit(kExitFatal);
        }
        break;
      }
      case RequestType::quit: return 0;
    }
  }
}

std::vector<std::string> split_tabs(const std::string& line) {
  std::vector<std::string> f;
  size_t b = 0;
  for (size_t e; (e = line.find('\t', b)) != std::string::npos; b = e + 1) f.push_back(line.substr(b, e - b));
  f.push_back(line.substr(b));
  return f;
}

// Standalone profile mode (see the header comment). Results are flushed line by line, so a
// profile cut short by a time limit still pairs every profiled kernel with its item.
int profile(const Args& args) {
  std::ifstream in(args.profile);
  if (!in) {
    std::fprintf(stderr, "cks-worker: error: cannot read %s\n", args.profile.c_str());
    return kExitUsage;
  }
  std::FILE* out = std::fopen(args.profile_out.c_str(), "w");
  if (!out) {
    std::fprintf(stderr, "cks-worker: error: cannot write %s\n", args.profile_out.c_str());
    return kExitUsage;
  }
  std::unique_ptr<Backend> backend = make_backend(args);
  std::fprintf(out, "tag\tstatus\tmean_us\tstd_us\tsm_clock_mhz\tprofiled\tseq\tcublas_us\terror\n");
  std::fflush(out);
  std::string group_sig, line;
  GroupResult group;
  int64_t group_id = 0, seq = 0, lineno = 0;
  while (std::getline(in, line)) {
    ++lineno;
    if (line.empty() || line[0] == '#') continue;
    const auto f = split_tabs(line);
    if (f.size() != 10) {
      std::fprintf(stderr, "cks-worker: error: %s:%lld: expected 10 tab-separated fields, got %zu\n",
                   args.profile.c_str(), static_cast<long long>(lineno), f.size());
      return kExitUsage;
    }
    MeasureSpec ms;
    GroupSpec gs;
    try {
      gs.m = std::stoi(f[1]);
      gs.n = std::stoi(f[2]);
      gs.k = std::stoi(f[3]);
      gs.layout = cks::parse_layout(f[4]);
      gs.seed = std::stoull(f[5]);
      ms.lib_path = f[6];
      ms.index = std::stoi(f[7]);
      ms.kernel_id = f[8];
      ms.knobs = cks::RuntimeKnobs::from_canonical(f[9]);
    } catch (const std::exception& e) {
      std::fprintf(stderr, "cks-worker: error: %s:%lld: %s\n", args.profile.c_str(), static_cast<long long>(lineno),
                   e.what());
      return kExitUsage;
    }
    const std::string sig = f[1] + "x" + f[2] + "x" + f[3] + f[4] + "/" + f[5];
    if (sig != group_sig) {
      gs.group_id = ++group_id;
      group = backend->setup_group(gs);
      group_sig = sig;
      std::fprintf(stderr, "cks-worker: group %s: %s\n", sig.c_str(), group.status.c_str());
    }
    MeasureResult r;
    if (group.status != "ok") {
      r.status = "launch_error";
      r.error = "group set-up failed: " + group.error;
    } else {
      ms.measurement_id = lineno;
      ms.check = true;
      ms.profile = true;
      r = backend->measure(ms);
    }
    const bool profiled = r.status == "ok";
    std::string err = r.error;
    for (char& c : err)
      if (c == '\t' || c == '\n') c = ' ';
    std::fprintf(out, "%s\t%s\t%.4f\t%.4f\t%.0f\t%d\t%lld\t%.4f\t%s\n", f[0].c_str(), r.status.c_str(),
                 r.timing.mean_us, r.timing.std_us, r.timing.sm_clock_mhz, profiled ? 1 : 0,
                 static_cast<long long>(profiled ? seq++ : -1), group.cublas.mean_us, err.c_str());
    std::fflush(out);
    if (r.fatal) {
      std::fprintf(stderr, "cks-worker: fatal CUDA error at %s: %s\n", f[0].c_str(), r.error.c_str());
      std::fclose(out);
      std::_Exit(kExitFatal);
    }
  }
  std::fclose(out);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  const Args args = parse_args(argc, argv);
  std::signal(SIGPIPE, SIG_IGN);  // a vanished monitor shows up as a failed write instead
  if (!args.profile.empty()) {
    try {
      return profile(args);
    } catch (const std::exception& e) {
      std::fprintf(stderr, "cks-worker: error: %s\n", e.what());
      return kExitFatal;
    }
  }
  return serve(args);
}
