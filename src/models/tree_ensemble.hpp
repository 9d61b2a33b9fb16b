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
// adjacent (right = left + 1), and a leaf points to itself and always goes left. A tree is
// then evaluated with exactly `depth` branch-free steps, and 16 rows walk each tree in lockstep
// (independent load chains overlap). Categorical splits become numeric splits on per-row
// indicator columns (see fill_row), so the walk has no special case.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

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
};

}  // namespace cks::models_detail
