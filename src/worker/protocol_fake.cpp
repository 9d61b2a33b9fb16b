// The fake GPU's fault grammar and timing model (see worker/fake.hpp). Named protocol_*.cpp
// so CMake builds it into cks_core for the monitor and the tests as well as the worker.
#include <cctype>
#include <charconv>
#include <cmath>

#include "cks/common.hpp"
#include "worker/fake.hpp"

namespace cks::worker::fake {

namespace {

constexpr std::string_view kKindNames[] = {"crash",        "crash_once", "hang",
                                           "freeze",       "launch_error", "incorrect",
                                           "cannot_implement", "compile_error", "oom",
                                           "misaligned"};

std::string_view trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

double parse_number(std::string_view s, std::string_view item) {
  double v = 0;
  const auto r = std::from_chars(s.data(), s.data() + s.size(), v);
  if (r.ec != std::errc() || r.ptr != s.data() + s.size() || !std::isfinite(v) || v < 0)
    throw Error("bad fault spec item '" + std::string(item) + "': '" + std::string(s) + "' is not a non-negative number");
  return v;
}

// Uniform in [0, 1) from a 64-bit FNV-1a hash. FNV's high bits barely depend on the last bytes
// of the input ("7:1" vs "7:2"), so they go through MurmurHash3's fmix64 finaliser first.
double unit(uint64_t h) {
  h ^= h >> 33;
  h *= 0xff51afd7ed558ccdull;
  h ^= h >> 33;
  h *= 0xc4ceb9fe1a85ec53ull;
  h ^= h >> 33;
  return static_cast<double>(h >> 11) * 0x1.0p-53;
}

Timing timing_at(double efficiency, long m, long n, long k) {
  Timing t;
  t.mean_us = kFakeLaunchUs + 2.0 * m * n * k / (efficiency * kFakePeakFlops) * 1e6;
  t.std_us = 0.01 * t.mean_us;
  t.n = 5;
  t.sm_clock_mhz = 1980;
  t.mem_clock_mhz = 3201;
  t.temp_c = 50;
  t.power_w = 500;
  return t;
}

}  // namespace

bool cuda_injectable(FaultKind kind) {
  return kind == FaultKind::hang || kind == FaultKind::launch_error || kind == FaultKind::misaligned;
}

FaultSpec FaultSpec::parse(std::string_view spec) {
  FaultSpec out;
  size_t b = 0;
  while (b <= spec.size()) {
    size_t e = spec.find(';', b);
    if (e == std::string_view::npos) e = spec.size();
    const std::string_view item = trim(spec.substr(b, e - b));
    b = e + 1;
    if (item.empty()) continue;
    if (item.starts_with("slow=")) {
      out.slow_us = parse_number(item.substr(5), item);
      continue;
    }
    if (item.starts_with("slow_start=")) {
      out.slow_start_us = parse_number(item.substr(11), item);
      continue;
    }
    if (item.starts_with("start_gate=")) {
      out.start_gate = std::string(item.substr(11));
      if (out.start_gate.empty()) throw Error("bad fault spec item '" + std::string(item) + "': no file named");
      continue;
    }
    if (item.starts_with("crash:p=")) {
      out.crash_p = parse_number(item.substr(8), item);
      if (out.crash_p > 1) throw Error("bad fault spec item '" + std::string(item) + "': probability above 1");
      continue;
    }
    const size_t at = item.find('@');
    if (at == std::string_view::npos)
      throw Error("bad fault spec item '" + std::string(item) +
                  "' (expected <kind>@<kernel_id>[/<knobs>], crash_once@<kernel_id>[/<knobs>]:<marker>, crash:p=<p>, "
                  "slow=<us>, slow_start=<us> or start_gate=<path>)");
    const std::string_view kind = item.substr(0, at);
    Fault f;
    bool known = false;
    for (size_t i = 0; i < std::size(kKindNames); ++i)
      if (kKindNames[i] == kind) f.kind = static_cast<FaultKind>(i), known = true;
    if (!known) {
      std::string names;
      for (auto n : kKindNames) names += (names.empty() ? "" : ", ") + std::string(n);
      throw Error("unknown fault kind '" + std::string(kind) + "' in fault spec (expected " + names + ")");
    }
    std::string_view target = item.substr(at + 1);
    if (f.kind == FaultKind::crash_once) {
      const size_t colon = target.find(':');
      if (colon == std::string_view::npos || colon + 1 == target.size())
        throw Error("bad fault spec item '" + std::string(item) + "': crash_once needs <kernel_id>:<marker_path>");
      f.marker = std::string(target.substr(colon + 1));
      target = target.substr(0, colon);
    }
    if (const size_t slash = target.find('/'); slash != std::string_view::npos) {
      if (f.kind == FaultKind::compile_error)
        throw Error("bad fault spec item '" + std::string(item) + "': a compile error concerns a whole kernel, not knobs");
      try {
        f.knobs = RuntimeKnobs::from_canonical(target.substr(slash + 1)).canonical();
      } catch (const Error& e) {
        throw Error("bad fault spec item '" + std::string(item) + "': " + e.what());
      }
      target = target.substr(0, slash);
    }
    if (target.empty()) throw Error("bad fault spec item '" + std::string(item) + "': no kernel id");
    f.kernel_id = std::string(target);
    out.faults.push_back(std::move(f));
  }
  return out;
}

std::optional<Fault> FaultSpec::measure_fault(std::string_view kernel_id, std::string_view knobs) const {
  for (const auto& f : faults)
    if (f.kernel_id == kernel_id && (f.knobs.empty() || f.knobs == knobs) && f.kind != FaultKind::compile_error)
      return f;
  return std::nullopt;
}

bool FaultSpec::compile_fails(std::string_view kernel_id) const {
  for (const auto& f : faults)
    if (f.kernel_id == kernel_id && f.kind == FaultKind::compile_error) return true;
  return false;
}

bool FaultSpec::random_crash(uint64_t seed, int64_t measurement_id) const {
  if (crash_p <= 0) return false;
  return unit(fnv1a64(std::to_string(seed) + ":" + std::to_string(measurement_id))) < crash_p;
}

double efficiency(std::string_view kernel_id, std::string_view knobs) {
  std::string key(kernel_id);
  key += '|';
  key += knobs;
  return 0.2 + 0.7 * unit(fnv1a64(key));
}

Timing kernel_timing(std::string_view kernel_id, std::string_view knobs, long m, long n, long k) {
  return timing_at(efficiency(kernel_id, knobs), m, n, k);
}

Timing cublas_timing(long m, long n, long k) { return timing_at(kFakeCublasEfficiency, m, n, k); }

}  // namespace cks::worker::fake
