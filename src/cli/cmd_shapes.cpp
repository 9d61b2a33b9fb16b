// cks shapes — list the groups (shape x layout) of a shape set, one row per group.
#include <iostream>
#include <set>

#include "cks/shapes.hpp"
#include "cli/commands.hpp"
#include "cli/util.hpp"

namespace cks::cli {

namespace {

struct ShapesOpts {
  std::string set = "paper";
  uint64_t seed = 0;
  std::string preset = kDefaultPreset;
  std::string models;   // --set llm: model file (default data/shapes/llm_models.json)
  std::string layouts;  // comma-separated filter, empty = all
  std::string format;
};

std::set<Layout> parse_layout_list(const std::string& list) {
  std::set<Layout> out;
  size_t b = 0;
  while (b <= list.size()) {
    const size_t e = std::min(list.find(',', b), list.size());
    out.insert(parse_layout(list.substr(b, e - b)));
    b = e + 1;
  }
  return out;
}

Table shapes_table(const std::vector<ShapeGroup>& groups, const std::set<Layout>& layouts) {
  Table t({"key", "m", "n", "k", "layout", "class", "detail", "region", "geometry", "size", "regime", "flops",
           "intensity", "ridge_ratio", "llc_ratio", "budget", "budget_reason", "seed"});
  for (const auto& g : groups) {
    if (!layouts.empty() && !layouts.count(g.layout)) continue;
    t.add_row({g.key(), g.shape.m, g.shape.n, g.shape.k, std::string(to_string(g.layout)),
               std::string(to_string(g.construction)), g.detail, std::string(to_string(g.tags.region)),
               std::string(to_string(g.tags.geometry)), std::string(to_string(g.tags.size)),
               std::string(to_string(g.tags.regime)), g.tags.flops, g.tags.intensity, g.tags.ridge_ratio,
               g.tags.llc_ratio, int64_t{g.budget}, std::string(budget_reason(g.tags)), std::to_string(g.seed)});
  }
  return t;
}

}  // namespace

void register_shapes(CLI::App& app) {
  auto* cmd = app.add_subcommand("shapes", "list the shape-layout groups of a shape set (paper, heldout or llm)");
  static ShapesOpts o;
  cmd->add_option("--set", o.set, "shape set: paper (593 shapes x 4 layouts), heldout (on-grid neighbours of paper shapes, none of them a paper shape) llm (public model GEMMs; the evaluation set draws from it), llm-train (more model families, for training) or family (held-out model families: a second evaluation set)")
      ->capture_default_str();
  cmd->add_option("--seed", o.seed, "seed of the paper set's random construction")->transform(seed())->capture_default_str();
  cmd->add_option("--preset", o.preset, "hardware preset (ridge and LLC for transition shapes and tags)")
      ->capture_default_str();
  cmd->add_option("--models", o.models, "--set llm: model configuration file (default data/shapes/llm_models.json)");
  cmd->add_option("--layouts", o.layouts, "only these layouts, comma-separated (e.g. tn,nt)");
  add_format(cmd, o.format);
  cmd->callback([] {
    const Format f = parse_format(o.format);
    const HardwareDesc hw = hw_preset(o.preset);
    const auto layouts = o.layouts.empty() ? std::set<Layout>{} : parse_layout_list(o.layouts);
    if (!o.models.empty() && o.set != "llm") throw Error("--models applies to --set llm only");
    const auto groups = o.models.empty() ? make_shape_set(o.set, o.seed, hw) : make_llm_set(o.models, o.seed, hw);
    shapes_table(groups, layouts).write(std::cout, f);
  });
}

}  // namespace cks::cli
