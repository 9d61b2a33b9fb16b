// Native XGBoost tree-ensemble inference (semantics and layout in tree_ensemble.hpp).
#include "models/tree_ensemble.hpp"

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <nlohmann/json.hpp>

#include "cks/common.hpp"
#include "common/cache_file.hpp"
#include "common/json_limits.hpp"

namespace cks::models_detail {

namespace {

using nlohmann::json;

json parse_model(std::string_view bytes) {
  // XGBoost's two formats: UBJSON (what cks stores) or JSON text. Both start with '{'; JSON text
  // continues with whitespace or '"', UBJSON with a length marker.
  size_t i = 1;
  while (i < bytes.size() && (bytes[i] == ' ' || bytes[i] == '\n' || bytes[i] == '\r' || bytes[i] == '\t')) ++i;
  const bool text = !bytes.empty() && bytes[0] == '{' && (i >= bytes.size() || bytes[i] == '"' || bytes[i] == '}');
  try {
    return text ? parse_json_limited(bytes, "XGBoost booster") : parse_ubjson_limited(bytes, "XGBoost booster");
  } catch (const Error& e) {
    throw Error(std::string("XGBoost model: cannot parse the booster (") + e.what() + ")");
  }
}

// XGBoost writes numbers of its parameters as strings ("5E-1"; XGBoost 2 as "[5E-1]").
float param_float(const json& j) {
  std::string s = j.is_string() ? j.get<std::string>() : j.dump();
  s.erase(std::remove_if(s.begin(), s.end(), [](char c) { return c == '[' || c == ']'; }), s.end());
  char* end = nullptr;
  const float v = std::strtof(s.c_str(), &end);
  if (end == s.c_str()) throw Error("XGBoost model: cannot read the number '" + s + "'");
  return v;
}
long param_long(const json& j, long fallback) {
  if (j.is_null()) return fallback;
  return static_cast<long>(param_float(j));
}

template <typename T>
std::vector<T> array_of(const json& tree, const char* key, bool required = true) {
  const auto it = tree.find(key);
  if (it == tree.end()) {
    if (required) throw Error(std::string("XGBoost model: a tree lacks '") + key + "'");
    return {};
  }
  std::vector<T> out;
  out.reserve(it->size());
  for (const json& v : *it) {
    if (v.is_null()) {
      out.push_back(std::numeric_limits<T>::has_quiet_NaN ? std::numeric_limits<T>::quiet_NaN() : T{});
    } else {
      out.push_back(v.get<T>());
    }
  }
  return out;
}

// Objectives whose prediction is the raw margin (identity link).
bool identity_link(const std::string& objective) {
  return objective.rfind("rank:", 0) == 0 || objective == "reg:squarederror" || objective == "reg:linear" ||
         objective == "reg:absoluteerror" || objective == "reg:pseudohubererror";
}

}  // namespace

TreeEnsemble TreeEnsemble::from_xgboost(std::string_view model_bytes, const std::vector<uint32_t>& columns) {
  const json root = parse_model(model_bytes);
  TreeEnsemble e;
  try {
    const json& learner = root.at("learner");
    const json& param = learner.at("learner_model_param");
    e.base_score_ = param_float(param.at("base_score"));
    e.features_ = static_cast<size_t>(param_long(param.value("num_feature", json()), 0));
    if (!columns.empty()) {
      if (e.features_ && e.features_ != columns.size())
        throw Error("XGBoost model: the booster has " + std::to_string(e.features_) + " features but " +
                    std::to_string(columns.size()) + " columns are mapped");
      e.features_ = *std::max_element(columns.begin(), columns.end()) + size_t{1};
    }
    // The row column of booster feature f.
    auto column_of = [&](int64_t f) -> int64_t {
      if (columns.empty()) return f;
      if (f < 0 || static_cast<size_t>(f) >= columns.size()) throw Error("XGBoost model: split feature index out of range");
      return columns[static_cast<size_t>(f)];
    };
    if (param_long(param.value("num_class", json()), 0) > 1 || param_long(param.value("num_target", json()), 1) > 1)
      throw Error("XGBoost model: several outputs (num_class / num_target > 1) are not supported");
    e.objective_ = learner.at("objective").at("name").get<std::string>();
    if (!identity_link(e.objective_))
      throw Error("XGBoost model: objective '" + e.objective_ +
                  "' has a link function; native inference supports "
                  "identity-link objectives (rank:*, reg:squarederror)");
    const json& booster = learner.at("gradient_booster");
    const std::string name = booster.at("name").get<std::string>();
    if (name != "gbtree") throw Error("XGBoost model: booster '" + name + "' is not supported (gbtree only)");
    const json& model = booster.at("model");
    const json& trees = model.at("trees");
    const long declared = param_long(model.at("gbtree_model_param").value("num_trees", json()), -1);
    if (declared >= 0 && static_cast<size_t>(declared) != trees.size())
      throw Error("XGBoost model: num_trees disagrees with the trees stored");
    if (model.contains("tree_info"))
      for (const json& g : model.at("tree_info"))
        if (g.get<long>() != 0) throw Error("XGBoost model: several output groups are not supported");

    std::vector<uint32_t> categorical;  // nodes that split on a categorical indicator column
    for (const json& tree : trees) {
      const auto left = array_of<int32_t>(tree, "left_children");
      const auto right = array_of<int32_t>(tree, "right_children");
      auto feature = array_of<int64_t>(tree, "split_indices");
      for (size_t i = 0; i < feature.size() && i < left.size(); ++i)
        if (left[i] >= 0) feature[i] = column_of(feature[i]);
      const auto cond = array_of<float>(tree, "split_conditions");
      const auto default_left = array_of<int32_t>(tree, "default_left");
      const auto split_type = array_of<int32_t>(tree, "split_type", false);
      const auto cat_nodes = array_of<int32_t>(tree, "categories_nodes", false);
      const auto cat_segments = array_of<int64_t>(tree, "categories_segments", false);
      const auto cat_sizes = array_of<int64_t>(tree, "categories_sizes", false);
      const auto categories = array_of<int64_t>(tree, "categories", false);
      const size_t n = left.size();
      if (n == 0 || right.size() != n || feature.size() != n || cond.size() != n || default_left.size() != n ||
          (!split_type.empty() && split_type.size() != n) || cat_segments.size() != cat_nodes.size() ||
          cat_sizes.size() != cat_nodes.size())
        throw Error("XGBoost model: inconsistent tree arrays");
      if (const auto lv = tree.find("tree_param");
          lv != tree.end() && param_long(lv->value("size_leaf_vector", json()), 0) > 1)
        throw Error("XGBoost model: vector leaves are not supported");

      // Categorical sets of this tree, keyed by the old node index.
      std::vector<int> cat_index(n, -1);
      for (size_t c = 0; c < cat_nodes.size(); ++c) {
        if (cat_nodes[c] < 0 || static_cast<size_t>(cat_nodes[c]) >= n)
          throw Error("XGBoost model: bad categorical node");
        cat_index[cat_nodes[c]] = static_cast<int>(c);
      }

      // Breadth-first renumbering: the children of a split get two adjacent new indices.
      const auto base = static_cast<uint32_t>(e.nodes_.size());
      std::vector<int32_t> order{0};  // old index of new node i
      std::vector<uint8_t> depth_of{0};
      std::vector<uint32_t> new_left(n, 0);
      for (size_t i = 0; i < order.size(); ++i) {
        const int32_t old = order[i];
        if (left[old] < 0) continue;
        if (left[old] >= static_cast<int32_t>(n) || right[old] < 0 || right[old] >= static_cast<int32_t>(n) ||
            order.size() + 2 > n)
          throw Error("XGBoost model: bad child index");
        new_left[old] = base + static_cast<uint32_t>(order.size());
        order.push_back(left[old]);
        order.push_back(right[old]);
        const auto d = static_cast<uint8_t>(std::min(255, depth_of[i] + 1));
        depth_of.push_back(d);
        depth_of.push_back(d);
      }
      uint8_t depth = 0;
      for (size_t i = 0; i < order.size(); ++i) {
        const int32_t old = order[i];
        const uint32_t self = base + static_cast<uint32_t>(i);
        if (left[old] < 0) {
          // Leaf: a self loop that always goes left (x >= +inf is false; missing: default left).
          e.nodes_.push_back({std::numeric_limits<float>::infinity(), self, 0});
          e.leaf_.push_back(cond[old]);
          depth = std::max(depth, depth_of[i]);
          continue;
        }
        if (feature[old] < 0 || feature[old] > 65535 ||
            (e.features_ && static_cast<size_t>(feature[old]) >= e.features_))
          throw Error("XGBoost model: split feature index out of range");
        Node nd{0, new_left[old], default_left[old] ? 0u : kDefaultRight};
        e.leaf_.push_back(0);
        if (!split_type.empty() && split_type[old] == 1) {
          const int c = cat_index[old];
          if (c < 0) throw Error("XGBoost model: categorical split without categories");
          // The set's bit field (XGBoost's CatBitField: bit c % 32 of word c / 32).
          std::vector<uint32_t> bits;
          for (int64_t j = 0; j < cat_sizes[c]; ++j) {
            const int64_t at = cat_segments[c] + j;
            if (at < 0 || static_cast<size_t>(at) >= categories.size() || categories[at] < 0 ||
                categories[at] >= (int64_t{1} << 24))
              throw Error("XGBoost model: bad categorical set");
            const auto v = static_cast<uint32_t>(categories[at]);
            if (bits.size() <= v / 32) bits.resize(v / 32 + 1, 0);
            bits[v / 32] |= 1u << (v % 32);
          }
          // One indicator column per distinct (feature, set).
          size_t col = 0;
          for (; col < e.cat_columns_.size(); ++col) {
            const CatColumn& cc = e.cat_columns_[col];
            if (cc.feature == static_cast<uint32_t>(feature[old]) && cc.words == bits.size() &&
                std::equal(bits.begin(), bits.end(), e.cat_bits_.begin() + cc.begin))
              break;
          }
          if (col == e.cat_columns_.size()) {
            e.cat_columns_.push_back({static_cast<uint32_t>(feature[old]), static_cast<uint32_t>(e.cat_bits_.size()),
                                      static_cast<uint32_t>(bits.size()), bits.size() == 1 ? bits[0] : 0u});
            e.cat_bits_.insert(e.cat_bits_.end(), bits.begin(), bits.end());
          }
          nd.split |= static_cast<uint32_t>(col);  // offset by features_ below
          nd.cond = 0.5f;
          categorical.push_back(self);
        } else {
          nd.split |= static_cast<uint32_t>(feature[old]);
          nd.cond = cond[old];
        }
        e.nodes_.push_back(nd);
      }
      e.roots_.push_back(base);
      e.depth_.push_back(depth);
    }
    if (!e.features_)
      for (size_t i = 0; i < e.nodes_.size(); ++i)
        if (e.nodes_[i].left != i &&
            !std::binary_search(categorical.begin(), categorical.end(), static_cast<uint32_t>(i)))
          e.features_ = std::max<size_t>(e.features_, (e.nodes_[i].split & kColumnMask) + 1u);
    for (const CatColumn& cc : e.cat_columns_) e.features_ = std::max<size_t>(e.features_, cc.feature + 1u);
    if (e.features_ + e.cat_columns_.size() > 65536) throw Error("XGBoost model: too many features");
    for (uint32_t node : categorical) e.nodes_[node].split += static_cast<uint32_t>(e.features_);
  } catch (const json::exception& ex) {
    throw Error(std::string("XGBoost model: unexpected booster structure (") + ex.what() + ")");
  }
  e.compile();
  return e;
}

void TreeEnsemble::write(BinaryWriter& w) const {
  w.vec(nodes_);
  w.vec(leaf_);
  w.vec(roots_);
  w.vec(depth_);
  w.vec(cat_columns_);
  w.vec(cat_bits_);
  w.pod(base_score_);
  w.u64(features_);
  w.str(objective_);
}

TreeEnsemble TreeEnsemble::read(BinaryReader& r) {
  TreeEnsemble e;
  e.nodes_ = r.vec<Node>();
  e.leaf_ = r.vec<float>();
  e.roots_ = r.vec<uint32_t>();
  e.depth_ = r.vec<uint8_t>();
  e.cat_columns_ = r.vec<CatColumn>();
  e.cat_bits_ = r.vec<uint32_t>();
  e.base_score_ = r.pod<float>();
  e.features_ = r.u64();
  e.objective_ = r.str();
  // What the walk relies on: a leaf loops on itself and never goes right (cond +inf, no default
  // right); a split's children (left, left + 1) and its column are inside the arrays.
  auto bad = [] { return CacheCorrupt("cache entry: inconsistent tree ensemble"); };
  const size_t n = e.nodes_.size();
  if (e.leaf_.size() != n || e.depth_.size() != e.roots_.size() || e.features_ + e.cat_columns_.size() > 65536) throw bad();
  for (size_t i = 0; i < n; ++i) {
    const Node& nd = e.nodes_[i];
    if (nd.left == i) {
      if (nd.split != 0 || !(nd.cond == std::numeric_limits<float>::infinity())) throw bad();
    } else if (nd.left >= n - 1 || (nd.split & ~(kColumnMask | kDefaultRight)) != 0 ||
               (nd.split & kColumnMask) >= e.row_width()) {
      throw bad();
    }
  }
  for (uint32_t root : e.roots_)
    if (root >= n) throw bad();
  for (const CatColumn& cc : e.cat_columns_)
    if (cc.feature >= e.features_ || cc.begin > e.cat_bits_.size() || cc.words > e.cat_bits_.size() - cc.begin ||
        (cc.words == 1 && cc.mask != e.cat_bits_[cc.begin]))
      throw bad();
  e.compile();
  return e;
}

bool TreeEnsemble::fill_row(const float* in, size_t cols, float* out) const {
  // Non-finite cells (NaN, +-inf) become NaN, the missing value; counted without a branch.
  uint32_t non_finite = 0;
  for (size_t c = 0; c < features_; ++c) {
    const float v = in[c];
    const bool finite = std::fabs(v) <= FLT_MAX;
    non_finite += !finite;
    out[c] = finite ? v : std::numeric_limits<float>::quiet_NaN();
  }
  float* cat = out + features_;
  for (const CatColumn& cc : cat_columns_) {
    const float v = out[cc.feature];
    // XGBoost's Decision(): invalid categories (negative, >= 2^24) and categories beyond the
    // bit field are "not chosen" (left); a chosen category goes right. The category is the
    // value truncated to an integer. Small sets (one word) without a branch.
    float chosen;
    if (cc.words == 1) {
      const bool valid = v >= 0.0f && v < 32.0f;  // false for NaN
      const uint32_t c = valid ? static_cast<uint32_t>(v) : 0u;
      chosen = static_cast<float>(valid & ((cc.mask >> c) & 1u));
    } else {
      bool in_set = false;
      if (v >= 0 && v < 16777216.0f) {
        const auto c = static_cast<uint32_t>(v);
        in_set = c / 32 < cc.words && ((cat_bits_[cc.begin + c / 32] >> (c % 32)) & 1u);
      }
      chosen = in_set ? 1.0f : 0.0f;
    }
    *cat++ = v != v ? v : chosen;
  }
  return non_finite != 0;
}

void TreeEnsemble::compile() {
  compiled_ = false;
  pnodes_.clear();
  pleaves_.clear();
  ptrees_.clear();
  for (uint8_t d : depth_)
    if (d > kMaxCompiledDepth) return;
  size_t total_nodes = 0, total_leaves = 0;
  for (uint8_t d : depth_) {
    total_nodes += (size_t{1} << d) - 1;
    total_leaves += size_t{1} << d;
  }
  if (total_nodes >= UINT32_MAX || total_leaves >= UINT32_MAX) return;
  pnodes_.assign(total_nodes, PNode{std::numeric_limits<float>::infinity(), 0, 0});
  pleaves_.assign(total_leaves, 0.0f);
  ptrees_.resize(roots_.size());
  uint32_t next_node = 0, next_leaf = 0;
  for (size_t t = 0; t < roots_.size(); ++t) {
    PTree& pt = ptrees_[t];
    pt = {next_node, next_leaf, depth_[t]};
    const uint32_t inner = (1u << pt.depth) - 1;
    next_node += inner;
    next_leaf += inner + 1;
    // (old node, heap index, depth): a split is copied; a leaf above the bottom stays "always
    // left" and its value fills every leaf slot below it.
    auto place = [&](auto&& self, uint32_t old, uint32_t h, uint32_t d) -> void {
      const Node& nd = nodes_[old];
      if (d == pt.depth) {
        pleaves_[pt.leaves + h - inner] = leaf_[old];
        return;
      }
      if (nd.left == old) {
        self(self, old, 2 * h + 1, d + 1);
        self(self, old, 2 * h + 2, d + 1);
        return;
      }
      pnodes_[pt.nodes + h] = {nd.cond, static_cast<uint16_t>(nd.split & kColumnMask), static_cast<uint16_t>(nd.split >> 31)};
      self(self, nd.left, 2 * h + 1, d + 1);
      self(self, nd.left + 1, 2 * h + 2, d + 1);
    };
    place(place, roots_[t], 0, 0);
  }
  compiled_ = true;
}

// R rows (row r at rows + r * S, or r * stride) walk each tree in lockstep; acc[r] += the leaf of
// every tree, in tree order (XGBoost's summation order). Right iff x >= cond, or, for a missing x,
// iff the node's default is right; "always left" nodes (+inf, default left) go left for any row,
// since a block holds no infinity (fill_row makes them missing).
template <int R, size_t S, bool kMissing, bool kStore>
void TreeEnsemble::walk_compiled(const float* rows, size_t stride, float* acc, size_t tree_begin, size_t tree_end,
                                 size_t store_stride) const {
  for (size_t t = tree_begin; t < tree_end; ++t) {
    const PTree& pt = ptrees_[t];
    const PNode* nodes = pnodes_.data() + pt.nodes;
    uint32_t idx[R];
    for (int r = 0; r < R; ++r) idx[r] = 0;
    for (uint32_t d = 0; d < pt.depth; ++d) {
#pragma GCC unroll 16
      for (int r = 0; r < R; ++r) {
        const PNode& nd = nodes[idx[r]];
        const float v = rows[r * (S ? S : stride) + nd.column];
        if constexpr (kMissing) {
          idx[r] = 2 * idx[r] + 1 + ((v >= nd.cond) | ((v != v) & nd.default_right));
        } else {
          idx[r] = 2 * idx[r] + 1 + (v >= nd.cond);
        }
      }
    }
    const float* leaves = pleaves_.data() + pt.leaves;
    const uint32_t inner = (1u << pt.depth) - 1;
    if constexpr (kStore) {
      for (int r = 0; r < R; ++r) acc[r * store_stride + (t - tree_begin)] = leaves[idx[r] - inner];
    } else {
      for (int r = 0; r < R; ++r) acc[r] += leaves[idx[r] - inner];
    }
  }
}

// R rows (row r at rows + r * stride) walk each tree in lockstep (independent load chains
// overlap); acc[r] += the leaf of every tree, in tree order (XGBoost's summation order).
template <int R, bool kMissing>
void TreeEnsemble::walk(const float* rows, size_t stride, float* acc, size_t tree_begin, size_t tree_end) const {
  const Node* nodes = nodes_.data();
  for (size_t t = tree_begin; t < tree_end; ++t) {
    uint32_t idx[R];
    for (int r = 0; r < R; ++r) idx[r] = roots_[t];
    for (int d = depth_[t]; d > 0; --d) {
#pragma GCC unroll 16
      for (int r = 0; r < R; ++r) {
        const Node& nd = nodes[idx[r]];
        const float v = rows[r * stride + (nd.split & kColumnMask)];
        if constexpr (kMissing) {
          idx[r] = nd.left + ((v >= nd.cond) | ((v != v) & (nd.split >> 31)));
        } else {
          idx[r] = nd.left + (v >= nd.cond);
        }
      }
    }
    for (int r = 0; r < R; ++r) acc[r] += leaf_[idx[r]];
  }
}

void TreeEnsemble::predict(const float* rows, size_t n, size_t cols, float* out) const {
  std::fill(out, out + n, base_score_);
  add_trees(rows, n, cols, out, 0, trees());
}

void TreeEnsemble::add_trees(const float* rows, size_t n, size_t cols, float* out, size_t tree_begin,
                             size_t tree_end) const {
  if (!compiled_) {
    add_trees_reference(rows, n, cols, out, tree_begin, tree_end);
  } else if (row_width() <= kStride) {
    run_compiled<kStride, false>(rows, n, cols, out, tree_begin, tree_end);
  } else {
    run_compiled<0, false>(rows, n, cols, out, tree_begin, tree_end);
  }
}

void TreeEnsemble::tree_leaves(const float* rows, size_t n, size_t cols, float* out, size_t tree_begin,
                               size_t tree_end) const {
  if (!compiled_) throw Error("XGBoost model: per-tree leaves need the compiled walk");
  if (row_width() <= kStride) {
    run_compiled<kStride, true>(rows, n, cols, out, tree_begin, tree_end);
  } else {
    run_compiled<0, true>(rows, n, cols, out, tree_begin, tree_end);
  }
}

template <size_t S, bool kStore>
void TreeEnsemble::run_compiled(const float* rows, size_t n, size_t cols, float* out, size_t tree_begin,
                                size_t tree_end) const {
  if (n && cols < features_) throw Error("XGBoost model: rows have fewer columns than the booster's features");
  tree_end = std::min(tree_end, trees());
  if (tree_begin >= tree_end || n == 0) return;
  // kStore: out holds n rows of (tree_end - tree_begin) leaves; otherwise n scores, accumulated.
  const size_t trees_out = kStore ? tree_end - tree_begin : 1;
  // Rows go in groups of up to kGroupBlocks blocks of kLanes rows (they stay in L1/L2); each
  // chunk of kChunkTrees trees is walked by every block of the group before the next chunk, so
  // that the chunk's nodes stay in cache across the blocks (measured best on the shipped model:
  // docs/models.md, "Start-up and cold selection").
  constexpr int kLanes = 16;
  constexpr size_t kGroupBlocks = 8, kChunkTrees = 8;
  const size_t stride = S ? S : row_width();
  thread_local std::vector<float> block, acc;
  thread_local std::vector<uint8_t> missing;
  for (size_t g = 0; g < n; g += kGroupBlocks * kLanes) {
    const size_t rows_in_group = std::min(n - g, kGroupBlocks * kLanes);
    const size_t blocks = (rows_in_group + kLanes - 1) / kLanes;
    block.resize(blocks * kLanes * stride);
    acc.resize(blocks * kLanes * trees_out);
    missing.assign(blocks, 0);
    // A short last block repeats its last row in the unused lanes.
    for (size_t i = 0; i < blocks * kLanes; ++i) {
      const size_t row = g + std::min(i, rows_in_group - 1);
      missing[i / kLanes] |= fill_row(rows + row * cols, cols, &block[i * stride]);
      if constexpr (!kStore) acc[i] = out[row];
    }
    for (size_t t = tree_begin; t < tree_end; t += kChunkTrees) {
      const size_t t_end = std::min(tree_end, t + kChunkTrees);
      for (size_t b = 0; b < blocks; ++b) {
        const float* rows_b = &block[b * kLanes * stride];
        // kStore: the block's lanes write their rows of acc from column t - tree_begin on.
        float* acc_b = kStore ? &acc[b * kLanes * trees_out + (t - tree_begin)] : &acc[b * kLanes];
        if (missing[b]) {
          walk_compiled<kLanes, S, true, kStore>(rows_b, stride, acc_b, t, t_end, trees_out);
        } else {
          walk_compiled<kLanes, S, false, kStore>(rows_b, stride, acc_b, t, t_end, trees_out);
        }
      }
    }
    std::copy(acc.begin(), acc.begin() + static_cast<std::ptrdiff_t>(rows_in_group * trees_out), out + g * trees_out);
  }
}

void TreeEnsemble::add_trees_reference(const float* rows, size_t n, size_t cols, float* out, size_t tree_begin,
                                       size_t tree_end) const {
  if (n && cols < features_) throw Error("XGBoost model: rows have fewer columns than the booster's features");
  tree_end = std::min(tree_end, trees());
  if (tree_begin >= tree_end) return;
  constexpr int kLanes = 16;
  const size_t width = row_width();
  thread_local std::vector<float> block;
  block.resize(kLanes * width);
  for (size_t r = 0; r < n; r += kLanes) {
    const size_t lanes = std::min<size_t>(kLanes, n - r);
    // A short last block repeats its last row in the unused lanes.
    bool missing = false;
    for (size_t i = 0; i < kLanes; ++i)
      missing |= fill_row(rows + (r + std::min(i, lanes - 1)) * cols, cols, &block[i * width]);
    float acc[kLanes];
    for (size_t i = 0; i < kLanes; ++i) acc[i] = out[r + std::min(i, lanes - 1)];
    if (missing) {
      walk<kLanes, true>(block.data(), width, acc, tree_begin, tree_end);
    } else {
      walk<kLanes, false>(block.data(), width, acc, tree_begin, tree_end);
    }
    std::copy(acc, acc + lanes, out + r);
  }
}

}  // namespace cks::models_detail
