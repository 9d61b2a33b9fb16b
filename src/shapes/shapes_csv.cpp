// Reading a `cks shapes` CSV back into groups (cks/shapes.hpp): `cks plan make --shapes` and
// `cks bundle --shapes`.
#include <fstream>
#include <map>

#include "cks/common.hpp"
#include "cks/shapes.hpp"
#include "common/json_limits.hpp"

namespace cks {

namespace {

ShapeClass parse_shape_class(const std::string& s, const std::string& where) {
  for (int i = 0; i <= static_cast<int>(ShapeClass::llm); ++i)
    if (to_string(static_cast<ShapeClass>(i)) == s) return static_cast<ShapeClass>(i);
  throw Error(where + ": unknown shape class '" + s + "'");
}

long parse_long(const std::string& s, const std::string& where, const char* what) {
  size_t used = 0;
  long v = 0;
  try {
    v = std::stol(s, &used);
  } catch (const std::logic_error&) {
    used = 0;
  }
  if (used == 0 || used != s.size()) throw Error(where + ": bad " + what + " '" + s + "'");
  return v;
}

}  // namespace

std::vector<ShapeGroup> read_shapes_csv(const std::string& path, const HardwareDesc& hw,
                                        const std::vector<Layout>& layouts,
                                        const std::function<void(ShapeGroup&)>& rewrite) {
  check_input_file(path, "shapes file");
  std::ifstream in(path);
  if (!in) throw Error("cannot open shapes file '" + path + "'");
  std::string line;
  if (!std::getline(in, line)) throw Error(path + ": empty shapes file");
  std::map<std::string, size_t> col;
  const auto header = csv_fields(line);
  for (size_t i = 0; i < header.size(); ++i) col[header[i]] = i;
  for (const char* need : {"m", "n", "k"})
    if (!col.count(need)) throw Error(path + ": no '" + std::string(need) + "' column (expected the CSV of cks shapes)");
  if (!col.count("layout") && layouts.empty())
    throw Error(path + ": no 'layout' column (expected the CSV of cks shapes)");
  std::vector<ShapeGroup> out;
  for (size_t lineno = 2; std::getline(in, line); ++lineno) {
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    const std::string where = path + ":" + std::to_string(lineno);
    const auto f = csv_fields(line);
    if (f.size() != header.size()) throw Error(where + ": " + std::to_string(f.size()) + " fields, header has " + std::to_string(header.size()));
    const auto get = [&](const char* name) { return col.count(name) ? f[col[name]] : std::string(); };
    ShapeGroup g;
    g.shape = {parse_long(get("m"), where, "m"), parse_long(get("n"), where, "n"), parse_long(get("k"), where, "k")};
    if (col.count("class")) g.construction = parse_shape_class(get("class"), where);
    g.detail = get("detail");
    if (const std::string seed = get("seed"); !seed.empty()) {
      try {
        g.seed = std::stoull(seed);
      } catch (const std::logic_error&) {
        throw Error(where + ": bad seed '" + seed + "'");
      }
    }
    g.tags = tags_for(g.shape, hw);
    g.budget = auto_budget(g.tags);
    std::vector<Layout> row_layouts = layouts;
    if (col.count("layout")) {
      try {
        row_layouts = {parse_layout(get("layout"))};
      } catch (const Error& e) {
        throw Error(where + ": " + e.what());
      }
    }
    for (Layout l : row_layouts) {
      ShapeGroup r = g;
      r.layout = l;
      if (rewrite) {
        rewrite(r);
        r.tags = tags_for(r.shape, hw);
        r.budget = auto_budget(r.tags);
      }
      try {
        check_problem(r.shape.m, r.shape.n, r.shape.k, r.layout);
      } catch (const Error& e) {
        throw Error(where + ": " + e.what());
      }
      out.push_back(r);
    }
  }
  return out;
}

}  // namespace cks
