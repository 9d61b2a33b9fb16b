// The problem check shared by every boundary (cks/catalogue.hpp: dimensions and alignment).
#include <string>
#include <utility>
#include <vector>

#include "cks/catalogue.hpp"
#include "cks/common.hpp"

namespace cks {

ContiguousDims contiguous_dims(Layout l) {
  ContiguousDims c;
  c.m = true;                  // D is column-major
  (a_row_major(l) ? c.k : c.m) = true;
  (b_row_major(l) ? c.n : c.k) = true;
  return c;
}

namespace {

// "A (MxK, row-major) and D (MxN, column-major)": the operands whose leading dimension is `dim`.
std::string operands_of(char dim, Layout l) {
  std::vector<std::string> parts;
  if ((dim == 'K' && a_row_major(l)) || (dim == 'M' && !a_row_major(l)))
    parts.push_back(std::string("A (MxK, ") + (a_row_major(l) ? "row" : "column") + "-major)");
  if ((dim == 'N' && b_row_major(l)) || (dim == 'K' && !b_row_major(l)))
    parts.push_back(std::string("B (KxN, ") + (b_row_major(l) ? "row" : "column") + "-major)");
  if (dim == 'M') parts.push_back("D (MxN, column-major)");
  std::string s;
  for (size_t i = 0; i < parts.size(); ++i) s += (i == 0 ? "" : " and ") + parts[i];
  return s;
}

void check_dim(char dim, int64_t v, bool contiguous, Layout l) {
  const std::string name(1, dim);
  if (v <= 0) throw Error(name + " must be positive (got " + std::to_string(v) + ")");
  if (v > kMaxProblemDim)
    throw Error(name + " is too large (got " + std::to_string(v) + ", at most 2^31-1 = " +
                std::to_string(kMaxProblemDim) + ")");
  if (contiguous && v % kOperandAlignment != 0)
    throw Error(name + " must be a multiple of " + std::to_string(kOperandAlignment) + " for layout " +
                std::string(to_string(l)) + " (got " + std::to_string(v) + "): it is the contiguous dimension of " +
                operands_of(dim, l) + ", whose rows TMA needs 16-byte aligned");
}

}  // namespace

void check_problem(int64_t m, int64_t n, int64_t k, Layout layout) {
  const ContiguousDims c = contiguous_dims(layout);
  check_dim('M', m, c.m, layout);
  check_dim('N', n, c.n, layout);
  check_dim('K', k, c.k, layout);
  // Operand sizes in bytes (2 * rows * cols) must fit in int64: true for dimensions below 2^31,
  // checked anyway so that raising kMaxProblemDim cannot silently overflow.
  for (auto [r, cols] : {std::pair{m, k}, std::pair{k, n}, std::pair{m, n}}) {
    int64_t elems = 0, bytes = 0;
    if (__builtin_mul_overflow(r, cols, &elems) || __builtin_mul_overflow(elems, int64_t{2}, &bytes))
      throw Error("problem " + std::to_string(m) + "x" + std::to_string(n) + "x" + std::to_string(k) +
                  " is too large (an operand's size overflows 64 bits)");
  }
}

}  // namespace cks
