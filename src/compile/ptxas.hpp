// Per-kernel resource usage from an nvcc log compiled with -Xptxas=-v.
#pragma once
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace cks::compile {

struct PtxasInfo {
  int registers = -1;
  int spill_store_bytes = -1, spill_load_bytes = -1;
  int smem_bytes = 0;                 // static shared memory (CUTLASS kernels use dynamic smem)
  std::vector<std::string> warnings;  // ptxas warnings naming this kernel (e.g. C7510 wgmma serialization)
};

// Maps each kernel ID found in the log to its ptxas figures. A kernel is recognised by the
// unique namespace generate_tu() puts it in: the entry's mangled name contains "cks_k<16 hex>".
std::map<std::string, PtxasInfo> parse_ptxas_log(std::string_view log);

// The kernel ID ("k" + 16 hex digits) inside a mangled symbol, or "" when there is none.
std::string kernel_id_in_symbol(std::string_view symbol);

// The lines of an nvcc log that carry errors (at most max_lines), for compile_error records;
// the log's last lines when it has no recognisable error line.
std::string error_excerpt(std::string_view log, size_t max_lines = 20);

}  // namespace cks::compile
