// A loaded Dataset as one binary file: the corpus cache keeps one beside its entry, so that
// `cks train` and `cks eval` read the features and labels back instead of scanning 5 M rows and
// computing phi again (docs/registry.md, "Corpus cache").
//
// Layout (native byte order, no padding between fields):
//   "CKSDATA2"  u64 feature-schema hash  u64 feature count   ("CKSDATA1" files, without run_rows, are recomputed)
//   string hw_preset
//   u64 skipped_unknown, skipped_groups, run_normalized_groups, run_normalized_rows
//   u64 groups; per group: string key, string set, i64 m, n, k, u8 layout, u64 begin, end, f64 cublas
//   u64 rows, u64 cols; f32 x[rows * cols]; Candidate candidates[rows]; f64 tflops[rows], sigma[rows];
//   f32 y[rows], relevance[rows]; i32 grade[rows]; u32 run_rows[rows]
//   "CKSEND01"
// Strings are u64 length + bytes. A file that does not read back whole is ignored (recomputed).
#include <cstring>
#include <fstream>
#include <type_traits>

#include "cks/files.hpp"
#include "cks/models.hpp"

namespace cks {

namespace {

constexpr char kMagic[8] = {'C', 'K', 'S', 'D', 'A', 'T', 'A', '2'};  // 2: run_rows (session 28)
constexpr char kEnd[8] = {'C', 'K', 'S', 'E', 'N', 'D', '0', '1'};

static_assert(std::is_trivially_copyable_v<Candidate>);

class Writer {
 public:
  explicit Writer(AtomicOutput& out) : out_(out) {}
  void bytes(const void* p, size_t n) {
    const char* c = static_cast<const char*>(p);
    buf_.append(c, n);
    if (buf_.size() >= (1u << 24)) flush();
  }
  template <class T>
  void pod(const T& v) {
    bytes(&v, sizeof v);
  }
  void u64(uint64_t v) { pod(v); }
  void str(const std::string& s) {
    u64(s.size());
    bytes(s.data(), s.size());
  }
  template <class T>
  void vec(const std::vector<T>& v) {
    bytes(v.data(), v.size() * sizeof(T));
  }
  void flush() {
    out_.write(buf_);
    buf_.clear();
  }

 private:
  AtomicOutput& out_;
  std::string buf_;
};

class Reader {
 public:
  explicit Reader(std::ifstream& in) : in_(in) {}
  bool bytes(void* p, size_t n) { return static_cast<bool>(in_.read(static_cast<char*>(p), static_cast<std::streamsize>(n))); }
  template <class T>
  bool pod(T& v) {
    return bytes(&v, sizeof v);
  }
  bool u64(uint64_t& v) { return pod(v); }
  bool str(std::string& s) {
    uint64_t n = 0;
    if (!u64(n) || n > (1u << 20)) return false;
    s.resize(n);
    return bytes(s.data(), n);
  }
  template <class T>
  bool vec(std::vector<T>& v, size_t n) {
    v.resize(n);
    return bytes(v.data(), n * sizeof(T));
  }

