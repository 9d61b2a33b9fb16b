// Kernel bundles (`cks bundle`, docs/library.md "Bundles"): the selector's picks for a list of
// problems, compiled ahead of time into kernel libraries (include/cks/kernel_lib_abi.h) that sit in
// one folder with an index:
//
//   DIR/index.json                 the BundleIndex below (JSON, schema "cks-bundle" version 1)
//   DIR/kernels/cks_<hash>.so      the libraries, named as in the executable cache
//
// The index holds, per problem (layout, M, N, K), the model's ranked picks with the library file
// and the kernel's index in it, and the kernel -> library map over every bundled kernel, so that
// any problem can run any bundled kernel. Paths in the index are relative to DIR.
#pragma once
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "cks/catalogue.hpp"

namespace cks::rt {

inline constexpr const char* kBundleSchema = "cks-bundle";
inline constexpr int kBundleSchemaVersion = 1;
inline constexpr const char* kBundleIndexFile = "index.json";
inline constexpr const char* kBundleKernelDir = "kernels";

// The order in which `cks bundle --variants V` takes each pick's knob variants (the other ranked
// knob settings of the pick's kernel) up to V:
//   model   the model's order;
//   raster  first the variants whose raster differs from the pick's and whose decomposition and
//           splits equal the pick's (the other raster, any swizzle), in the model's order; then the
//           rest in the model's order.
enum class VariantOrder { model, raster };
const char* variant_order_name(VariantOrder o);
// "model" or "raster"; throws Error "unknown variant order 'X' (expected model or raster)".
VariantOrder parse_variant_order(std::string_view name);

// One bundled kernel: where it is, or why it is not (a compile error: library empty).
struct BundleKernel {
  std::string kernel_id;
  std::string canonical;
  std::string library;  // relative to the bundle folder, e.g. "kernels/cks_0123456789abcdef.so"
  int index = -1;       // in the library
  std::string error;    // compile error (library empty)
  bool ok() const { return !library.empty(); }
  bool operator==(const BundleKernel&) const = default;
};

// One ranked candidate of a problem: a kernel and its runtime knobs, in the model's order.
struct BundlePick {
  int rank = 0;            // 1 = the model's top-1; variants carry the rank of the pick they vary
  std::string kernel_id;
  std::string knobs;       // RuntimeKnobs::canonical()
  double score = 0;
  bool variant = false;    // another knob setting of a pick's kernel (cks bundle --variants)
  bool operator==(const BundlePick&) const = default;
};

struct BundleProblem {
  Layout layout = Layout::tn;
  int64_t m = 0, n = 0, k = 0;
  std::vector<BundlePick> picks;  // ranked picks first (rank 1, 2, ...), then variants
  bool operator==(const BundleProblem&) const = default;
};

struct BundleIndex {
  int schema_version = kBundleSchemaVersion;
  std::string cks_version;
  std::string gpu_arch = "sm_90a";
  int abi_version = 0;               // CKS_KERNEL_LIB_ABI_VERSION of the libraries
  std::string cuda_version, cutlass_version;
  std::string model_path, model_hash, model_description, selector_mode;
  int top = 0;                       // picks per problem (cks bundle --top)
  int variants = 0;                  // knob variants per pick (cks bundle --variants)
  VariantOrder variant_order = VariantOrder::model;  // --variant-order ("variant_order"; absent: model)
  std::string created;               // UTC time, ISO 8601
  std::map<std::string, BundleKernel> kernels;  // by kernel ID
  std::vector<BundleProblem> problems;

  nlohmann::json to_json() const;
  // Throws Error "<origin>: ..." on a document that is not a bundle index of this schema version,
  // or is inconsistent (a pick naming a kernel the map lacks, a library path leaving the folder).
  static BundleIndex from_json(const nlohmann::json& j, const std::string& origin);
  // DIR/index.json, read with the project's input limits; checks every library file it names exists.
  static BundleIndex load(const std::string& dir);
  // Writes DIR/index.json atomically.
  void write(const std::string& dir) const;

  // The problem's entry, if the bundle holds it.
  const BundleProblem* find(Layout layout, int64_t m, int64_t n, int64_t k) const;
  // Rebuilds the lookup find() uses (from_json and load call it; after editing `problems`, call it).
  void reindex();

 private:
  std::map<std::tuple<int, int64_t, int64_t, int64_t>, size_t> by_problem_;
};

// fnv1a64 of a file's bytes as 16 hex digits: the model hash of bundles and tuning files. Throws
// Error when the file cannot be read.
std::string file_hash(const std::string& path);

}  // namespace cks::rt
