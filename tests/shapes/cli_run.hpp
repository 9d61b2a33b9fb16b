// Runs the built `cks` binary (CKS_BIN_DIR) and captures its exit code, stdout and stderr.
#pragma once
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>

namespace cks::test {

struct CliResult {
  int exit_code = -1;
  std::string out, err;
};

inline CliResult run_cks(const std::string& args) {
  char err_path[] = "/tmp/cks_cli_stderr_XXXXXX";
  const int fd = mkstemp(err_path);
  if (fd >= 0) close(fd);
  const std::string cmd = std::string(CKS_BIN_DIR) + "/cks " + args + " 2>" + err_path;
  CliResult r;
  if (FILE* p = popen(cmd.c_str(), "r")) {
    char buf[65536];
    size_t got;
    while ((got = fread(buf, 1, sizeof buf, p)) > 0) r.out.append(buf, got);
    const int status = pclose(p);
    r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  }
  std::ifstream in(err_path);
  std::stringstream ss;
  ss << in.rdbuf();
  r.err = ss.str();
  unlink(err_path);
  return r;
}

inline size_t count_lines(const std::string& s) {
  size_t n = 0;
  for (char c : s) n += c == '\n';
  return n;
}

}  // namespace cks::test
