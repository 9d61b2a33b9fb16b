// cks features — the feature rows phi(p, c, h) of every candidate of one problem, or the schema.
#include <iostream>
#include <nlohmann/json.hpp>
#include <optional>

#include "cks/features.hpp"
#include "cli/commands.hpp"
#include "cli/util.hpp"

namespace cks::cli {

namespace {

constexpr const char* kProblemOptions[] = {"--m", "--n", "--k", "--layout"};

void write_schema(std::ostream& os, Format f) {
  const auto& schema = FeatureSchema::get();
  if (f == Format::json) {
    nlohmann::ordered_json j;
    j["version"] = schema.version();
    j["hash"] = schema.hash_hex();
    j["count"] = schema.size();
    auto& arr = j["features"] = nlohmann::ordered_json::array();
    for (size_t i = 0; i < schema.size(); ++i) {
      const auto& s = schema[i];
      nlohmann::ordered_json o;
      o["index"] = i;
      o["name"] = s.name;
      o["kind"] = to_string(s.kind);
      o["group"] = s.group;
      o["levels"] = nlohmann::ordered_json::array();
      for (auto l : s.levels) o["levels"].push_back(l);
      o["definition"] = s.definition;
      arr.push_back(std::move(o));
    }
    os << j.dump(2) << '\n';
    return;
  }
  Table t({"index", "name", "kind", "group", "levels", "definition"});
  for (size_t i = 0; i < schema.size(); ++i) {
    const auto& s = schema[i];
    std::string levels;
    for (auto l : s.levels) levels += (levels.empty() ? "" : ";") + std::string(l);
    t.add_row({static_cast<int64_t>(i), std::string(s.name), std::string(to_string(s.kind)), std::string(s.group),
               levels, std::string(s.definition)});
  }
  t.write(os, f);
}

// The cached catalogue is enumerated for the default GPU; another preset gets its own.
const Catalogue& catalogue_for(Layout layout, const std::string& preset, const HardwareDesc& hw,
                               std::optional<Catalogue>& storage) {
  if (preset == kDefaultPreset) return Catalogue::get(layout);
  const Catalogue& cat = storage.emplace(Catalogue::build(layout, hw));
  if (cat.kernels().empty())
    throw Error("no " + std::string(to_string(layout)) + " kernel fits hardware preset '" + preset +
                "' (its shared memory, registers, threads or cluster limits are below every kernel's needs)");
  return cat;
}

struct FeaturesCliOpts {
  ProblemOpts problem;
  std::string format;
  std::string kernel_id;
  size_t limit = 0;
  bool schema = false;
};

void run_features(CLI::App* cmd, const FeaturesCliOpts& o) {
  const Format f = parse_format(o.format);
  if (o.schema) {
    write_schema(std::cout, f);
    return;
  }
  for (const char* name : kProblemOptions)
    if (cmd->get_option(name)->count() == 0) throw Error(std::string(name) + " is required (or use --schema)");
  const Layout layout = validate_problem(o.problem);
  const HardwareDesc hw = hw_preset(o.problem.preset);
  std::optional<Catalogue> own;
  const Catalogue& cat = catalogue_for(layout, o.problem.preset, hw, own);

  std::span<const Candidate> all(cat.candidates());
  std::vector<Candidate> of_kernel;
  if (!o.kernel_id.empty()) {
    const auto index = cat.find(o.kernel_id);
    if (!index)
      throw Error("unknown kernel '" + o.kernel_id + "' for layout " + std::string(to_string(layout)) +
                  " (see cks catalogue)");
    for (const auto& c : all)
      if (c.kernel == *index) of_kernel.push_back(c);
    all = of_kernel;
  }
  if (o.limit > 0 && all.size() > o.limit) all = all.first(o.limit);

  const Problem p{o.problem.m, o.problem.n, o.problem.k, layout};
  FeatureMatrix x;
  FeatureComputer(cat.kernels(), hw).compute(p, all, x);

  std::vector<std::string> ids(cat.kernels().size());  // computed once per kernel in use
  std::vector<FeatureRowKey> keys(all.size());
  for (size_t i = 0; i < all.size(); ++i) {
    std::string& id = ids[all[i].kernel];
    if (id.empty()) id = cat.kernels()[all[i].kernel].id();
    keys[i] = {id, all[i].knobs.canonical()};
  }
  write_features(std::cout, f, keys, x, [](size_t done, size_t total) { progress("features", done, total); });
  std::cout.flush();
}

}  // namespace

void register_features(CLI::App& app) {
  auto* cmd = app.add_subcommand("features", "feature rows phi(p, c, h) of every candidate of a problem");
  static FeaturesCliOpts o;
  add_problem(cmd, o.problem);
  auto* schema = cmd->add_flag("--schema", o.schema, "print the feature schema (names, kinds, levels, definitions)");
  for (const char* name : kProblemOptions) {
    cmd->get_option(name)->required(false);
    schema->excludes(cmd->get_option(name));
  }
  cmd->add_option("--kernel", o.kernel_id, "only the candidates of this kernel ID");
  cmd->add_option("--limit", o.limit, "at most N rows (0: all)")->transform(count())->capture_default_str();
  add_format(cmd, o.format, "csv");
  cmd->callback([cmd] { run_features(cmd, o); });
}

}  // namespace cks::cli
