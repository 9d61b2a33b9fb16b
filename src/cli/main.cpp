// cks — the cutlass-kernel-selector command line. Subcommands mirror src/ modules.
#include <execinfo.h>
#include <signal.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <exception>
#include <filesystem>
#include <new>
#include <string>
#include <string_view>
#include <iostream>

#include "cks/common.hpp"
#include "cks/files.hpp"
#include "cli/commands.hpp"

namespace {

// A fatal signal leaves one line and a raw backtrace on stderr (async-signal-safe calls only),
// then re-raises it so the exit status still says what happened.
extern "C" void on_fatal_signal(int sig) {
  const char* name = strsignal(sig);
  const char head[] = "cks: fatal signal: ";
  (void)!write(STDERR_FILENO, head, sizeof head - 1);
  (void)!write(STDERR_FILENO, name, std::strlen(name));
  (void)!write(STDERR_FILENO, "\n", 1);
  void* frames[64];
  backtrace_symbols_fd(frames, backtrace(frames, 64), STDERR_FILENO);
  signal(sig, SIG_DFL);
  raise(sig);
}

void install_fatal_handlers() {
  void* warm[1];
  backtrace(warm, 1);  // loads libgcc's unwinder now, not inside the handler
  for (int sig : {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT}) signal(sig, on_fatal_signal);
}

// Errors are exactly one line on stderr: whatever a bad input put into the message (newlines,
// raw binary, megabytes of it) is escaped and cut by cks::one_line.
void print_error(const char* prefix, std::string_view message) {
  std::fflush(stdout);
  const std::string line = prefix + cks::one_line(message) + "\n";
  std::fwrite(line.data(), 1, line.size(), stderr);
}

}  // namespace

int main(int argc, char** argv) {
  install_fatal_handlers();
  cks::install_temp_cleanup();  // Ctrl-C / SIGTERM remove temporaries (decompressed shards, ...)
  CLI::App app{"cks: hardware-aware CUTLASS kernel selection for BF16 GEMM on Hopper"};
  app.require_subcommand(1);
  app.set_version_flag("--version", std::string("cks ") + CKS_VERSION);
  cks::cli::register_hw(app);
  cks::cli::register_catalogue(app);
  cks::cli::register_features(app);
  cks::cli::register_shapes(app);
  cks::cli::register_sample(app);
  cks::cli::register_data(app);
  cks::cli::register_codegen(app);
  cks::cli::register_bundle(app);
  cks::cli::register_collect(app);
  cks::cli::register_bench(app);
  cks::cli::register_pool(app);
  cks::cli::register_models(app);
  cks::cli::register_analyze(app);
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    print_error("cks: error: ", e.what());
    return 2;
  } catch (const cks::Error& e) {
    print_error("cks: error: ", e.what());
    return 1;
  } catch (const std::filesystem::filesystem_error& e) {  // e.g. a file name too long, a permission
    print_error("cks: error: ", e.what());
    return 1;
  } catch (const std::bad_alloc&) {
    print_error("cks: error: ", "out of memory");
    return 1;
  } catch (const std::exception& e) {
    print_error("cks: internal error: ", e.what());
    return 3;
  }
  return 0;
}
