// cks/features.hpp — the hardware-aware feature map phi(p, c, h) of the paper.
//
// One frozen FeatureSchema (ordered names, numeric vs categorical, categorical level sets) is
// shared by training and deployment; models store schema().hash() and refuse a mismatch.
// Rows are float vectors in schema order; a categorical cell holds its level index. Non-finite
// values are allowed (the models map them). Definitions: docs/features.md and
// `cks features --schema`.
#pragma once
#include <cstddef>
#include <cstdint>
#include <functional>
#include <iosfwd>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "cks/catalogue.hpp"
#include "cks/common.hpp"
#include "cks/hw.hpp"

namespace cks {

enum class FeatureKind : uint8_t { numeric = 0, categorical = 1 };
std::string_view to_string(FeatureKind k);

struct FeatureSpec {
  std::string_view name;
  FeatureKind kind = FeatureKind::numeric;
  std::span<const std::string_view> levels;  // categorical level set, fixed order; empty if numeric
  std::string_view group;                    // paper feature group ("grid", "waves", ...)
  std::string_view definition;               // formula / meaning
};

class FeatureSchema {
 public:
  static const FeatureSchema& get();

  std::string_view version() const;
  // FNV-1a over the version, names, kinds and level lists (not the definition texts).
  uint64_t hash() const { return hash_; }
  std::string hash_hex() const { return hex64(hash_); }

  size_t size() const { return specs_.size(); }
  const FeatureSpec& operator[](size_t i) const { return specs_[i]; }
  const std::vector<FeatureSpec>& features() const { return specs_; }
  std::optional<size_t> find(std::string_view name) const;
  size_t index(std::string_view name) const;  // throws Error "unknown feature 'x'"
  // Level name of a categorical code; empty if the code is not a valid level index.
  std::string_view level_name(size_t feature, float code) const;

 private:
  FeatureSchema();
  std::vector<FeatureSpec> specs_;
  uint64_t hash_ = 0;
};

// A GEMM instance p = (M, N, K, layout).
struct Problem {
  long m = 0, n = 0, k = 0;
  Layout layout = Layout::tn;
};
// The dimension and alignment check of cks/catalogue.hpp (throws cks::Error).
inline void check_problem(const Problem& p) { check_problem(p.m, p.n, p.k, p.layout); }

// Row-major float matrix, rows = candidates, cols = FeatureSchema::get().size().
struct FeatureMatrix {
  size_t rows = 0, cols = 0;
  std::vector<float> data;
  void resize(size_t r, size_t c) {
    rows = r;
    cols = c;
    data.resize(r * c);
  }
  float* row(size_t r) { return data.data() + r * cols; }
  const float* row(size_t r) const { return data.data() + r * cols; }
  float at(size_t r, size_t c) const { return data[r * cols + c]; }
};

// Computes phi for many candidates of one kernel list. Problem-independent per-kernel terms
// (resources, residency, stage times) are computed once at construction; compute() then runs a
// tight per-candidate loop without allocation. Cheap to copy (shared immutable state).
class FeatureComputer {
 public:
  // Throws Error on a descriptor with non-positive tile/cluster dims or a hardware descriptor
  // without SMs.
  FeatureComputer(std::vector<KernelDesc> kernels, const HardwareDesc& hw);

  const std::vector<KernelDesc>& kernels() const;
  const HardwareDesc& hw() const;

  // out is resized to candidates.size() x schema size. Candidate::kernel indexes kernels().
  // Fastest when candidates of one kernel are contiguous (catalogue order). Throws Error on
  // non-positive dimensions, a kernel index out of range or a kernel of another layout.
  void compute(const Problem& p, std::span<const Candidate> candidates, FeatureMatrix& out) const;
  void compute_row(const Problem& p, const Candidate& c, float* out_row) const;

 private:
  struct Impl;
  std::shared_ptr<const Impl> impl_;
};

// One row (convenience; builds the per-kernel terms every call).
void compute_features(const Problem& p, const KernelDesc& k, const RuntimeKnobs& knobs, const HardwareDesc& hw,
                      float* out_row);
// Every candidate of a catalogue; the per-kernel terms are cached per (kernel list, hw).
void compute_matrix(const Problem& p, const Catalogue& cat, const HardwareDesc& hw, FeatureMatrix& out);

// Writes rows as csv/json/md: first the identifying columns `kernel_id` and `knobs`, then the
// schema columns (categoricals as level names; json writes non-finite numbers as null).
// progress, if set, is called every few thousand rows with (rows written, rows total).
struct FeatureRowKey {
  std::string kernel_id;
  std::string knobs;
};
using FeatureProgress = std::function<void(size_t done, size_t total)>;
void write_features(std::ostream& os, Format f, std::span<const FeatureRowKey> keys, const FeatureMatrix& x,
                    const FeatureProgress& progress = {});

}  // namespace cks