 private:
  std::ifstream& in_;
};

}  // namespace

std::string dataset_fingerprint(const HardwareDesc& h, const DatasetOptions& o) {
  char buf[512];
  std::snprintf(buf, sizeof buf, "%s|%s|%d.%d|%d|%d|%ld|%ld|%ld|%d|%d|%d|%d|%d|%a|%a|%a|%a|%a|%d|%a|%a|%s",
                h.preset.c_str(), h.name.c_str(), h.cc_major, h.cc_minor, h.sm_count, h.sm_clock_mhz,
                h.smem_per_sm_bytes, h.smem_per_block_optin_bytes, h.regs_per_sm, h.regs_per_thread_max,
                h.max_threads_per_sm, h.max_blocks_per_sm, h.max_cluster_size_portable, h.max_cluster_size_nonportable,
                h.l2_bytes, h.hbm_bytes, h.hbm_bw_bytes_per_s, h.bf16_dense_flops_per_s, h.tma_bw_bytes_per_s,
                static_cast<int>(o.run_normalize), o.dead_band, o.max_factor, FeatureSchema::get().hash_hex().c_str());
  // The offset mode joins the key only when on, so the keys of every earlier cache stay valid.
  return hex64(fnv1a64(std::string(buf) + (o.run_normalize && o.run_offset ? "|run-offset" : "")));
}

void write_dataset_file(const Dataset& d, const std::string& path) {
  AtomicOutput out(path);
  Writer w(out);
  w.bytes(kMagic, sizeof kMagic);
  w.u64(FeatureSchema::get().hash());
  w.u64(FeatureSchema::get().size());
  w.str(d.hw_preset);
  for (size_t v : {d.skipped_unknown, d.skipped_groups, d.run_normalized_groups, d.run_normalized_rows}) w.u64(v);
  w.u64(d.groups.size());
  for (const DataGroup& g : d.groups) {
    w.str(g.key);
    w.str(g.set);
    w.pod(static_cast<int64_t>(g.problem.m));
    w.pod(static_cast<int64_t>(g.problem.n));
    w.pod(static_cast<int64_t>(g.problem.k));
    w.pod(static_cast<uint8_t>(g.problem.layout));
    w.u64(g.begin);
    w.u64(g.end);
    w.pod(g.cublas_tflops);
  }
  const size_t rows = d.rows();
  if (d.x.rows != rows || d.x.data.size() != rows * d.x.cols || d.candidates.size() != rows ||
      d.sigma.size() != rows || d.y.size() != rows || d.relevance.size() != rows || d.grade.size() != rows ||
      d.run_rows.size() != rows)
    throw std::logic_error("write_dataset_file: inconsistent data set");
  w.u64(rows);
  w.u64(d.x.cols);
  w.vec(d.x.data);
  w.vec(d.candidates);
  w.vec(d.tflops);
  w.vec(d.sigma);
  w.vec(d.y);
  w.vec(d.relevance);
  w.vec(d.grade);
  w.vec(d.run_rows);
  w.bytes(kEnd, sizeof kEnd);
  w.flush();
  out.commit();
}

std::optional<Dataset> read_dataset_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  Reader r(in);
  char magic[8];
  uint64_t schema = 0, features = 0, v = 0;
  if (!r.bytes(magic, 8) || std::memcmp(magic, kMagic, 8) != 0) return std::nullopt;
  if (!r.u64(schema) || schema != FeatureSchema::get().hash()) return std::nullopt;
  if (!r.u64(features) || features != FeatureSchema::get().size()) return std::nullopt;
  Dataset d;
  if (!r.str(d.hw_preset)) return std::nullopt;
  for (size_t* field : {&d.skipped_unknown, &d.skipped_groups, &d.run_normalized_groups, &d.run_normalized_rows}) {
    if (!r.u64(v)) return std::nullopt;
    *field = v;
  }
  uint64_t groups = 0;
  if (!r.u64(groups) || groups > (1u << 28)) return std::nullopt;
  d.groups.resize(groups);
  for (DataGroup& g : d.groups) {
    int64_t m = 0, n = 0, k = 0;
    uint8_t layout = 0;
    uint64_t begin = 0, end = 0;
    if (!r.str(g.key) || !r.str(g.set) || !r.pod(m) || !r.pod(n) || !r.pod(k) || !r.pod(layout) || !r.u64(begin) ||
        !r.u64(end) || !r.pod(g.cublas_tflops) || layout > static_cast<uint8_t>(Layout::tt) || begin > end)
      return std::nullopt;
    g.problem = Problem{static_cast<long>(m), static_cast<long>(n), static_cast<long>(k), static_cast<Layout>(layout)};
    g.begin = begin;
    g.end = end;
  }
  uint64_t rows = 0, cols = 0;
  if (!r.u64(rows) || !r.u64(cols) || cols != features || rows > (1ull << 36)) return std::nullopt;
  if (!d.groups.empty() && d.groups.back().end != rows) return std::nullopt;
  d.x.rows = rows;
  d.x.cols = cols;
  if (!r.vec(d.x.data, rows * cols) || !r.vec(d.candidates, rows) || !r.vec(d.tflops, rows) || !r.vec(d.sigma, rows) ||
      !r.vec(d.y, rows) || !r.vec(d.relevance, rows) || !r.vec(d.grade, rows) || !r.vec(d.run_rows, rows))
    return std::nullopt;
  char end[8];
  if (!r.bytes(end, 8) || std::memcmp(end, kEnd, 8) != 0 || in.peek() != std::char_traits<char>::eof())
    return std::nullopt;
  return d;
}

}  // namespace cks
