// cks codegen — print the CUDA translation unit for a batch of kernels.
// cks build   — compile kernels into libraries through the compile pool and executable cache.
// cks emit    — print a complete, self-contained .cu file for one kernel and its runtime knobs
//               (generate_standalone: defines, nvcc line, kernel type, a run_gemm host function).
//
// Kernels are named by catalogue ID (k + 16 hex digits, looked up in the catalogue of --layout,
// or of every layout when it is not given) or by canonical descriptor text
// (sm90_bf16_tn_128x128x64_1x1x1_s0_cooperative+tma_ws_cooperative+persistent).
#include <chrono>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <map>
#include <set>
#include <sstream>

#include "cks/compile.hpp"
#include "cks/files.hpp"
#include "common/json_limits.hpp"
#include "cli/commands.hpp"
#include "cli/util.hpp"

namespace cks::cli {

namespace {

struct KernelSelection {
  std::vector<std::string> ids;
  std::string ids_file;
  std::string layout;
};

void add_selection(CLI::App* cmd, KernelSelection& s) {
  cmd->add_option("--ids", s.ids, "kernel IDs or canonical descriptors (comma-separated)")->delimiter(',');
  cmd->add_option("--ids-file", s.ids_file, "file of kernel IDs or descriptors (whitespace/comma separated, # comments)");
  cmd->add_option("--layout", s.layout, "catalogue layout the IDs belong to: tn, nt, nn or tt (default: search all)");
}

std::vector<std::string> read_tokens(const std::string& path) {
  check_input_file(path, "kernel list");
  std::ifstream in(path);
  if (!in) throw Error("cannot read kernel list '" + path + "'");
  std::vector<std::string> out;
  std::string line;
  while (std::getline(in, line)) {
    line = line.substr(0, line.find('#'));
    for (char& c : line)
      if (c == ',' || c == '\t' || c == '\r') c = ' ';
    std::istringstream ss(line);
    for (std::string tok; ss >> tok;) out.push_back(tok);
  }
  return out;
}

KernelDesc resolve(const std::string& token, const std::vector<Layout>& layouts) {
  if (token.rfind("sm90_", 0) == 0) return KernelDesc::from_canonical(token);
  for (Layout l : layouts)
    if (auto desc = find_kernel(l, token)) return *desc;  // swapped kernels included
  throw Error("unknown kernel '" + token + "' (not a catalogue ID" +
              (layouts.size() == 1 ? " of layout " + std::string(to_string(layouts[0])) : std::string()) +
              " nor a canonical descriptor)");
}

std::vector<KernelDesc> select_kernels(const KernelSelection& s) {
  std::vector<std::string> tokens = s.ids;
  if (!s.ids_file.empty())
    for (auto& t : read_tokens(s.ids_file)) tokens.push_back(t);
  if (tokens.empty()) throw Error("no kernels given (use --ids or --ids-file)");
  std::vector<Layout> layouts(kLayouts.begin(), kLayouts.end());
  if (!s.layout.empty()) layouts = {parse_layout(s.layout)};
  std::vector<KernelDesc> out;
  std::set<std::string> seen;
  for (const auto& t : tokens) {
    KernelDesc k = resolve(t, layouts);
    if (seen.insert(k.id()).second) out.push_back(k);
  }
  return out;
}

// A compile error on one line for the table (the full text is in the cache's .log).
std::string one_line(std::string s) {
  constexpr size_t kMax = 300;
  for (size_t p = s.find('\n'); p != std::string::npos; p = s.find('\n', p)) s.replace(p, 1, " | ");
  return s.size() > kMax ? s.substr(0, kMax) + "..." : s;
}

// ptxas figures are -1 when unknown (compile errors): shown as null.
Cell known(int v) { return v < 0 ? Cell{} : Cell{int64_t{v}}; }

}  // namespace

void register_codegen(CLI::App& app) {
  {
    auto* cmd = app.add_subcommand("codegen", "print the CUDA translation unit for a batch of kernels");
    static KernelSelection sel;
    add_selection(cmd, sel);
    cmd->callback([] { std::cout << generate_tu(select_kernels(sel)); });
  }
  {
    auto* cmd = app.add_subcommand(
        "emit", "print a complete .cu file for one kernel: defines, nvcc line, its type and a run_gemm host function");
    static std::string kernel, knobs_text, layout, out, function = "run_gemm";
    cmd->add_option("kernel", kernel, "kernel ID (k + 16 hex digits, e.g. from `cks select`) or canonical descriptor")
        ->required();
    cmd->add_option("--knobs", knobs_text,
                    "runtime knobs the host function applies, e.g. r=m,s=2,d=h,k=1 (default: CUTLASS's r=h,s=1,d=h,k=1; "
                    "a sliced-K kernel: its first setting, 2 slices)");
    cmd->add_option("--layout", layout, "catalogue layout the ID belongs to: tn, nt, nn or tt (default: search all)");
    cmd->add_option("-o,--out", out, "write the file here instead of stdout");
    cmd->add_option("--name", function, "name of the extern \"C\" host function")->capture_default_str();
    cmd->callback([] {
      std::vector<Layout> layouts(kLayouts.begin(), kLayouts.end());
      if (!layout.empty()) layouts = {parse_layout(layout)};
      const KernelDesc k = resolve(kernel, layouts);
      if (!find_kernel(k.layout, k.id())) {  // a catalogue kernel or a swapped one
        const std::string why = invalid_reason(k, default_hw());
        throw Error("kernel " + k.canonical() + " is not in the " + std::string(to_string(k.layout)) +
                    " catalogue (" + (why.empty() ? "not enumerated" : why) + ")");
      }
      // No --knobs: CUTLASS's defaults, or a sliced-K kernel's first setting (it has no default).
      const RuntimeKnobs knobs =
          knobs_text.empty() ? standalone_default_knobs(k) : RuntimeKnobs::from_canonical(knobs_text);
      const std::string src = generate_standalone(k, knobs, function);
      if (knobs_text.empty() && k.sliced)
        std::fprintf(stderr,
                     "cks: note: no --knobs: the sliced-K kernel's first setting (%s, %d slices); "
                     "`cks catalogue show %s` lists the others\n",
                     knobs.canonical().c_str(), knobs.splits, k.id().c_str());
      else if (knobs_text.empty() && knob_settings(k).size() > 1)
        std::fprintf(stderr, "cks: note: no --knobs: CUTLASS's defaults (%s); `cks select` gives each pick's knobs\n",
                     knobs.canonical().c_str());
      if (out.empty()) {
        std::cout << src;
      } else {
        write_file_atomic(out, src);
        std::fprintf(stderr, "cks emit: wrote %s (%s, knobs %s, function %s)\n", out.c_str(), k.id().c_str(),
                     knobs.canonical().c_str(), function.c_str());
      }
    });
  }
  {
    auto* cmd = app.add_subcommand("build", "compile kernels into cached libraries (nvcc compile pool)");
    static KernelSelection sel;
    static CompileOptions opts;
    static std::string fmt;
    add_selection(cmd, sel);
    cmd->add_option("--jobs,-j", opts.jobs, "parallel nvcc processes (0: from cores and memory)")->transform(uint_in(0, 4096))->capture_default_str();
    cmd->add_option("--kernels-per-tu", opts.kernels_per_tu, "kernels per translation unit")->transform(uint_in(1, 4096))->capture_default_str();
    cmd->add_option("--cache", opts.cache_dir, "kernel library cache directory")->capture_default_str();
    cmd->add_option("--cutlass", opts.cutlass_dir, "CUTLASS root with include/ and tools/util/include/ (default: found)");
    cmd->add_option("--nvcc", opts.nvcc, "nvcc executable")->capture_default_str();
    cmd->add_option("--mem-per-kernel-gb", opts.mem_per_job_gb, "compile memory budgeted per kernel of a TU")->check(positive_real())
        ->capture_default_str();
    cmd->add_option("--mem-limit-gb", opts.mem_limit_gb, "memory budget of the pool (0: MemAvailable)")->check(non_negative_real())
        ->capture_default_str();
    add_format(cmd, fmt);
    cmd->callback([] {
      const Format f = parse_format(fmt);
      const std::vector<KernelDesc> kernels = select_kernels(sel);
      CompilePool pool(opts);
      std::fprintf(stderr, "cks build: %zu kernel(s), %d nvcc job(s), cache %s\n", kernels.size(), pool.jobs(),
                   opts.cache_dir.c_str());
      pool.submit(kernels);
      std::map<std::string, std::pair<KernelCompileInfo, bool>> done;  // id -> (info, cached)
      while (pool.pending() > 0) {
        auto lib = pool.next(std::chrono::seconds(1));
        if (!lib) continue;
        for (const auto& k : lib->kernels) done[k.kernel_id] = {k, lib->cached};
        progress("compiled kernels", done.size(), kernels.size());
      }
      Table t({"kernel_id", "canonical", "status", "registers", "spill_store_bytes", "spill_load_bytes", "smem_bytes",
               "compile_seconds", "cached", "lib", "index", "error"});
      size_t n_ok = 0;
      for (const auto& k : kernels) {
        const auto it = done.find(k.id());
        if (it == done.end()) throw std::logic_error("the compile pool returned no result for " + k.id());
        const auto& [info, cached] = it->second;
        n_ok += info.status == "ok";
        t.add_row({info.kernel_id, info.canonical, info.status, known(info.registers), known(info.spill_store_bytes),
                   known(info.spill_load_bytes), known(info.smem_bytes), info.compile_seconds,
                   int64_t{cached ? 1 : 0}, info.lib_path, known(info.index), one_line(info.error)});
      }
      t.write(std::cout, f);
      std::fprintf(stderr, "cks build: %zu ok, %zu compile error(s)\n", n_ok, kernels.size() - n_ok);
    });
  }
}

}  // namespace cks::cli
