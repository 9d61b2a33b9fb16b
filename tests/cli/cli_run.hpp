// Runs the built `cks` (CKS_BIN_DIR) with an argument vector (no shell) and an optional
// environment, capturing its exit status, stdout and stderr separately.
#pragma once
#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

extern char** environ;

namespace cks::test {

struct CliRun {
  int status = -1;  // wait status
  std::string out, err;
  bool exited() const { return WIFEXITED(status); }
  int code() const { return WIFEXITED(status) ? WEXITSTATUS(status) : -1; }
};

inline std::string slurp_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

inline CliRun run_cli(const std::vector<std::string>& args, const std::map<std::string, std::string>& env = {}) {
  static int calls = 0;
  const std::string stem = ::testing::TempDir() + "/cks_cli_" + std::to_string(getpid()) + "_" + std::to_string(++calls);
  const std::string out = stem + ".out", err = stem + ".err";
  std::vector<std::string> argv{std::string(CKS_BIN_DIR) + "/cks"};
  argv.insert(argv.end(), args.begin(), args.end());
  std::vector<std::string> envs;
  for (char** e = environ; *e; ++e) {
    const std::string kv = *e;
    if (!env.count(kv.substr(0, kv.find('=')))) envs.push_back(kv);
  }
  for (const auto& [k, v] : env) envs.push_back(k + "=" + v);
  std::vector<char*> a, e;
  for (auto& s : argv) a.push_back(s.data());
  a.push_back(nullptr);
  for (auto& s : envs) e.push_back(s.data());
  e.push_back(nullptr);
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&fa, 1, out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_addopen(&fa, 2, err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  pid_t pid = 0;
  CliRun r;
  if (posix_spawn(&pid, a[0], &fa, nullptr, a.data(), e.data()) == 0) waitpid(pid, &r.status, 0);
  posix_spawn_file_actions_destroy(&fa);
  r.out = slurp_file(out);
  r.err = slurp_file(err);
  std::remove(out.c_str());
  std::remove(err.c_str());
  return r;
}

// The error contract: exit code 1 or 2 (not a signal), stderr exactly one "cks: error: " line.
inline ::testing::AssertionResult one_error_line(const CliRun& r, const std::string& contains = "") {
  if (!r.exited()) return ::testing::AssertionFailure() << "killed by a signal; stderr: " << r.err;
  if (r.code() == 0) return ::testing::AssertionFailure() << "exit code 0; stderr: " << r.err;
  if (r.err.rfind("cks: error: ", 0) != 0) return ::testing::AssertionFailure() << "stderr: " << r.err;
  if (r.err.find('\n') != r.err.size() - 1) return ::testing::AssertionFailure() << "not one line: " << r.err;
  if (!contains.empty() && r.err.find(contains) == std::string::npos)
    return ::testing::AssertionFailure() << "stderr lacks '" << contains << "': " << r.err;
  return ::testing::AssertionSuccess();
}

}  // namespace cks::test
