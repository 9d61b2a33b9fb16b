// Durability: committed rows survive SIGKILL of the writer, and checkpoints are consistent
// snapshots while writers keep going.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <sstream>
#include <thread>

#include "registry/registry_test_util.hpp"

using namespace cks;
using namespace cks::test;

namespace {

// Child: inserts rows forever (alternating single rows and batches of 5), writing each uuid
// to `fd` only after the insert call returned (= committed).
[[noreturn]] void insert_forever(const std::string& path, const std::string& run, int fd) {
  try {
    Registry r(path);
    for (int i = 0;; ++i) {
      std::vector<MeasurementRow> rows(i % 2 ? 5 : 1, test_row(run, "128x128x128_tn", "k1", "ok", i));
      for (auto& m : rows) m.uuid = new_uuid();
      if (rows.size() == 1) r.insert_measurement(rows[0]);
      else r.insert_measurements(rows);
      std::string line;
      for (auto& m : rows) line += m.uuid + "\n";
      if (write(fd, line.data(), line.size()) != static_cast<ssize_t>(line.size())) _exit(2);
    }
  } catch (...) {
    _exit(1);
  }
}

// Reads uuids from `fd` until at least `want` arrived (or EOF); appends them to `out`.
void read_uuids(int fd, size_t want, std::vector<std::string>& out, std::string& partial) {
  char buf[4096];
  while (out.size() < want) {
    ssize_t got = read(fd, buf, sizeof buf);
    if (got <= 0) return;
    partial.append(buf, static_cast<size_t>(got));
    size_t nl;
    while ((nl = partial.find('\n')) != std::string::npos) {
      out.push_back(partial.substr(0, nl));
      partial.erase(0, nl + 1);
    }
  }
}

}  // namespace

TEST(RegistryDurability, CommittedRowsSurviveSigkillAndResume) {
  ScratchDir dir;
  const std::string path = dir.file("collect.db");
  std::string run;
  {
    Registry r(path);
    run = r.begin_run(test_run());
  }
  std::vector<std::string> committed;
  // Three kill-and-resume rounds on the same file, killed at different points.
  for (size_t kill_after : {40u, 250u, 600u}) {
    int fds[2];
    ASSERT_EQ(pipe(fds), 0);
    pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      close(fds[0]);
      insert_forever(path, run, fds[1]);
    }
    close(fds[1]);
    std::string partial;
    const size_t target = committed.size() + kill_after;
    read_uuids(fds[0], target, committed, partial);
    ASSERT_GE(committed.size(), target) << "writer died early";
    ASSERT_EQ(kill(pid, SIGKILL), 0);
    int status = 0;
    ASSERT_EQ(waitpid(pid, &status, 0), pid);
    ASSERT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
    read_uuids(fds[0], SIZE_MAX, committed, partial);  // whatever it reported before dying
    close(fds[0]);

    EXPECT_EQ(sql_text(path, "PRAGMA integrity_check"), "ok");
    Registry after(path);  // recovers the WAL as the next collector would
    const long rows = sql_count(path, "measurements");
    EXPECT_GE(rows, static_cast<long>(committed.size()));
    for (const auto& u : committed)
      ASSERT_EQ(sql_text(path, "SELECT count(*) FROM measurements WHERE uuid='" + u + "'"), "1") << u;
  }
}

TEST(RegistryDurability, CheckpointIsAConsistentSnapshotWhileWriting) {
  ScratchDir dir;
  const std::string path = dir.file("live.db");
  Registry writer(path);
  const std::string run = writer.begin_run(test_run());
  Registry other(path);  // a second connection, as a separate checkpointing process would have

  std::atomic<bool> stop{false};
  std::atomic<long> batches{0};
  std::thread t([&] {
    // Batches of 10 in one transaction each: a consistent copy holds a multiple of 10 rows.
    while (!stop) {
      writer.insert_measurements(std::vector<MeasurementRow>(10, test_row(run, "64x64x64_tn", "k1", "ok")));
      ++batches;
    }
  });
  long last = -1;
  for (int i = 0; i < 6; ++i) {
    const long seen = batches.load();
    while (batches.load() < seen + 3) std::this_thread::yield();
    // Alternate: from another connection, and from the writer's own object while it inserts.
    const std::string dest = dir.file("ckpt.db");
    (i % 2 ? other : writer).checkpoint(dest);
    EXPECT_FALSE(std::filesystem::exists(dest + ".tmp"));
    EXPECT_EQ(sql_text(dest, "PRAGMA integrity_check"), "ok");
    EXPECT_EQ(sql_text(dest, "PRAGMA journal_mode"), "delete");  // self-contained: no -wal to copy along
    const long rows = sql_count(dest, "measurements");
    EXPECT_EQ(rows % 10, 0) << "checkpoint caught half a transaction";
    EXPECT_GE(rows, last);
    last = rows;
    EXPECT_EQ(sql_text(dest, "SELECT value FROM meta WHERE key='schema_version'"), "2");
  }
  stop = true;
  t.join();
  EXPECT_GT(last, 0);
  EXPECT_THROW(writer.checkpoint(path), Error);  // never onto itself
}
