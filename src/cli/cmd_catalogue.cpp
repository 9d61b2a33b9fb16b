// cks catalogue — list, count and inspect the kernel catalogue; cross-check it against CUTLASS.
#include <algorithm>
#include <filesystem>
#include <functional>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>

#include "catalogue/cutlass_check.hpp"
#include "catalogue/model.hpp"
#include "cli/commands.hpp"
#include "cli/util.hpp"

namespace cks::cli {

namespace {

using Fields = std::vector<std::pair<std::string, Cell>>;

std::vector<Layout> selected_layouts(const std::string& layout) {
  if (layout == "all") return {kLayouts.begin(), kLayouts.end()};
  return {parse_layout(layout)};
}

std::string str(std::string_view s) { return std::string(s); }
int64_t flag(bool b) { return b ? 1 : 0; }

// The columns of `catalogue list`; `show` prints these first, then the detail below.
Fields summary_fields(const KernelDesc& k, const HardwareDesc& hw) {
  const KernelResources r = resources(k, hw);
  return {{"id", k.id()},
          {"canonical", k.canonical()},
          {"layout", str(to_string(k.layout))},
          {"tile_m", int64_t{k.tm}},
          {"tile_n", int64_t{k.tn}},
          {"tile_k", int64_t{k.tk}},
          {"cluster_m", int64_t{k.cm}},
          {"cluster_n", int64_t{k.cn}},
          {"stages", int64_t{k.stages}},
          {"resolved_stages", int64_t{r.stages}},
          {"mainloop", str(to_string(k.mainloop))},
          {"epilogue", str(to_string(k.epilogue))},
          {"scheduler", str(to_string(k.scheduler))},
          {"smem_total", int64_t{r.smem_total}},
          {"acc_regs", int64_t{r.acc_regs_per_thread}},
          {"spills_expected", flag(r.spills_expected)},
          {"knobs", static_cast<int64_t>(knob_settings(k).size())}};
}

Fields detail_fields(const KernelDesc& k, const HardwareDesc& hw) {
  const KernelResources r = resources(k, hw);
  const auto et = catalogue::epilogue_tile(k);
  const auto smem = catalogue::smem_layout(k, r.stages);
  const std::string reason = invalid_reason(k, hw);
  auto shape = [](int a, int b) { return std::to_string(a) + "x" + std::to_string(b); };
  // swapped: runs D^T = B^T A^T with a row-major D^T; kernel_layout: its CUTLASS kernel's layout;
  // sliced: a sliced-K kernel (K slices into FP32 partials, then a fixed-order reduction).
  return {{"swapped", flag(k.swapped)},
          {"kernel_layout", str(to_string(k.kernel_layout()))},
          {"sliced", flag(k.sliced)},
          {"valid", flag(reason.empty())},
          {"invalid_reason", reason},
          {"wgmma_instruction", std::to_string(k.inst_m()) + "x" + std::to_string(k.inst_n()) + "x" +
                                    std::to_string(k.inst_k())},
          {"threads", int64_t{r.threads}},
          {"consumer_warpgroups", int64_t{r.consumer_wgs}},
          {"non_portable_cluster", flag(catalogue::non_portable_cluster(k, hw))},
          {"auto_stages", int64_t{catalogue::auto_stages(k)}},
          {"smem_per_stage", int64_t{r.smem_per_stage}},
          {"smem_barriers_per_stage", int64_t{r.smem_pipeline}},
          {"smem_epilogue_shared_storage", int64_t{r.smem_epilogue}},
          {"smem_mainloop_tensors", int64_t{smem.mainloop_tensors}},
          {"smem_epilogue_tensors", int64_t{smem.epilogue_tensors}},
          {"smem_barriers_and_scheduler", int64_t{smem.barriers}},
          {"smem_alignment_padding", int64_t{smem.padding}},
          {"smem_optin_limit", int64_t{hw.smem_per_block_optin_bytes}},
          {"epilogue_tile", et.m ? shape(et.m, et.n) : std::string("none")},
          {"epilogue_subtiles", int64_t{et.subtiles}},
          {"epilogue_stages_d", int64_t{et.stages_d}},
          {"reg_limit_consumer", int64_t{r.reg_limit_consumer}}};
}

Table knob_table(const KernelDesc& k) {
  Table t({"knobs", "raster", "max_swizzle", "decomposition", "splits"});
  for (const auto& kn : knob_settings(k))
    t.add_row({kn.canonical(), str(to_string(kn.raster)), int64_t{kn.max_swizzle}, str(to_string(kn.decomposition)),
               int64_t{kn.splits}});
  return t;
}

// `--filter column=value` / `column!=value` on the list columns, compared as text.
struct RowFilter {
  std::string column, value;
  bool negate = false;
};
RowFilter parse_filter(const std::string& expr) {
  const auto eq = expr.find('=');
  if (eq == std::string::npos || eq == 0) throw Error("bad --filter '" + expr + "' (expected column=value or column!=value)");
  const bool negate = expr[eq - 1] == '!';
  return {expr.substr(0, negate ? eq - 1 : eq), expr.substr(eq + 1), negate};
}
std::string cell_text(const Cell& c) {
  if (auto i = std::get_if<int64_t>(&c)) return std::to_string(*i);
  if (auto s = std::get_if<std::string>(&c)) return *s;
  return "";
}

void run_list(const std::string& layout, const std::vector<std::string>& filter_exprs, Format f) {
  const HardwareDesc& hw = default_hw();
  std::vector<std::string> columns;
  for (const auto& [name, _] : summary_fields(KernelDesc{}, hw)) columns.push_back(name);
  std::vector<std::pair<size_t, RowFilter>> filters;
  for (const auto& e : filter_exprs) {
    RowFilter rf = parse_filter(e);
    const auto it = std::find(columns.begin(), columns.end(), rf.column);
    if (it == columns.end()) throw Error("unknown --filter column '" + rf.column + "'");
    filters.emplace_back(static_cast<size_t>(it - columns.begin()), rf);
  }
  Table t(columns);
  for (Layout l : selected_layouts(layout)) {
    for (const auto& k : Catalogue::get(l).kernels()) {
      std::vector<Cell> row;
      for (auto& [_, cell] : summary_fields(k, hw)) row.push_back(std::move(cell));
      const bool keep = std::all_of(filters.begin(), filters.end(), [&](const auto& fl) {
        return (cell_text(row[fl.first]) == fl.second.value) != fl.second.negate;
      });
      if (keep) t.add_row(std::move(row));
    }
  }
  t.write(std::cout, f);
}

// Axis values for `stats --by`.
const std::map<std::string, std::function<std::string(const KernelDesc&)>>& stat_axes() {
  static const auto axes = [] {
    std::map<std::string, std::function<std::string(const KernelDesc&)>> m{
        {"spills_expected",
         [](const KernelDesc& k) { return std::to_string(resources(k, default_hw()).spills_expected ? 1 : 0); }},
    };
    for (auto axis : kKernelAxes) m.emplace(axis, [axis](const KernelDesc& k) { return kernel_axis_value(k, axis); });
    return m;
  }();
  return axes;
}

void run_stats(const std::string& by, Format f) {
  const HardwareDesc& hw = default_hw();
  if (by.empty()) {
    Table t({"layout", "kernels", "candidates", "auto_stage_kernels", "explicit_stage_kernels", "spills_expected",
             "non_portable_cluster"});
    int64_t tot[6] = {};
    for (Layout l : kLayouts) {
      const Catalogue& cat = Catalogue::get(l);
      int64_t autos = 0, spills = 0, nonportable = 0;
      for (const auto& k : cat.kernels()) {
        autos += k.stages == 0;
        spills += resources(k, hw).spills_expected;
        nonportable += catalogue::non_portable_cluster(k, hw);
      }
      const int64_t v[6] = {static_cast<int64_t>(cat.kernels().size()), static_cast<int64_t>(cat.candidates().size()),
                            autos, static_cast<int64_t>(cat.kernels().size()) - autos, spills, nonportable};
      t.add_row({str(to_string(l)), v[0], v[1], v[2], v[3], v[4], v[5]});
      for (int i = 0; i < 6; ++i) tot[i] += v[i];
    }
    t.add_row({std::string("all"), tot[0], tot[1], tot[2], tot[3], tot[4], tot[5]});
    t.write(std::cout, f);
    return;
  }
  const auto axis = stat_axes().find(by);
  if (axis == stat_axes().end()) {
    std::string known;
    for (const auto& [name, _] : stat_axes()) known += (known.empty() ? "" : ", ") + name;
    throw Error("unknown --by axis '" + by + "' (expected " + known + ")");
  }
  Table t({"layout", by, "kernels", "candidates"});
  for (Layout l : kLayouts) {
    const Catalogue& cat = Catalogue::get(l);
    std::map<std::string, std::pair<int64_t, int64_t>> counts;
    for (const auto& k : cat.kernels()) ++counts[axis->second(k)].first;
    for (const auto& c : cat.candidates()) ++counts[axis->second(cat.kernels()[c.kernel])].second;
    for (const auto& [value, n] : counts) t.add_row({str(to_string(l)), value, n.first, n.second});
  }
  t.write(std::cout, f);
}

// Resolves a kernel ID (searched in every layout) or a canonical descriptor (shown even when it is
// not in the catalogue, with the reason).
KernelDesc resolve_kernel(const std::string& ref) {
  if (ref.rfind("sm90_", 0) == 0) return KernelDesc::from_canonical(ref);
  for (Layout l : kLayouts)
    if (auto desc = find_kernel(l, ref)) return *desc;  // swapped kernels included
  throw Error("unknown kernel id '" + ref + "' (see `cks catalogue list`)");
}

void run_show(const std::string& ref, Format f) {
  const HardwareDesc& hw = default_hw();
  const KernelDesc k = resolve_kernel(ref);
  Fields fields = summary_fields(k, hw);
  for (auto& fv : detail_fields(k, hw)) fields.push_back(std::move(fv));
  const std::string type = cutlass_type(k);
  if (f == Format::json) {
    nlohmann::ordered_json j;
    for (const auto& [name, cell] : fields) {
      if (auto i = std::get_if<int64_t>(&cell)) j[name] = *i;
      else j[name] = cell_text(cell);
    }
    j["knob_settings"] = nlohmann::ordered_json::array();
    for (const auto& kn : knob_settings(k)) j["knob_settings"].push_back(kn.canonical());
    j["cutlass_type"] = type;
    std::cout << j.dump(2) << "\n";
    return;
  }
  Table t({"field", "value"});
  for (auto& [name, cell] : fields) t.add_row({name, std::move(cell)});
  if (f == Format::csv) {
    std::string joined;
    for (const auto& kn : knob_settings(k)) joined += (joined.empty() ? "" : ";") + kn.canonical();
    t.add_row({std::string("knob_settings"), joined});
    t.add_row({std::string("cutlass_type"), type});
    t.write(std::cout, f);
    return;
  }
  t.write(std::cout, f);
  std::cout << "\n### Runtime knob settings\n\n";
  knob_table(k).write(std::cout, f);
  std::cout << "\n### CUTLASS type\n\n```cpp\n" << type << "\n```\n";
}

void run_check_cutlass(const std::string& listing_arg, bool regenerate, Format f) {
  namespace fs = std::filesystem;
  std::string path = listing_arg;
  if (path.empty()) {
    std::error_code ec;
    const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
    if (ec) throw Error("cannot locate the cks binary to find the CUTLASS listing; pass --listing");
    path = catalogue::listing_path_for_bin_dir(exe.parent_path().string());
  }
  if (regenerate) catalogue::generate_cutlass_listing(path);
  const auto listing = catalogue::load_or_generate_cutlass_listing(path);
  const auto check = catalogue::check_against_cutlass(listing, default_hw());

  Table t({"layout", "emitted", "matched", "excluded", "unexplained", "distinct_descriptors", "ours_not_emitted",
           "excluded_by_rule"});
  auto add = [&](const std::string& name, const catalogue::CutlassCheck::Counts& c) {
    std::string rules;
    for (const auto& [rule, n] : c.excluded_by_rule) rules += (rules.empty() ? "" : ";") + rule + "=" + std::to_string(n);
    t.add_row({name, int64_t{c.emitted}, int64_t{c.matched}, int64_t{c.excluded}, int64_t{c.unexplained},
               int64_t{c.distinct}, int64_t{c.ours_not_emitted}, rules});
  };
  for (const auto& [layout, counts] : check.layouts) add(str(to_string(layout)), counts);
  add("all", check.total);
  t.write(std::cout, f);
  if (!check.unexplained.empty()) {
    constexpr size_t kShown = 20;
    for (size_t i = 0; i < std::min(kShown, check.unexplained.size()); ++i)
      std::cerr << "unexplained: " << check.unexplained[i] << "\n";
    throw Error(std::to_string(check.unexplained.size()) + " CUTLASS kernels are missing from the catalogue without a "
                "documented reason (" + listing.generator + ")");
  }
}

}  // namespace

void register_catalogue(CLI::App& app) {
  auto* cat = app.add_subcommand("catalogue", "the statically valid SM90 BF16 GEMM kernel catalogue");
  cat->require_subcommand(1);

  static std::string list_layout = "all", list_fmt;
  static std::vector<std::string> filters;
  auto* list = cat->add_subcommand("list", "one row per kernel");
  list->add_option("--layout", list_layout, "operand layout: tn, nt, nn, tt or all")->capture_default_str();
  list->add_option("--filter", filters, "keep rows where column=value (or column!=value); repeatable");
  add_format(list, list_fmt);
  list->callback([] { run_list(list_layout, filters, parse_format(list_fmt)); });

  static std::string stats_by, stats_fmt;
  auto* stats = cat->add_subcommand("stats", "kernels and candidates per layout");
  stats->add_option("--by", stats_by,
                    "break the counts down by one axis: tile_m, tile_n, tile_k, cluster, stages, mainloop, epilogue, "
                    "scheduler or spills_expected");
  add_format(stats, stats_fmt, "md");
  stats->callback([] { run_stats(stats_by, parse_format(stats_fmt)); });

  static std::string show_ref, show_fmt;
  auto* show = cat->add_subcommand("show", "all fields, resources, knob settings and the CUTLASS type of one kernel");
  show->add_option("kernel", show_ref, "kernel ID (k...) or canonical descriptor (sm90_bf16_...)")->required();
  add_format(show, show_fmt, "md");
  show->callback([] { run_show(show_ref, parse_format(show_fmt)); });

  static std::string listing, check_fmt;
  static bool regenerate = false;
  auto* check = cat->add_subcommand("check-cutlass",
                                    "cross-check against the kernels CUTLASS's generator emits (level max)");
  check->add_option("--listing", listing,
                    "cached generator listing (default: <build>/cutlass_listing_sm90_bf16.json; generated if missing)");
  check->add_flag("--regenerate", regenerate, "rerun tools/cutlass_listing.py even if the listing exists");
  add_format(check, check_fmt, "md");
  check->callback([] { run_check_cutlass(listing, regenerate, parse_format(check_fmt)); });
}

}  // namespace cks::cli
