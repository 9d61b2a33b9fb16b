// Worker protocol: JSON-line round trips, malformed input, line framing over a real pipe.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>

#include "cks/common.hpp"
#include "worker/protocol.hpp"

namespace cks::worker {
namespace {

TEST(WorkerProtocol, RequestsRoundTrip) {
  Request g;
  g.type = RequestType::group;
  g.group = {42, 4096, 1024, 8192, Layout::nt, 0xfedcba9876543210ull};
  const Request g2 = decode_request(encode(g));
  EXPECT_EQ(g2.type, RequestType::group);
  EXPECT_EQ(g2.group.group_id, 42);
  EXPECT_EQ(g2.group.m, 4096);
  EXPECT_EQ(g2.group.n, 1024);
  EXPECT_EQ(g2.group.k, 8192);
  EXPECT_EQ(g2.group.layout, Layout::nt);
  EXPECT_EQ(g2.group.seed, 0xfedcba9876543210ull);

  Request m;
  m.type = RequestType::measure;
  m.measure.measurement_id = 7;
  m.measure.lib_path = "/cache/cks_abc.so";
  m.measure.index = 3;
  m.measure.kernel_id = "k0123456789abcdef";
  m.measure.knobs = {RasterOrder::along_n, 4, Decomposition::split_k, 3};
  m.measure.check = false;
  m.measure.cutoff_us = 12.5;
  const Request m2 = decode_request(encode(m));
  EXPECT_EQ(m2.type, RequestType::measure);
  EXPECT_EQ(m2.measure.measurement_id, 7);
  EXPECT_EQ(m2.measure.lib_path, "/cache/cks_abc.so");
  EXPECT_EQ(m2.measure.index, 3);
  EXPECT_EQ(m2.measure.kernel_id, "k0123456789abcdef");
  EXPECT_EQ(m2.measure.knobs, m.measure.knobs);
  EXPECT_FALSE(m2.measure.check);
  EXPECT_DOUBLE_EQ(m2.measure.cutoff_us, 12.5);

  for (auto t : {RequestType::hello, RequestType::quit}) {
    Request r;
    r.type = t;
    EXPECT_EQ(decode_request(encode(r)).type, t);
  }
}

TEST(WorkerProtocol, EventsRoundTripWithAbsentReadingsAsNaN) {
  Event hello;
  hello.type = EventType::hello;
  hello.info.backend = "cuda";
  hello.info.gpu_name = "NVIDIA H200";
  hello.info.device = 3;
  hello.info.sm_count = 132;
  hello.info.pool_bytes = size_t{8} << 30;
  const Event h2 = decode_event(encode(hello));
  EXPECT_EQ(h2.type, EventType::hello);
  EXPECT_EQ(h2.info.gpu_name, "NVIDIA H200");
  EXPECT_EQ(h2.info.device, 3);
  EXPECT_EQ(h2.info.pool_bytes, size_t{8} << 30);

  Event ready;
  ready.type = EventType::group_ready;
  ready.group_id = 5;
  ready.group.status = "ok";
  ready.group.cublas = {10.5, 0.25, 5, NAN, NAN, 61.0, NAN};
  ready.group.cublas_algo = "sm90_xmma";
  ready.group.replicas = 4;
  const Event r2 = decode_event(encode(ready));
  EXPECT_EQ(r2.group_id, 5);
  EXPECT_EQ(r2.group.status, "ok");
  EXPECT_DOUBLE_EQ(r2.group.cublas.mean_us, 10.5);
  EXPECT_TRUE(std::isnan(r2.group.cublas.sm_clock_mhz));
  EXPECT_DOUBLE_EQ(r2.group.cublas.temp_c, 61.0);
  EXPECT_EQ(r2.group.replicas, 4);

  Event res;
  res.type = EventType::result;
  res.id = 99;
  res.result.status = "launch_error";
  res.result.error = "illegal address \xff";  // invalid UTF-8 must not break the worker
  res.result.fatal = true;
  res.result.max_rel_err = NAN;
  const Event res2 = decode_event(encode(res));
  EXPECT_EQ(res2.type, EventType::result);
  EXPECT_EQ(res2.id, 99);
  EXPECT_EQ(res2.result.status, "launch_error");
  EXPECT_TRUE(res2.result.fatal);
  EXPECT_TRUE(std::isnan(res2.result.max_rel_err));

  for (auto t : {EventType::start, EventType::hb}) {
    Event e;
    e.type = t;
    e.id = 12;
    const Event e2 = decode_event(encode(e));
    EXPECT_EQ(e2.type, t);
    EXPECT_EQ(e2.id, 12);
  }
  Event log;
  log.type = EventType::log;
  log.message = "pool: 8 GiB";
  EXPECT_EQ(decode_event(encode(log)).message, "pool: 8 GiB");
}

TEST(WorkerProtocol, MalformedLinesAreClearErrors) {
  EXPECT_THROW(decode_event("not json"), Error);
  EXPECT_THROW(decode_event("[1,2]"), Error);
  EXPECT_THROW(decode_event(R"({"id":1})"), Error);
  EXPECT_THROW(decode_event(R"({"type":"bogus"})"), Error);
  EXPECT_THROW(decode_event(R"({"type":"result","id":"x","result":{"status":"ok"}})"), Error);
  EXPECT_THROW(decode_request(R"({"type":"measure","spec":{"id":1,"kernel_id":"k","knobs":"garbage"}})"), Error);
  EXPECT_THROW(decode_request(R"({"type":"group","spec":{"group_id":1,"m":8,"n":8,"k":8,"layout":"xx"}})"), Error);
  try {
    decode_event(R"({"type":"bogus"})");
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("unknown type 'bogus'"), std::string::npos) << e.what();
  }
}

TEST(WorkerProtocol, LinesAreFramedAcrossPartialReads) {
  int fds[2];
  ASSERT_EQ(pipe(fds), 0);
  ASSERT_TRUE(write_line(fds[1], R"({"type":"hb","id":1})"));
  ASSERT_EQ(write(fds[1], "{\"type\":\"hb\",", 13), 13);  // half a line, as a crashing writer leaves it
  LineReader reader;
  ASSERT_EQ(reader.fill(fds[0]), LineReader::Fill::data);
  auto first = reader.next_line();
  ASSERT_TRUE(first);
  EXPECT_EQ(decode_event(*first).id, 1);
  EXPECT_FALSE(reader.next_line()) << "an unterminated line is not delivered";
  ASSERT_EQ(write(fds[1], "\"id\":2}\n", 8), 8);
  ASSERT_EQ(reader.fill(fds[0]), LineReader::Fill::data);
  auto second = reader.next_line();
  ASSERT_TRUE(second);
  EXPECT_EQ(decode_event(*second).id, 2);
  close(fds[1]);
  EXPECT_EQ(reader.fill(fds[0]), LineReader::Fill::eof);
  close(fds[0]);
}

}  // namespace
}  // namespace cks::worker
