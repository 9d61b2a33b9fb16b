// Compiler processes die with the process that started them (issue 18, defect 2): after kill -9
// of `cks build` (or `cks collect`), nvcc and everything it started (cicc, ptxas, gcc) used to
// be re-parented to PID 1 and keep running. Here a fake nvcc runs a child of its own, as nvcc
// does; after kill -9 of cks both must be gone. Also: spawn_logged still reports exit codes and
// signals like the process itself.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>

#include <chrono>
#include <fstream>
#include <thread>

#include "cks/catalogue.hpp"
#include "compile/compile_test_util.hpp"
#include "compile/process.hpp"
#include "monitor/process_util.hpp"

using namespace cks;
using namespace cks::compile_test;
using namespace std::chrono_literals;

namespace {

// A fake nvcc that starts a long-running child (named after the scratch directory, so it can be
// found in /proc) and waits for it.
std::string write_slow_nvcc(const ScratchDir& dir) {
  std::filesystem::create_directories(dir.path() + "/cutlass/include/cutlass");
  std::ofstream(dir.path() + "/cutlass/include/cutlass/cutlass.h") << "// fake\n";
  std::filesystem::create_symlink("/bin/sleep", dir.path() + "/nvcc-child");
  const std::string nvcc = dir.path() + "/nvcc";
  write_executable(nvcc, "#!/bin/sh\n"
                         "case \"$1\" in --version) echo 'Cuda compilation tools, release 13.0, V13.0.88'; exit 0;; esac\n"
                         "echo started >> '" + dir.path() + "/started'\n"
                         "'" + dir.path() + "/nvcc-child' 300 &\n"
                         "wait\n");
  return nvcc;
}

}  // namespace

TEST(CompileProcessGroup, KillNineOfCksTakesTheWholeCompilerTreeAlong) {
  ScratchDir dir;
  const std::string nvcc = write_slow_nvcc(dir);
  const auto& kernels = Catalogue::get(Layout::tn).kernels();
  const std::string ids = kernels[0].canonical() + "," + kernels[1].canonical();
  const pid_t cks = cks::test::spawn({std::string(CKS_BIN_DIR) + "/cks", "build", "--nvcc", nvcc, "--cutlass",
                                      dir.path() + "/cutlass", "--cache", dir.path() + "/cache", "--jobs", "2",
                                      "--kernels-per-tu", "1", "--ids", ids},
                                     dir.path() + "/log");
  // Both compiles are running (each with its child) before the kill.
  const auto until = std::chrono::steady_clock::now() + 60s;
  while (cks::test::processes_with(dir.path() + "/nvcc-child").size() < 2 && std::chrono::steady_clock::now() < until)
    std::this_thread::sleep_for(10ms);
  ASSERT_EQ(cks::test::processes_with(dir.path() + "/nvcc-child").size(), 2u) << cks::test::slurp(dir.path() + "/log");

  ASSERT_EQ(kill(cks, SIGKILL), 0);
  EXPECT_EQ(cks::test::wait_for(cks), -SIGKILL);
  const auto left = cks::test::wait_gone(dir.path() + "/nvcc", 3s);
  for (const auto& p : left) ADD_FAILURE() << "left behind: pid " << p.pid << " (parent " << p.ppid << "): " << p.cmdline;
  for (const auto& p : left) kill(p.pid, SIGKILL);  // do not leak them past the test either way
}

TEST(CompileProcessGroup, SpawnReportsExitCodesAndSignalsOfTheCommand) {
  ScratchDir dir;
  const std::string log = dir.path() + "/log";
  auto run = [&](const std::string& script) {
    return compile::wait_child(compile::spawn_logged({"/bin/sh", "-c", script}, log));
  };
  EXPECT_TRUE(run("echo hello").ok());
  const auto code = run("exit 3");
  EXPECT_EQ(code.code, 3);
  EXPECT_EQ(code.signal, 0);
  const auto killed = run("kill -9 $$");
  EXPECT_EQ(killed.signal, SIGKILL);
  const auto segv = run("kill -SEGV $$");
  EXPECT_EQ(segv.signal, SIGSEGV);
  std::ifstream in(log);
  std::string first;
  std::getline(in, first);
  EXPECT_EQ(first, "hello") << "output goes to the log";
  EXPECT_THROW(compile::spawn_logged({dir.path() + "/no-such-compiler"}, log), Error);

  // kill_group stops the command and its children.
  const pid_t pid = compile::spawn_logged({"/bin/sh", "-c", "sleep 300 & wait"}, log);
  std::this_thread::sleep_for(200ms);
  compile::kill_group(pid, SIGKILL);
  EXPECT_EQ(compile::wait_child(pid).signal, SIGKILL);
}

// The peak memory of a compile is measured (issue 20: what --mem-per-kernel-gb budgets): the
// largest process of the command's tree, a grandchild here (guardian -> sh -> sh).
TEST(CompileProcessGroup, WaitReportsThePeakResidentSetOfTheCommandsTree) {
  ScratchDir dir;
  const std::string log = dir.path() + "/log";
  const auto rss_kb = [&](const std::string& script) {
    return compile::wait_child(compile::spawn_logged({"/bin/sh", "-c", script}, log)).max_rss_kb;
  };
  const long small = rss_kb("true");
  const long big = rss_kb("/bin/sh -c 'x=$(head -c 60000000 /dev/zero | tr \"\\000\" a); echo ${#x}'");
  EXPECT_GT(small, 0);
  EXPECT_GT(big, 55000) << "a shell holding a 60 MB string";
  EXPECT_LT(small, 55000);
}
