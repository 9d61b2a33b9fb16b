// One writer per registry (issue 18, defect 1): a second `cks collect` on a registry in use
// fails at once with one line naming the holder, instead of measuring every candidate again.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <regex>

#include "monitor/collect_fixture.hpp"
#include "monitor/process_util.hpp"

namespace cks::test {
namespace {

using namespace std::chrono_literals;

TEST(RegistryLock, SecondHolderIsRefusedWithTheHolderNamedAndReleaseRemovesTheFile) {
  TempDir dir;
  const std::string db = dir / "reg.db";
  {
    RegistryLock first(db);
    EXPECT_TRUE(std::filesystem::exists(db + ".lock"));
    try {
      RegistryLock second(db);
      FAIL() << "locked twice";
    } catch (const Error& e) {
      const std::string want = "registry " + db + " is in use by pid " + std::to_string(getpid()) + " (host ";
      EXPECT_EQ(std::string(e.what()).rfind(want, 0), 0u) << e.what();
      EXPECT_TRUE(std::regex_search(e.what(), std::regex(R"(, since \d{4}-\d\d-\d\dT[0-9:.]+Z\)$)"))) << e.what();
    }
    EXPECT_THROW(Registry(db, RegistryOptions{.exclusive = true}), Error);
    Registry reader(db);  // readers and plain writers take no lock
  }
  EXPECT_FALSE(std::filesystem::exists(db + ".lock")) << "a clean release removes the lock file";
  // A stale lock file (its holder was killed) does not block.
  std::ofstream(db + ".lock") << "12345\nelsewhere\n2020-01-01T00:00:00.000Z\n";
  RegistryLock again(db);
}

TEST(RegistryLock, AKilledHolderReleasesIt) {
  TempDir dir;
  const std::string db = dir / "reg.db";
  int ready[2];
  ASSERT_EQ(pipe(ready), 0);
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    RegistryLock held(db);
    (void)!write(ready[1], "r", 1);
    while (true) pause();
  }
  close(ready[1]);
  char c;
  ASSERT_EQ(read(ready[0], &c, 1), 1);
  close(ready[0]);
  try {
    RegistryLock mine(db);
    FAIL() << "locked while the child holds it";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("in use by pid " + std::to_string(child) + " "), std::string::npos) << e.what();
  }
  kill(child, SIGKILL);
  waitpid(child, nullptr, 0);
  RegistryLock mine(db);
}

TEST(RegistryLock, SecondCollectOnOneRegistryFailsAtOnce) {
  TempDir dir;
  const std::vector<TestGroup> groups = {kernel_range_group(512, 256, 2048, 0, 20)};
  const std::string plan = write_test_plan(dir / "plan.jsonl", groups), db = dir / "reg.db";
  auto argv = [&](const std::string& seed) {
    return std::vector<std::string>{std::string(CKS_BIN_DIR) + "/cks", "collect", "--plan", plan, "--registry", db,
                                    "--backend", "fake", "--fault", "slow=400000", "--seed", seed, "--gpus", "0",
                                    "--progress-every", "0"};
  };
  // 0.4 s per measurement: the first run is still measuring (8 s) while the second starts, even
  // under the sanitizer build, where the first run at 0.1 s a measurement finished too early.
  const pid_t first = spawn(argv("1"), dir / "first.log");
  ASSERT_TRUE(wait_rows(db, 2, 30s)) << slurp(dir / "first.log");

  const auto t0 = std::chrono::steady_clock::now();
  const int second = run(argv("2"), dir / "second.log");
  const double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  const std::string err = slurp(dir / "second.log");
  EXPECT_EQ(second, 1) << err;
  EXPECT_LT(took, 5.0) << "refused at once, not after measuring";
  EXPECT_EQ(std::count(err.begin(), err.end(), '\n'), 1) << err;
  EXPECT_EQ(err.rfind("cks: error: registry " + db + " is in use by pid " + std::to_string(first) + " (host ", 0), 0u)
      << err;

  ASSERT_EQ(wait_for(first), 0) << slurp(dir / "first.log");
  // Every candidate measured exactly once, all by the first run.
  const auto by_candidate = rows_by_candidate(read_rows(db));
  EXPECT_EQ(by_candidate.size(), 20u);
  for (const auto& [key, rows] : by_candidate) EXPECT_EQ(rows.size(), 1u) << std::get<1>(key);
  EXPECT_EQ(query_text(db, "SELECT count(*) FROM runs"), "1");
  EXPECT_FALSE(std::filesystem::exists(db + ".lock"));
}

}  // namespace
}  // namespace cks::test
