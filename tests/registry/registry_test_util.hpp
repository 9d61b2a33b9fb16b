// Helpers shared by the registry tests: scratch directories and small, fully provenanced
// registries built through the public API.
#pragma once
#include <sqlite3.h>
#include <stdlib.h>

#include <filesystem>
#include <string>
#include <vector>

#include "cks/registry.hpp"

namespace cks::test {

// A fresh directory removed (with everything in it) at scope exit.
class ScratchDir {
 public:
  ScratchDir() {
    std::string tmpl = (std::filesystem::temp_directory_path() / "cks-registry-test-XXXXXX").string();
    if (!mkdtemp(tmpl.data())) throw std::runtime_error("mkdtemp failed");
    path_ = tmpl;
  }
  ~ScratchDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;
  std::string file(const std::string& name) const { return (std::filesystem::path(path_) / name).string(); }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// Distinct valid descriptors (only the id/canonical round trip matters here).
inline KernelDesc test_kernel(int i) {
  KernelDesc d;
  d.tn = 64 * (1 + i % 4);
  d.stages = i / 4;
  return d;
}

inline RunInfo test_run(const std::string& gpu = "NVIDIA H200") {
  RunInfo r;
  r.gpu_name = gpu;
  r.gpu_uuid = "GPU-0000";
  r.driver_version = "580.65";
  r.cuda_version = "13.0";
  r.cublas_version = "13.0.0";
  r.cutlass_version = "4.2.0";
  r.git_sha = "0123abcd";
  r.command = "cks collect";
  return r;
}

inline GroupInfo test_group(long m, long n, long k, const std::string& set = "train", Layout l = Layout::tn) {
  GroupInfo g;
  g.m = m;
  g.n = n;
  g.k = k;
  g.layout = l;
  g.set = set;
  g.policy = "biased_diverse";
  g.budget = 16;
  g.seed = 7;
  return g;
}

inline MeasurementRow test_row(const std::string& run, const std::string& group, const std::string& kernel,
                               const std::string& status, double mean_us = 10.0) {
  MeasurementRow m;
  m.run_uuid = run;
  m.group_key = group;
  m.kernel_id = kernel;
  m.knobs = kernel == "cublas" ? "" : RuntimeKnobs{}.canonical();
  m.status = status;
  m.mean_us = mean_us;
  m.std_us = 0.1;
  m.n = 15;
  m.tflops = 123.0;
  m.sm_clock_mhz = 1980;
  m.mem_clock_mhz = 3201;
  m.started_at = utc_now();
  m.worker = "gpu0";
  return m;
}

inline KernelCompileRow test_compile(const KernelDesc& d, const std::string& status = "ok") {
  KernelCompileRow k;
  k.kernel_id = d.id();
  k.canonical = d.canonical();
  k.status = status;
  k.error = status == "ok" ? "" : "ptxas error";
  k.lib_hash = "deadbeef";
  k.index = 0;
  k.registers = 168;
  k.compile_seconds = 12.5;
  return k;
}

// One scalar from raw SQL on a file (independent of the Registry class under test).
inline std::string sql_text(const std::string& path, const std::string& sql) {
  sqlite3* db = nullptr;
  sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READONLY, nullptr);
  sqlite3_stmt* st = nullptr;
  std::string out;
  if (sqlite3_prepare_v2(db, sql.c_str(), -1, &st, nullptr) == SQLITE_OK && sqlite3_step(st) == SQLITE_ROW) {
    auto p = sqlite3_column_text(st, 0);
    out = p ? reinterpret_cast<const char*>(p) : "";
  } else {
    out = std::string("error: ") + sqlite3_errmsg(db);
  }
  sqlite3_finalize(st);
  sqlite3_close(db);
  return out;
}
inline long sql_count(const std::string& path, const std::string& table) {
  return std::stol(sql_text(path, "SELECT count(*) FROM " + table));
}

}  // namespace cks::test
