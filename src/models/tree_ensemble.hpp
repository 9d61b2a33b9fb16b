// Native inference of an XGBoost tree booster (Model A at deployment): the booster is parsed
// once from XGBoost's own model format (UBJSON as XGBoosterSaveModelToBuffer writes it, or
// JSON), flattened into contiguous arrays and evaluated without libxgboost, with XGBoost's
// semantics:
//   numeric split     left iff x < condition (float compare)
//   categorical split right iff the category (truncated to an integer) is in the node's set;
//                     negative, >= 2^24 or beyond the set's bit field: left (XGBoost's Decision)
//   missing           NaN, and +-inf (cks maps infinities to missing because XGBoost rejects
//                     them): the node's default child
//   score             base_score + sum of the trees' leaf values, summed in float in tree order
//                     (XGBoost's CPU predictor order), identity link (rank:*, reg:squarederror)
// Layout: per tree, nodes are renumbered breadth-first so that the children of a split are
// adjacent (right = left + 1), and a leaf points to itself and always goes left (what is parsed,
// cached and walked by add_trees_reference). Categorical splits become numeric splits on per-row
// indicator columns (see fill_row), so the walk has no special case.
// Evaluation (issue 17) uses a compiled copy: every tree padded to a perfect binary tree of its
// depth in heap order (the children of node i are 2i + 1 and 2i + 2; a leaf above the bottom
// becomes "always left" nodes, condition +inf, over copies of its value), 8 bytes per node, so a
// step of a row is a load of the node, a load of the row's value, a compare and a shift-add, and
// a tree takes 2/3 of the cache of the breadth-first nodes. 16 rows walk a tree in lockstep
// (independent load chains overlap); the rows of a block sit kStride floats apart (a constant,
// when the row fits), and every block of a group of rows walks a chunk of trees before the next
// chunk, so that the chunk stays in cache. The decisions, and the float sum of the leaves in tree
// order, are those of the reference walk bit for bit (tests/models/test_native_xgboost.cpp).
// Trees deeper than kMaxCompiledDepth (not grown by cks) leave the ensemble on the reference walk.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace cks {
class BinaryWriter;
class BinaryReader;
}  // namespace cks

namespace cks::models_detail {

class TreeEnsemble {
 public:
  // Parses an XGBoost gbtree model (UBJSON or JSON bytes). Throws Error on another booster
  // (dart, gblinear), vector leaves, several outputs or a non-identity objective.
  // `columns` (optional) maps the booster's feature f to row column columns[f]: a booster
  // trained on a subset of the schema columns (a feature set) then scores full schema rows.
  static TreeEnsemble from_xgboost(std::string_view model_bytes, const std::vector<uint32_t>& columns = {});

  // out[r] = score of row r of the row-major matrix rows[n x cols]; cols must cover every
  // feature the trees split on (checked at parse time against `features()`).
  void predict(const float* rows, size_t n, size_t cols, float* out) const;
  // out[r] += the leaves of trees [tree_begin, tree_end) (in tree order). predict() is
  // out = base_score() followed by all trees; continuing a partial sum with the remaining trees
  // gives the same bits as one full pass (the selector's cascade relies on it).
  void add_trees(const float* rows, size_t n, size_t cols, float* out, size_t tree_begin, size_t tree_end) const;
  // out[r * (tree_end - tree_begin) + (t - tree_begin)] = the leaf of tree t for row r: adding
  // them to a row's score in tree order is add_trees() bit for bit, so several threads can each
  // walk a range of the trees for the same rows (the cascade's second stage: few rows, many trees,
  // each thread streaming only its share of the nodes). Needs the compiled walk (compiled()).
  void tree_leaves(const float* rows, size_t n, size_t cols, float* out, size_t tree_begin, size_t tree_end) const;
  // The same by the walk over the breadth-first nodes (the evaluation before the compiled copy):
  // the reference the compiled walk is tested against.
  void add_trees_reference(const float* rows, size_t n, size_t cols, float* out, size_t tree_begin,
                           size_t tree_end) const;
  // Whether add_trees uses the compiled copy (every tree at most kMaxCompiledDepth deep).
  bool compiled() const { return compiled_; }
  static constexpr int kMaxCompiledDepth = 12;

