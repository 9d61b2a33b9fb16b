// Running helper programs without a shell (issue 18): an argument vector goes to posix_spawnp
// as is, so no quote, space, '$' or ';' in a path or an environment variable can become a
// command. Nothing in src/ calls popen() or system().
#pragma once
#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace cks {

struct RunOptions {
  std::string_view input;         // written to the child's stdin (empty: /dev/null)
  bool capture_stdout = true;     // false: the child writes to our stdout
  bool discard_stderr = true;     // false: the child writes to our stderr
  bool stderr_to_output = false;  // its stderr joins the captured stdout (overrides discard_stderr)
  size_t max_output = 64u << 20;  // captured stdout beyond this is dropped
};

struct RunResult {
  bool started = false;  // false: argv[0] was not found or could not be executed
  int exit_code = -1;    // when it exited normally
  int signal = 0;        // terminating signal, 0 when it exited normally
  std::string output;    // its stdout (capture_stdout)
  bool ok() const { return started && signal == 0 && exit_code == 0; }
};

// Runs argv[0] (searched in PATH when it has no '/') with the arguments argv[1..] and waits for it.
RunResult run_argv(const std::vector<std::string>& argv, const RunOptions& options = {});

}  // namespace cks
