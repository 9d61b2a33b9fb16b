// The fake backend's fault grammar and timing model, and the real cks-worker process driven
// through the monitor's WorkerProcess: answers, heartbeats, and how each fault looks from outside.
#include <gtest/gtest.h>
#include <poll.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <functional>

#include "cks/common.hpp"
#include "monitor/worker_process.hpp"
#include "worker/fake.hpp"

namespace cks::worker {
namespace {

using Clock = std::chrono::steady_clock;
using monitor::WorkerProcess;
using namespace std::chrono_literals;

const std::string kKernel = "k00000000000000aa", kFaulty = "k00000000000000bb";

TEST(WorkerFakeSpec, ParsesEveryFaultKind) {
  const auto spec = fake::FaultSpec::parse(
      " crash@ka ; hang@kb;freeze@kc;launch_error@kd;incorrect@ke;cannot_implement@kf;compile_error@kg;"
      "crash_once@kh/r=n,s=2,d=h,k=1:/tmp/x:y;crash:p=0.25;slow=1500;hang@ki/r=m,s=1,d=h,k=1;slow_start=20;"
      "start_gate=/tmp/g ate");
  const std::string any = "r=m,s=4,d=h,k=1";
  ASSERT_EQ(spec.faults.size(), 9u);
  EXPECT_EQ(spec.faults[0].kind, fake::FaultKind::crash);
  EXPECT_EQ(spec.faults[0].kernel_id, "ka");
  EXPECT_EQ(spec.measure_fault("kb", any)->kind, fake::FaultKind::hang);
  EXPECT_EQ(spec.measure_fault("kh", "r=n,s=2,d=h,k=1")->marker, "/tmp/x:y") << "the marker is everything after the first ':'";
  EXPECT_FALSE(spec.measure_fault("kh", any)) << "a fault naming knobs hits only those";
  EXPECT_TRUE(spec.measure_fault("ki", "r=m,s=1,d=h,k=1"));
  EXPECT_FALSE(spec.measure_fault("kg", any)) << "compile errors never reach the worker";
  EXPECT_TRUE(spec.compile_fails("kg"));
  EXPECT_FALSE(spec.compile_fails("ka"));
  EXPECT_DOUBLE_EQ(spec.crash_p, 0.25);
  EXPECT_DOUBLE_EQ(spec.slow_us, 1500);
  EXPECT_DOUBLE_EQ(spec.slow_start_us, 20);
  EXPECT_EQ(spec.start_gate, "/tmp/g ate");
  EXPECT_TRUE(fake::FaultSpec::parse("").faults.empty());
  // The kinds the real CUDA backend injects (scripts/device/fault_check.sh).
  EXPECT_EQ(fake::FaultSpec::parse("misaligned@km").faults.at(0).kind, fake::FaultKind::misaligned);
  for (auto k : {fake::FaultKind::hang, fake::FaultKind::launch_error, fake::FaultKind::misaligned})
    EXPECT_TRUE(fake::cuda_injectable(k));
  for (auto k : {fake::FaultKind::crash, fake::FaultKind::freeze, fake::FaultKind::oom, fake::FaultKind::incorrect})
    EXPECT_FALSE(fake::cuda_injectable(k));
}

TEST(WorkerFakeSpec, RejectsBadItemsWithClearErrors) {
  for (const char* bad : {"explode@ka", "crash", "crash@", "crash_once@ka", "crash_once@ka:", "crash:p=2", "crash:p=x",
                          "slow=-1", "slow=fast", "hang@ka/r=q", "compile_error@ka/r=m,s=1,d=h,k=1", "crash@/r=m,s=1,d=h,k=1", "start_gate="})
    EXPECT_THROW(fake::FaultSpec::parse(bad), Error) << bad;
  try {
    fake::FaultSpec::parse("explode@ka");
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("unknown fault kind 'explode'"), std::string::npos) << e.what();
  }
}

TEST(WorkerFakeSpec, RandomCrashesAreDeterministicPerMeasurement) {
  const auto spec = fake::FaultSpec::parse("crash:p=0.3");
  int crashes = 0;
  for (int64_t id = 1; id <= 1000; ++id) {
    EXPECT_EQ(spec.random_crash(5, id), spec.random_crash(5, id));
    crashes += spec.random_crash(5, id);
  }
  EXPECT_NEAR(crashes, 300, 60);
  EXPECT_FALSE(fake::FaultSpec::parse("").random_crash(5, 1));
}

TEST(WorkerFakeModel, TimingsAreDeterministicAndFollowTheModel) {
  const std::string knobs = RuntimeKnobs{}.canonical();
  const Timing a = fake::kernel_timing(kKernel, knobs, 4096, 4096, 4096);
  EXPECT_DOUBLE_EQ(a.mean_us, fake::kernel_timing(kKernel, knobs, 4096, 4096, 4096).mean_us);
  const double eff = fake::efficiency(kKernel, knobs);
  EXPECT_GE(eff, 0.2);
  EXPECT_LT(eff, 0.9);
  EXPECT_DOUBLE_EQ(a.mean_us, fake::kFakeLaunchUs + 2.0 * 4096.0 * 4096 * 4096 / (eff * fake::kFakePeakFlops) * 1e6);
  EXPECT_DOUBLE_EQ(a.std_us, 0.01 * a.mean_us);
  EXPECT_NE(fake::efficiency(kKernel, knobs), fake::efficiency(kFaulty, knobs));
  EXPECT_NE(fake::efficiency(kKernel, knobs), fake::efficiency(kKernel, "r=m,s=2,d=h,k=1"));
}

// ---- the real cks-worker ------------------------------------------------------------------

std::unique_ptr<WorkerProcess> start_worker(const std::string& fault, int device = 4) {
  return std::make_unique<WorkerProcess>(std::vector<std::string>{std::string(CKS_BIN_DIR) + "/cks-worker", "--backend",
                                                                  "fake", "--device", std::to_string(device), "--fault",
                                                                  fault});
}

// Reads events for up to `timeout`, stopping early once `until` returns true or the worker
// closes its output. Returns the events and whether the output closed.
std::pair<std::vector<Event>, bool> read_events(WorkerProcess& w, std::chrono::milliseconds timeout,
                                                const std::function<bool(const Event&)>& until = {}) {
  std::vector<Event> events;
  const auto give_up = Clock::now() + timeout;
  while (Clock::now() < give_up) {
    pollfd p{w.event_fd(), POLLIN, 0};
    if (poll(&p, 1, 20) <= 0) continue;
    const size_t before = events.size();
    const bool closed = w.read_events(events) == WorkerProcess::Read::closed;
    for (size_t i = before; i < events.size(); ++i)
      if (until && until(events[i])) return {events, closed};
    if (closed) return {events, true};
  }
  return {events, false};
}

bool is(const Event& e, EventType t) { return e.type == t; }

Request group_request() {
  Request r;
  r.type = RequestType::group;
  r.group = {1, 256, 128, 512, Layout::tn, 9};
  return r;
}

Request measure_request(int64_t id, const std::string& kernel) {
  Request r;
  r.type = RequestType::measure;
  r.measure.measurement_id = id;
  r.measure.kernel_id = kernel;
  r.measure.check = true;
  return r;
}

// Hello and a group set-up; the worker is then ready to measure.
void handshake(WorkerProcess& w) {
  Request hello;
  hello.type = RequestType::hello;
  ASSERT_TRUE(w.send(hello));
  auto [hello_events, closed] = read_events(w, 5000ms, [](const Event& e) { return is(e, EventType::hello); });
  ASSERT_FALSE(closed);
  ASSERT_TRUE(is(hello_events.back(), EventType::hello));
  EXPECT_EQ(hello_events.back().info.backend, "fake");
  EXPECT_EQ(hello_events.back().info.device, 4);
  ASSERT_TRUE(w.send(group_request()));
  auto [ready, closed2] = read_events(w, 5000ms, [](const Event& e) { return is(e, EventType::group_ready); });
  ASSERT_TRUE(is(ready.back(), EventType::group_ready));
  EXPECT_EQ(ready.back().group_id, 1);
  EXPECT_EQ(ready.back().group.status, "ok");
  EXPECT_DOUBLE_EQ(ready.back().group.cublas.mean_us, fake::cublas_timing(256, 128, 512).mean_us);
}

TEST(WorkerProcessFake, MeasuresAnnouncesStartAndQuits) {
  auto w = start_worker("");
  handshake(*w);
  ASSERT_TRUE(w->send(measure_request(11, kKernel)));
  auto [events, closed] = read_events(*w, 5000ms, [](const Event& e) { return is(e, EventType::result); });
  std::vector<Event> protocol;
  for (const auto& e : events)
    if (!is(e, EventType::hb)) protocol.push_back(e);
  ASSERT_EQ(protocol.size(), 2u);
  EXPECT_TRUE(is(protocol[0], EventType::start));
  EXPECT_EQ(protocol[0].id, 11);
  EXPECT_EQ(protocol[1].id, 11);
  EXPECT_EQ(protocol[1].result.status, "ok");
  EXPECT_DOUBLE_EQ(protocol[1].result.timing.mean_us,
                   fake::kernel_timing(kKernel, RuntimeKnobs{}.canonical(), 256, 128, 512).mean_us);
  Request quit;
  quit.type = RequestType::quit;
  ASSERT_TRUE(w->send(quit));
  EXPECT_TRUE(read_events(*w, 5000ms).second);
  EXPECT_EQ(w->reap(), "exited with status 0");
}

TEST(WorkerProcessFake, CrashIsASegfaultAfterTheStartEvent) {
  auto w = start_worker("crash@" + kFaulty);
  handshake(*w);
  ASSERT_TRUE(w->send(measure_request(5, kFaulty)));
  auto [events, closed] = read_events(*w, 5000ms);
  ASSERT_TRUE(closed);
  EXPECT_TRUE(std::any_of(events.begin(), events.end(), [](const Event& e) { return is(e, EventType::start) && e.id == 5; }));
  EXPECT_FALSE(std::any_of(events.begin(), events.end(), [](const Event& e) { return is(e, EventType::result); }));
  EXPECT_NE(w->reap().find("signal 11"), std::string::npos);
}

TEST(WorkerProcessFake, HangKeepsHeartbeatsWithTheMeasurementIdAndFreezeStopsThem) {
  auto hang = start_worker("hang@" + kFaulty);
  auto freeze = start_worker("freeze@" + kFaulty);
  handshake(*hang);
  handshake(*freeze);
  ASSERT_TRUE(hang->send(measure_request(21, kFaulty)));
  ASSERT_TRUE(freeze->send(measure_request(22, kFaulty)));
  auto [hang_events, hang_closed] = read_events(*hang, 1300ms);
  EXPECT_FALSE(hang_closed);
  int beats = 0;
  for (const auto& e : hang_events) {
    EXPECT_FALSE(is(e, EventType::result));
    beats += is(e, EventType::hb) && e.id == 21;
  }
  EXPECT_GE(beats, 2) << "heartbeats continue every ~0.5 s and name the hung measurement";
  // The frozen worker announced the measurement, then went silent.
  auto [freeze_events, freeze_closed] = read_events(*freeze, 1300ms);
  EXPECT_FALSE(freeze_closed);
  std::erase_if(freeze_events, [](const Event& e) { return is(e, EventType::start) || (is(e, EventType::hb) && e.id == 0); });
  EXPECT_TRUE(freeze_events.empty()) << "no heartbeat from a stopped process";
  hang->kill();
  freeze->kill();
}

// A fatal launch error of `spec`'s kind: reported with `error` in its text, then the worker exits.
void expect_fatal_launch_error(const std::string& spec, const std::string& error) {
  auto w = start_worker(spec);
  handshake(*w);
  ASSERT_TRUE(w->send(measure_request(8, kFaulty)));
  auto [events, closed] = read_events(*w, 5000ms);
  ASSERT_TRUE(closed);
  auto result = std::find_if(events.begin(), events.end(), [](const Event& e) { return is(e, EventType::result); });
  ASSERT_NE(result, events.end());
  EXPECT_EQ(result->result.status, "launch_error");
  EXPECT_NE(result->result.error.find(error), std::string::npos) << result->result.error;
  EXPECT_TRUE(result->result.fatal);
  EXPECT_EQ(w->reap(), "exited with status 3");
}

TEST(WorkerProcessFake, FatalLaunchErrorIsReportedThenTheWorkerExits) {
  expect_fatal_launch_error("launch_error@" + kFaulty, "illegal address");
}

TEST(WorkerProcessFake, MisalignedIsAFatalLaunchError) {
  expect_fatal_launch_error("misaligned@" + kFaulty, "misaligned");
}

TEST(WorkerProcessFake, AGatedStartUpSaysHelloOnlyOnceTheGateFileExists) {
  char dir[] = "/tmp/cks-gate-XXXXXX";
  ASSERT_NE(mkdtemp(dir), nullptr);
  const std::string gate = std::string(dir) + "/gate";
  auto w = start_worker("start_gate=" + gate);
  Request hello;
  hello.type = RequestType::hello;
  ASSERT_TRUE(w->send(hello));
  auto [before, closed] = read_events(*w, 300ms, [](const Event& e) { return is(e, EventType::hello); });
  EXPECT_FALSE(closed);
  EXPECT_TRUE(std::none_of(before.begin(), before.end(), [](const Event& e) { return is(e, EventType::hello); }));
  std::ofstream(gate).close();
  auto [after, closed2] = read_events(*w, 5000ms, [](const Event& e) { return is(e, EventType::hello); });
  ASSERT_FALSE(after.empty());
  EXPECT_TRUE(is(after.back(), EventType::hello));
  w->kill();
  std::remove(gate.c_str());
  rmdir(dir);
}

TEST(WorkerProcessFake, BadArgumentsAndAMissingExecutableExitNonZero) {
  WorkerProcess bad({std::string(CKS_BIN_DIR) + "/cks-worker", "--backend", "fake", "--fault", "explode@k1"});
  EXPECT_TRUE(read_events(bad, 5000ms).second);
  EXPECT_NE(bad.reap(), "exited with status 0");
  WorkerProcess missing({"/nonexistent/cks-worker"});
  EXPECT_TRUE(read_events(missing, 5000ms).second);
  EXPECT_EQ(missing.reap(), "exited with status 127");
}

}  // namespace
}  // namespace cks::worker
