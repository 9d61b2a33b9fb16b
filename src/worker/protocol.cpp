#include "worker/protocol.hpp"

#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <limits>
#include <nlohmann/json.hpp>

#include "cks/common.hpp"

namespace cks::worker {

using nlohmann::json;

namespace {

constexpr std::string_view kRequestNames[] = {"hello", "group", "measure", "quit"};
constexpr std::string_view kEventNames[] = {"hello", "group_ready", "start", "result", "hb", "log"};

template <class E, size_t N>
E parse_type(const json& j, const std::string_view (&names)[N], const char* what) {
  if (!j.contains("type") || !j["type"].is_string()) throw Error(std::string("bad worker ") + what + ": no \"type\"");
  const auto t = j["type"].get<std::string>();
  for (size_t i = 0; i < N; ++i)
    if (names[i] == t) return static_cast<E>(i);
  throw Error(std::string("bad worker ") + what + ": unknown type '" + t + "'");
}

// Absent NVML readings are NaN; JSON has no NaN, so they travel as null.
json num(double v) { return std::isfinite(v) ? json(v) : json(nullptr); }
double num_or_nan(const json& j, const char* key) {
  if (!j.contains(key) || j[key].is_null()) return std::numeric_limits<double>::quiet_NaN();
  return j[key].get<double>();
}
template <class T>
void opt(const json& j, const char* key, T& out) {
  if (j.contains(key) && !j[key].is_null()) out = j[key].get<T>();
}

json to_json(const DeviceInfo& d) {
  return {{"backend", d.backend},         {"gpu_name", d.gpu_name},
          {"gpu_uuid", d.gpu_uuid},       {"driver_version", d.driver_version},
          {"cuda_runtime_version", d.cuda_runtime_version},
          {"cublas_version", d.cublas_version},
          {"device", d.device},           {"sm_count", d.sm_count},
          {"l2_bytes", d.l2_bytes},       {"pool_bytes", d.pool_bytes}};
}
DeviceInfo device_from_json(const json& j) {
  DeviceInfo d;
  opt(j, "backend", d.backend);
  opt(j, "gpu_name", d.gpu_name);
  opt(j, "gpu_uuid", d.gpu_uuid);
  opt(j, "driver_version", d.driver_version);
  opt(j, "cuda_runtime_version", d.cuda_runtime_version);
  opt(j, "cublas_version", d.cublas_version);
  opt(j, "device", d.device);
  opt(j, "sm_count", d.sm_count);
  opt(j, "l2_bytes", d.l2_bytes);
  opt(j, "pool_bytes", d.pool_bytes);
  return d;
}

json to_json(const Timing& t) {
  return {{"mean_us", num(t.mean_us)},          {"std_us", num(t.std_us)},   {"n", t.n},
          {"sm_clock_mhz", num(t.sm_clock_mhz)}, {"mem_clock_mhz", num(t.mem_clock_mhz)},
          {"temp_c", num(t.temp_c)},            {"power_w", num(t.power_w)}};
}
Timing timing_from_json(const json& j) {
  Timing t;
  t.mean_us = num_or_nan(j, "mean_us");
  t.std_us = num_or_nan(j, "std_us");
  opt(j, "n", t.n);
  t.sm_clock_mhz = num_or_nan(j, "sm_clock_mhz");
  t.mem_clock_mhz = num_or_nan(j, "mem_clock_mhz");
  t.temp_c = num_or_nan(j, "temp_c");
  t.power_w = num_or_nan(j, "power_w");
  return t;
}

json to_json(const GroupSpec& g) {
  return {{"group_id", g.group_id}, {"m", g.m}, {"n", g.n}, {"k", g.k},
          {"layout", std::string(to_string(g.layout))}, {"seed", g.seed}};
}
GroupSpec group_spec_from_json(const json& j) {
  GroupSpec g;
  g.group_id = j.at("group_id").get<int64_t>();
  const auto m = j.at("m").get<int64_t>(), n = j.at("n").get<int64_t>(), k = j.at("k").get<int64_t>();
  g.layout = parse_layout(j.at("layout").get<std::string>());
  check_problem(m, n, k, g.layout);  // in int range from here on
  g.m = static_cast<int>(m), g.n = static_cast<int>(n), g.k = static_cast<int>(k);
  opt(j, "seed", g.seed);
  return g;
}

json to_json(const GroupResult& r) {
  return {{"status", r.status}, {"error", r.error}, {"cublas", to_json(r.cublas)},
          {"cublas_algo", r.cublas_algo}, {"replicas", r.replicas}};
}
GroupResult group_result_from_json(const json& j) {
  GroupResult r;
  r.status = j.at("status").get<std::string>();
  opt(j, "error", r.error);
  if (j.contains("cublas")) r.cublas = timing_from_json(j["cublas"]);
  opt(j, "cublas_algo", r.cublas_algo);
  opt(j, "replicas", r.replicas);
  return r;
}

json to_json(const MeasureSpec& m) {
  return {{"id", m.measurement_id}, {"lib_path", m.lib_path}, {"index", m.index},
          {"kernel_id", m.kernel_id}, {"knobs", m.knobs.canonical()}, {"check", m.check},
          {"cutoff_us", m.cutoff_us}};
}
MeasureSpec measure_spec_from_json(const json& j) {
  MeasureSpec m;
  m.measurement_id = j.at("id").get<int64_t>();
  opt(j, "lib_path", m.lib_path);
  opt(j, "index", m.index);
  m.kernel_id = j.at("kernel_id").get<std::string>();
  m.knobs = RuntimeKnobs::from_canonical(j.at("knobs").get<std::string>());
  opt(j, "check", m.check);
  opt(j, "cutoff_us", m.cutoff_us);
  return m;
}

json to_json(const MeasureResult& r) {
  return {{"status", r.status}, {"error", r.error}, {"timing", to_json(r.timing)},
          {"max_rel_err", num(r.max_rel_err)}, {"fatal", r.fatal}};
}
MeasureResult measure_result_from_json(const json& j) {
  MeasureResult r;
  r.status = j.at("status").get<std::string>();
  opt(j, "error", r.error);
  if (j.contains("timing")) r.timing = timing_from_json(j["timing"]);
  r.max_rel_err = num_or_nan(j, "max_rel_err");
  opt(j, "fatal", r.fatal);
  return r;
}

json parse_line(std::string_view line, const char* what) {
  json j = json::parse(line, nullptr, /*allow_exceptions=*/false);
  if (!j.is_object()) throw Error(std::string("bad worker ") + what + ": not a JSON object: " + std::string(line.substr(0, 200)));
  return j;
}

// Runs a decoder, turning nlohmann's type/key errors into one-line cks::Errors.
template <class F>
auto decoding(const char* what, F&& f) {
  try {
    return f();
  } catch (const json::exception& e) {
    throw Error(std::string("bad worker ") + what + ": " + e.what());
  }
}

}  // namespace

std::string_view to_string(RequestType t) { return kRequestNames[static_cast<int>(t)]; }
std::string_view to_string(EventType t) { return kEventNames[static_cast<int>(t)]; }

std::string encode(const Request& r) {
  json j{{"type", to_string(r.type)}};
  if (r.type == RequestType::group) j["spec"] = to_json(r.group);
  if (r.type == RequestType::measure) j["spec"] = to_json(r.measure);
  return j.dump();
}

std::string encode(const Event& e) {
  json j{{"type", to_string(e.type)}};
  switch (e.type) {
    case EventType::hello: j["info"] = to_json(e.info); break;
    case EventType::group_ready:
      j["group_id"] = e.group_id;
      j["result"] = to_json(e.group);
      break;
    case EventType::start:
    case EventType::hb: j["id"] = e.id; break;
    case EventType::result:
      j["id"] = e.id;
      j["result"] = to_json(e.result);
      break;
    case EventType::log: j["message"] = e.message; break;
  }
  // Invalid UTF-8 (e.g. a compiler message) must not make the worker throw while reporting.
  return j.dump(-1, ' ', false, json::error_handler_t::replace);
}

Request decode_request(std::string_view line) {
  return decoding("request", [&] {
    const json j = parse_line(line, "request");
    Request r;
    r.type = parse_type<RequestType>(j, kRequestNames, "request");
    if (r.type == RequestType::group) r.group = group_spec_from_json(j.at("spec"));
    if (r.type == RequestType::measure) r.measure = measure_spec_from_json(j.at("spec"));
    return r;
  });
}

Event decode_event(std::string_view line) {
  return decoding("event", [&] {
    const json j = parse_line(line, "event");
    Event e;
    e.type = parse_type<EventType>(j, kEventNames, "event");
    switch (e.type) {
      case EventType::hello: e.info = device_from_json(j.at("info")); break;
      case EventType::group_ready:
        e.group_id = j.at("group_id").get<int64_t>();
        e.group = group_result_from_json(j.at("result"));
        break;
      case EventType::start:
      case EventType::hb: e.id = j.at("id").get<int64_t>(); break;
      case EventType::result:
        e.id = j.at("id").get<int64_t>();
        e.result = measure_result_from_json(j.at("result"));
        break;
      case EventType::log: opt(j, "message", e.message); break;
    }
    return e;
  });
}

bool write_line(int fd, std::string_view line) {
  std::string buf;
  buf.reserve(line.size() + 1);
  buf.append(line).push_back('\n');
  size_t off = 0;
  while (off < buf.size()) {
    const ssize_t w = ::write(fd, buf.data() + off, buf.size() - off);
    if (w < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    off += static_cast<size_t>(w);
  }
  return true;
}

LineReader::Fill LineReader::fill(int fd) {
  // Compact once the consumed prefix dominates, so the buffer does not grow without bound.
  if (pos_ > 0 && pos_ * 2 >= buf_.size()) {
    buf_.erase(0, pos_);
    pos_ = 0;
  }
  char chunk[8192];
  while (true) {
    const ssize_t r = ::read(fd, chunk, sizeof chunk);
    if (r > 0) {
      buf_.append(chunk, static_cast<size_t>(r));
      return Fill::data;
    }
    if (r == 0) return Fill::eof;
    if (errno == EINTR) continue;
    if (errno == EAGAIN || errno == EWOULDBLOCK) return Fill::again;
    return Fill::eof;
  }
}

std::optional<std::string> LineReader::next_line() {
  const size_t nl = buf_.find('\n', pos_);
  if (nl == std::string::npos) return std::nullopt;
  std::string line = buf_.substr(pos_, nl - pos_);
  pos_ = nl + 1;
  return line;
}

}  // namespace cks::worker
