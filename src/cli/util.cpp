#include "cli/util.hpp"

namespace cks::cli {

Layout validate_problem(const ProblemOpts& p) {
  auto check = [](const char* name, long v) {
    if (v <= 0) throw Error(std::string("--") + name + " must be positive (got " + std::to_string(v) + ")");
    if (v % 8 != 0)
      throw Error(std::string("--") + name + " must be a multiple of 8 for 16-byte aligned BF16 operands (got " +
                  std::to_string(v) + ")");
    if (v > (1L << 31)) throw Error(std::string("--") + name + " is too large (got " + std::to_string(v) + ")");
  };
  check("m", p.m);
  check("n", p.n);
  check("k", p.k);
  return parse_layout(p.layout);
}

std::vector<Layout> parse_layouts(const std::vector<std::string>& names) {
  std::vector<Layout> out;
  for (const auto& n : names) out.push_back(parse_layout(n));
  return out;
}

}  // namespace cks::cli
