// The autotune results file (runtime/tuning.hpp).
#include "runtime/tuning.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <cstring>
#include <filesystem>

#include "cks/common.hpp"
#include "common/json_limits.hpp"

namespace cks::rt {

namespace fs = std::filesystem;

namespace {

constexpr size_t kMaxTuningBytes = size_t{64} << 20;
constexpr size_t kFields = 11;  // 12 with the optional lt_algo

int64_t parse_dim(const std::string& s, const char* name, const std::string& where) {
  size_t used = 0;
  long long v = 0;
  try {
    v = std::stoll(s, &used);
  } catch (const std::logic_error&) {
    used = 0;
  }
  if (used == 0 || used != s.size()) throw Error(where + ": bad " + name + " '" + one_line(s, 40) + "'");
  return v;
}

double parse_us(const std::string& s, const char* name, const std::string& where) {
  size_t used = 0;
  double v = 0;
  try {
    v = std::stod(s, &used);
  } catch (const std::logic_error&) {
    used = 0;
  }
  if (used == 0 || used != s.size() || !std::isfinite(v) || v <= 0)
    throw Error(where + ": " + name + " must be a positive number of microseconds (got '" + one_line(s, 40) + "')");
  return v;
}

bool is_kernel_id(const std::string& s) {
  return s.size() == 17 && s[0] == 'k' && s.find_first_not_of("0123456789abcdef", 1) == std::string::npos;
}

void write_all(int fd, const std::string& data, const std::string& path) {
  size_t done = 0;
  while (done < data.size()) {
    const ssize_t w = ::write(fd, data.data() + done, data.size() - done);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) throw Error("cannot write tuning file '" + path + "': " + std::strerror(errno));
    done += static_cast<size_t>(w);
  }
}

}  // namespace

std::string format_record(const TuningRecord& r) {
  std::string line = csv_escape(r.gpu) + "," + csv_escape(r.cks_version) + "," + csv_escape(r.model_hash) + "," +
         std::string(to_string(r.layout)) + "," + std::to_string(r.m) + "," + std::to_string(r.n) + "," +
         std::to_string(r.k) + "," + csv_escape(r.winner) + "," + csv_escape(r.knobs) + "," + format_double(r.us) +
         "," + format_double(r.cublas_us);
  if (r.lt_algo != 0) line += ',' + std::to_string(r.lt_algo);  // the optional 12th field
  return line;
}

std::vector<TuningRecord> parse_tuning(std::string_view text, const std::string& origin) {
  std::vector<TuningRecord> out;
  size_t lineno = 0, b = 0;
  while (b < text.size()) {
    size_t e = text.find('\n', b);
    if (e == std::string_view::npos) e = text.size();
    std::string_view line = text.substr(b, e - b);
    b = e + 1;
    ++lineno;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (line.find_first_not_of(" \t") == std::string_view::npos || line.front() == '#' || line == kTuningHeader) continue;
    const std::string where = origin + ":" + std::to_string(lineno);
    const auto f = csv_fields(line);
    if (f.size() != kFields && f.size() != kFields + 1)
      throw Error(where + ": " + std::to_string(f.size()) + " fields, expected " + std::to_string(kFields) + " (" +
                  kTuningHeader + ") or " + std::to_string(kFields + 1) + " (with lt_algo)");
    TuningRecord r;
    r.gpu = f[0];
    r.cks_version = f[1];
    r.model_hash = f[2];
    try {
      r.layout = parse_layout(f[3]);
      r.m = parse_dim(f[4], "m", where);
      r.n = parse_dim(f[5], "n", where);
      r.k = parse_dim(f[6], "k", where);
      check_problem(r.m, r.n, r.k, r.layout);
    } catch (const Error& err) {
      const std::string what = err.what();
      throw Error(what.rfind(where, 0) == 0 ? what : where + ": " + what);
    }
    r.winner = f[7];
    r.knobs = f[8];
    if (r.winner == kCublasWinner) {
      if (!r.knobs.empty()) throw Error(where + ": cublas takes no knobs (got '" + one_line(r.knobs, 60) + "')");
    } else if (!is_kernel_id(r.winner)) {
      throw Error(where + ": winner '" + one_line(r.winner, 60) + "' is neither cublas nor a kernel ID (k + 16 hex digits)");
    } else {
      try {
        RuntimeKnobs::from_canonical(r.knobs);
      } catch (const Error& err) {
        throw Error(where + ": " + err.what());
      }
    }
    r.us = parse_us(f[9], "us", where);
    r.cublas_us = parse_us(f[10], "cublas_us", where);
    if (f.size() > kFields) {
      const std::string& a = f[kFields];
      if (a.empty() || a.size() > 1 || a[0] < '0' || a[0] > '0' + kMaxTuningLtAlgo)
        throw Error(where + ": lt_algo must be an integer in [0, " + std::to_string(kMaxTuningLtAlgo) + "] (got '" +
                    one_line(a, 40) + "')");
      r.lt_algo = a[0] - '0';
      if (r.lt_algo != 0 && r.winner != kCublasWinner)
        throw Error(where + ": lt_algo " + a + " is a cuBLASLt algorithm, the winner is " + one_line(r.winner, 60));
    }
    if (r.gpu.empty()) throw Error(where + ": empty gpu name");
    out.push_back(std::move(r));
  }
  return out;
}

TuningTable::TuningTable(std::string path, std::string gpu, std::string cks_version, std::string model_hash)
    : path_(std::move(path)), gpu_(std::move(gpu)), cks_version_(std::move(cks_version)), model_hash_(std::move(model_hash)) {}

void TuningTable::load() {
  by_problem_.clear();
  ignored_ = 0;
  std::error_code ec;
  if (!fs::exists(path_, ec)) return;
  for (auto& r : parse_tuning(read_file_limited(path_, "tuning file", kMaxTuningBytes), path_)) {
    if (r.gpu != gpu_ || r.cks_version != cks_version_ || r.model_hash != model_hash_) {
      ++ignored_;
      continue;
    }
    by_problem_[{static_cast<int>(r.layout), r.m, r.n, r.k}] = std::move(r);
  }
}

const TuningRecord* TuningTable::find(Layout layout, int64_t m, int64_t n, int64_t k) const {
  const auto it = by_problem_.find({static_cast<int>(layout), m, n, k});
  return it == by_problem_.end() ? nullptr : &it->second;
}

void TuningTable::add(const TuningRecord& r) {
  const fs::path p(path_);
  std::error_code ec;
  if (p.has_parent_path()) fs::create_directories(p.parent_path(), ec);
  // A new file gets the header in the same write as its first record (O_EXCL decides who creates it).
  std::string data = format_record(r) + "\n";
  int fd = ::open(path_.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd >= 0) {
    data = std::string(kTuningHeader) + "\n" + data;
  } else if (errno == EEXIST) {
    fd = ::open(path_.c_str(), O_WRONLY | O_APPEND | O_CLOEXEC);
  }
  if (fd < 0) throw Error("cannot open tuning file '" + path_ + "' for appending: " + std::strerror(errno));
  try {
    write_all(fd, data, path_);
  } catch (...) {
    ::close(fd);
    throw;
  }
  ::close(fd);
  if (r.gpu == gpu_ && r.cks_version == cks_version_ && r.model_hash == model_hash_)
    by_problem_[{static_cast<int>(r.layout), r.m, r.n, r.k}] = r;
}

}  // namespace cks::rt
