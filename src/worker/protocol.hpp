// The monitor <-> GPU worker protocol: JSON lines over the worker's stdin (requests) and
// stdout (events). One JSON object per line, discriminated by "type".
//
// Requests (monitor -> worker):
//   {"type":"hello"}                         -> hello event (DeviceInfo)
//   {"type":"group","spec":{GroupSpec}}      -> group_ready event (GroupResult)
//   {"type":"measure","spec":{MeasureSpec}}  -> start event, then result event (MeasureResult)
//   {"type":"quit"}                          -> the worker exits 0
// Events (worker -> monitor):
//   hello, group_ready, start (sent before the GPU is touched, so a crash is attributed to
//   the measurement that was running), result, hb (heartbeat every ~0.5 s from a separate
//   thread; carries the id of the measurement in progress, 0 when none), log.
//
// Each line is written with a single write() (see write_line) so heartbeats from the
// worker's second thread never interleave with other events.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "worker/backend.hpp"

namespace cks::worker {

enum class RequestType { hello, group, measure, quit };

struct Request {
  RequestType type = RequestType::hello;
  GroupSpec group;      // type == group
  MeasureSpec measure;  // type == measure
};

enum class EventType { hello, group_ready, start, result, hb, log };

struct Event {
  EventType type = EventType::log;
  DeviceInfo info;       // hello
  int64_t group_id = 0;  // group_ready
  GroupResult group;     // group_ready
  int64_t id = 0;        // start, result, hb: measurement id (hb: 0 = none in progress)
  MeasureResult result;  // result
  std::string message;   // log
};

std::string_view to_string(RequestType t);
std::string_view to_string(EventType t);

// One line of JSON, without the trailing newline. Non-finite doubles (absent NVML readings)
// are written as null and read back as NaN.
std::string encode(const Request& r);
std::string encode(const Event& e);
// Throw cks::Error "bad worker request/event: <why>" on malformed input.
Request decode_request(std::string_view line);
Event decode_event(std::string_view line);

// Writes line + '\n' with one write() call (continued only after a partial write or EINTR).
// Returns false when the reader is gone (EPIPE) or on another write error.
bool write_line(int fd, std::string_view line);

// Splits bytes read from a pipe into lines; works with blocking and non-blocking fds.
class LineReader {
 public:
  enum class Fill { data, eof, again };
  // One read() from fd into the buffer: data (bytes appended), eof (writer closed or read
  // error) or again (non-blocking fd with nothing to read).
  Fill fill(int fd);
  // The next complete line (without '\n'), if any.
  std::optional<std::string> next_line();

 private:
  std::string buf_;
  size_t pos_ = 0;
};

}  // namespace cks::worker
