#include "monitor/environment.hpp"

#include <unistd.h>

#include <atomic>
#include <cctype>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>

#include "cks/common.hpp"
#include "cks/hw.hpp"
#include "common/subprocess.hpp"

namespace cks::monitor {

namespace fs = std::filesystem;

namespace {

std::atomic<int> g_stop_signals{0};
extern "C" void on_stop_signal(int) { g_stop_signals.fetch_add(1, std::memory_order_relaxed); }

std::string trimmed_output(const std::vector<std::string>& argv) {
  std::string out = run_argv(argv).output;
  while (!out.empty() && std::isspace(static_cast<unsigned char>(out.back()))) out.pop_back();
  return out;
}

}  // namespace

SignalScope::SignalScope(bool handle_stop) : handle_stop_(handle_stop) {
  struct sigaction ign {};
  ign.sa_handler = SIG_IGN;
  sigaction(SIGPIPE, &ign, &old_pipe_);
  g_stop_signals = 0;
  if (handle_stop_) {
    struct sigaction sa {};
    sa.sa_handler = on_stop_signal;  // no SA_RESTART: poll() wakes up with EINTR
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, &old_int_);
    sigaction(SIGTERM, &sa, &old_term_);
  }
}

SignalScope::~SignalScope() {
  sigaction(SIGPIPE, &old_pipe_, nullptr);
  if (handle_stop_) {
    sigaction(SIGINT, &old_int_, nullptr);
    sigaction(SIGTERM, &old_term_, nullptr);
  }
}

int SignalScope::count() const { return handle_stop_ ? g_stop_signals.load(std::memory_order_relaxed) : 0; }

std::string git_sha() {
  if (const char* env = std::getenv("CKS_GIT_SHA"); env && *env) return env;
  if (!fs::exists(fs::path(CKS_SOURCE_DIR) / ".git")) return "";
  return trimmed_output({"git", "-C", CKS_SOURCE_DIR, "rev-parse", "HEAD"});
}

std::string host_name() {
  char buf[256] = {};
  ::gethostname(buf, sizeof buf - 1);
  return buf;
}

std::string cutlass_version(const std::string& cutlass_dir) {
  std::ifstream in(fs::path(cutlass_dir) / "include" / "cutlass" / "version.h");
  std::map<std::string, std::string> v;
  const std::regex def(R"(#define\s+CUTLASS_(MAJOR|MINOR|PATCH)\s+(\d+))");
  std::string line;
  std::smatch m;
  while (std::getline(in, line))
    if (std::regex_search(line, m, def)) v[m[1]] = m[2];
  if (v.size() != 3) return "";
  return v["MAJOR"] + "." + v["MINOR"] + "." + v["PATCH"];
}

std::string default_worker_exe() {
  std::error_code ec;
  const fs::path self = fs::read_symlink("/proc/self/exe", ec);
  return ec ? "cks-worker" : (self.parent_path() / "cks-worker").string();
}

std::vector<int> visible_gpus() {
  std::vector<int> gpus;
  for (int i = 0;; ++i) {
    try {
      hw_from_device(i);
    } catch (const Error&) {
      break;
    }
    gpus.push_back(i);
  }
  if (gpus.empty()) throw Error("no CUDA device is visible (pass --gpus, or --backend fake)");
  return gpus;
}

}  // namespace cks::monitor
