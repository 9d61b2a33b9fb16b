// Child processes for the end-to-end monitor tests: `cks collect` (and friends) spawned with a
// log, waited for, killed; and a scan of /proc for processes left behind.
#pragma once
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "monitor/collect_fixture.hpp"

extern char** environ;

namespace cks::test {

// Runs `argv` with stdout and stderr appended to `log`; returns its pid.
inline pid_t spawn(const std::vector<std::string>& argv, const std::string& log) {
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, STDOUT_FILENO, log.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
  posix_spawn_file_actions_adddup2(&fa, STDOUT_FILENO, STDERR_FILENO);
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  pid_t pid = -1;
  const int rc = posix_spawn(&pid, args[0], &fa, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&fa);
  if (rc != 0) throw std::runtime_error("posix_spawn failed");
  return pid;
}

// Exit status, or -signal when killed.
inline int wait_for(pid_t pid) {
  int st = 0;
  while (waitpid(pid, &st, 0) < 0 && errno == EINTR) {
  }
  return WIFEXITED(st) ? WEXITSTATUS(st) : -WTERMSIG(st);
}

inline int run(const std::vector<std::string>& argv, const std::string& log) { return wait_for(spawn(argv, log)); }

inline std::string slurp(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

inline size_t count_rows(const std::string& db) {
  return static_cast<size_t>(std::stol(query_text(db, "SELECT count(*) FROM measurements")));
}

// Polls until the registry has at least `n` measurement rows (or the timeout passes).
inline bool wait_rows(const std::string& db, size_t n, std::chrono::milliseconds timeout) {
  const auto until = std::chrono::steady_clock::now() + timeout;
  while (std::chrono::steady_clock::now() < until) {
    if (std::filesystem::exists(db) && count_rows(db) >= n) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return false;
}

struct ProcInfo {
  pid_t pid = 0, ppid = 0;
  char state = '?';
  std::string cmdline;  // arguments joined by spaces
};

// Every live (not zombie) process.
inline std::vector<ProcInfo> processes() {
  std::vector<ProcInfo> out;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator("/proc", ec)) {
    const std::string name = e.path().filename().string();
    if (name.empty() || !std::all_of(name.begin(), name.end(), ::isdigit)) continue;
    ProcInfo p;
    p.pid = std::stoi(name);
    std::ifstream stat(e.path() / "stat");
    std::string line;
    if (!std::getline(stat, line)) continue;
    const size_t close = line.rfind(')');
    if (close == std::string::npos || close + 4 >= line.size()) continue;
    std::istringstream rest(line.substr(close + 2));
    rest >> p.state >> p.ppid;
    if (p.state == 'Z' || p.state == 'X') continue;
    // A process that exits between the open and the read fails the read (ESRCH), which libstdc++'s
    // filebuf throws through the iterator: it is gone, as a zombie would be.
    try {
      std::ifstream in(e.path() / "cmdline", std::ios::binary);
      p.cmdline.assign(std::istreambuf_iterator<char>(in), {});
    } catch (const std::exception&) {  // std::ios_base::failure
      continue;
    }
    std::replace(p.cmdline.begin(), p.cmdline.end(), '\0', ' ');
    out.push_back(std::move(p));
  }
  return out;
}

// Live processes whose command line contains `needle`.
inline std::vector<ProcInfo> processes_with(const std::string& needle) {
  std::vector<ProcInfo> out;
  for (auto& p : processes())
    if (p.cmdline.find(needle) != std::string::npos) out.push_back(std::move(p));
  return out;
}

// Live children of `parent` whose command line contains `needle`.
inline std::vector<pid_t> children_with(pid_t parent, const std::string& needle) {
  std::vector<pid_t> out;
  for (const auto& p : processes())
    if (p.ppid == parent && p.cmdline.find(needle) != std::string::npos) out.push_back(p.pid);
  return out;
}

// Waits until no live process's command line contains `needle`; the survivors otherwise.
inline std::vector<ProcInfo> wait_gone(const std::string& needle, std::chrono::milliseconds timeout) {
  const auto until = std::chrono::steady_clock::now() + timeout;
  while (true) {
    auto left = processes_with(needle);
    if (left.empty() || std::chrono::steady_clock::now() >= until) return left;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

}  // namespace cks::test
