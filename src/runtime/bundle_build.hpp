// `cks bundle` (runtime/bundle.hpp): rank each problem with the selector, compile the distinct
// picks with the collector's compile pool and executable cache, and lay out the bundle folder.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "cks/compile.hpp"
#include "cks/selector.hpp"
#include "cks/shapes.hpp"
#include "runtime/bundle.hpp"

namespace cks::rt {

struct BundleSpec {
  std::vector<ShapeGroup> groups;  // the problems (layout and shape; duplicates are bundled once)
  std::string out_dir;
  std::string model_path;          // "" = the shipped default model
  SelectorOptions selector;        // cks select's ranking options
  int top = 4;                     // picks per problem
  int variants = 0;                // per pick, up to this many other knob settings of its kernel
                                   // (the model's next-best ones within its top kVariantDepth)
  VariantOrder variant_order = VariantOrder::model;  // which of them first (runtime/bundle.hpp)
  CompileOptions compile;          // the pool and cache (cks build's options)
  bool cached_only = false;        // compile nothing: bundle what the cache holds, mark the rest
  double time_budget_s = 0;        // > 0: stop compiling after this long (from the start); the
                                   // kernels not compiled by then are left out, marked
  bool dry_run = false;            // rank only: no compile, nothing written
};

inline constexpr size_t kVariantDepth = 256;

struct BundleKernelPlan {
  KernelDesc desc;
  size_t problems = 0;  // problems that pick it
  int best_rank = 0;
};

struct BundleResult {
  BundleIndex index;
  std::vector<BundleKernelPlan> kernels;  // distinct kernels, in first-pick order
  size_t cached = 0, compiled = 0, failed = 0, skipped = 0;  // skipped: --cached-only misses, out of time
};

// Builds the bundle (or, dry_run, only its plan: index.problems and kernels, nothing compiled or
// written). Progress lines go to stderr. Throws Error on bad input: no problems, top < 1, a model
// that cannot be read, an output folder that holds something other than a bundle.
BundleResult build_bundle(const BundleSpec& spec);

}  // namespace cks::rt