  // The flattened ensemble as a cache payload (common/cache_file.hpp) and back: read() checks
  // every index and column against the arrays, so an inconsistent payload is refused
  // (CacheCorrupt) rather than walked out of bounds.
  void write(BinaryWriter& w) const;
  static TreeEnsemble read(BinaryReader& r);

  size_t trees() const { return roots_.size(); }
  size_t nodes() const { return nodes_.size(); }
  size_t features() const { return features_; }  // num_feature of the booster
  float base_score() const { return base_score_; }
  const std::string& objective() const { return objective_; }

 private:
  // Rows are copied into a block buffer of `row_width()` floats per row: the input columns with
  // +-inf replaced by NaN, then one column per distinct categorical split set (1 if the category
  // is in the set, 0 if not or invalid, NaN if missing). Every split is then numeric:
  // right = (x >= cond) | (isnan(x) & default_right), which also covers the leaves' self loops.
  struct CatColumn {
    uint32_t feature = 0;
    uint32_t begin = 0, words = 0;  // the set's bit field in cat_bits_
    uint32_t mask = 0;              // the bit field when it is one word
  };
  size_t row_width() const { return features_ + cat_columns_.size(); }
  // Returns whether the row has a missing value.
  bool fill_row(const float* in, size_t cols, float* out) const;
  // kMissing = false: no row of the block has a missing value (the common case), so the NaN test
  // is dropped from the walk.
  template <int R, bool kMissing>
  void walk(const float* rows, size_t stride, float* acc, size_t tree_begin, size_t tree_end) const;

  // Nodes of all trees (breadth-first per tree), 12 bytes each.
  struct Node {
    float cond;      // threshold (categorical: 0.5 on its indicator column); leaf: +inf
    uint32_t left;   // absolute index of the left child (right = left + 1); leaf: itself
    uint32_t split;  // feature column | kDefaultRight
  };
  static constexpr uint32_t kDefaultRight = 1u << 31, kColumnMask = 0xffffu;
  std::vector<Node> nodes_;
  std::vector<float> leaf_;      // leaf value (0 for splits)
  std::vector<uint32_t> roots_;  // per tree
  std::vector<uint8_t> depth_;   // per tree: the deepest leaf's depth
  std::vector<CatColumn> cat_columns_;
  std::vector<uint32_t> cat_bits_;
  float base_score_ = 0;
  size_t features_ = 0;
  std::string objective_;

  // The compiled copy (built by compile() from the arrays above).
  struct PNode {
    float cond;              // threshold; "always left": +inf
    uint16_t column;         // row column
    uint16_t default_right;  // 1: a missing value goes right
  };
  struct PTree {
    uint32_t nodes = 0;   // first node in pnodes_ (2^depth - 1 nodes)
    uint32_t leaves = 0;  // first leaf in pleaves_ (2^depth leaves)
    uint32_t depth = 0;
  };
  static constexpr size_t kStride = 128;  // floats per row in a block when row_width() fits
  void compile();
  // S: the rows' stride as a constant (0: `stride`). kStore: acc[r * store_stride + (t - tree_begin)]
  // = the leaf of tree t for row r, instead of acc[r] += it.
  template <int R, size_t S, bool kMissing, bool kStore>
  void walk_compiled(const float* rows, size_t stride, float* acc, size_t tree_begin, size_t tree_end,
                     size_t store_stride) const;
  // add_trees (kStore false) or tree_leaves (true) on the compiled copy.
  template <size_t S, bool kStore>
  void run_compiled(const float* rows, size_t n, size_t cols, float* out, size_t tree_begin, size_t tree_end) const;
  bool compiled_ = false;
  std::vector<PNode> pnodes_;
  std::vector<float> pleaves_;
  std::vector<PTree> ptrees_;
};

}  // namespace cks::models_detail
