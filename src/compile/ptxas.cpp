// Parsing `ptxas -v` output. The lines it writes per entry function (CUDA 12/13):
//   ptxas info    : Compiling entry function '_ZN7cutlass13device_kernelIN21cks_k…' for 'sm_90a'
//   ptxas info    : Function properties for _ZN7cutlass13device_kernelIN21cks_k…
//       0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
//   ptxas info    : Used 168 registers, used 1 barriers, 640 bytes cmem[0]
// ("…, 1024 bytes smem, …" appears in the "Used" line when the kernel has static shared memory),
// and warnings such as
//   ptxas warning : (C7510) Potential Performance Loss: wgmma.mma_async instructions are
//   serialized due to … in the function '_ZN…'
#include "compile/ptxas.hpp"

#include <algorithm>
#include <cctype>
#include <regex>

namespace cks::compile {

namespace {

constexpr std::string_view kIdMarker = "cks_k";
constexpr size_t kIdHexDigits = 16;

std::vector<std::string_view> lines_of(std::string_view text) {
  std::vector<std::string_view> out;
  size_t b = 0;
  while (b < text.size()) {
    size_t e = text.find('\n', b);
    if (e == std::string_view::npos) e = text.size();
    out.push_back(text.substr(b, e - b));
    b = e + 1;
  }
  return out;
}

int match_int(const std::string& line, const std::regex& re) {
  std::smatch m;
  return std::regex_search(line, m, re) ? std::stoi(m[1].str()) : -1;
}

}  // namespace

std::string kernel_id_in_symbol(std::string_view symbol) {
  for (size_t p = symbol.find(kIdMarker); p != std::string_view::npos; p = symbol.find(kIdMarker, p + 1)) {
    const size_t b = p + kIdMarker.size();
    if (b + kIdHexDigits > symbol.size()) break;
    bool hex = true;
    for (size_t i = b; i < b + kIdHexDigits; ++i) hex = hex && std::isxdigit(static_cast<unsigned char>(symbol[i]));
    if (hex) return "k" + std::string(symbol.substr(b, kIdHexDigits));
  }
  return "";
}

std::map<std::string, PtxasInfo> parse_ptxas_log(std::string_view log) {
  static const std::regex entry_re(R"(Compiling entry function '([^']+)')");
  static const std::regex props_re(R"(Function properties for (\S+))");
  static const std::regex stack_re(R"((\d+) bytes spill stores, (\d+) bytes spill loads)");
  static const std::regex regs_re(R"(Used (\d+) registers)");
  static const std::regex smem_re(R"((\d+) bytes smem)");
  static const std::regex warn_fn_re(R"(in the function '([^']+)')");

  std::map<std::string, PtxasInfo> out;
  std::string entry_id;  // kernel of the last "Compiling entry function"
  std::string props_id;  // kernel of the last "Function properties for"
  for (auto sv : lines_of(log)) {
    const std::string line(sv);
    std::smatch m;
    if (std::regex_search(line, m, entry_re)) {
      entry_id = kernel_id_in_symbol(m[1].str());
      if (!entry_id.empty()) out[entry_id];
    } else if (std::regex_search(line, m, props_re)) {
      props_id = kernel_id_in_symbol(m[1].str());
    } else if (std::regex_search(line, m, stack_re)) {
      if (!props_id.empty()) {
        out[props_id].spill_store_bytes = std::stoi(m[1].str());
        out[props_id].spill_load_bytes = std::stoi(m[2].str());
      }
      props_id.clear();
    } else if (line.find("ptxas info") != std::string::npos && line.find("Used ") != std::string::npos) {
      if (!entry_id.empty()) {
        out[entry_id].registers = match_int(line, regs_re);
        out[entry_id].smem_bytes = std::max(0, match_int(line, smem_re));
      }
    } else if (line.find("ptxas warning") != std::string::npos && std::regex_search(line, m, warn_fn_re)) {
      const std::string id = kernel_id_in_symbol(m[1].str());
      if (!id.empty()) out[id].warnings.push_back(line);
    }
  }
  return out;
}

std::string error_excerpt(std::string_view log, size_t max_lines) {
  const auto lines = lines_of(log);
  std::string out;
  size_t n = 0;
  for (auto l : lines) {
    if (n >= max_lines) break;
    if (l.find("error") != std::string_view::npos && l.find("ptxas info") == std::string_view::npos) {
      out += std::string(l) + "\n";
      ++n;
    }
  }
  if (n == 0) {
    const size_t from = lines.size() > max_lines ? lines.size() - max_lines : 0;
    for (size_t i = from; i < lines.size(); ++i) out += std::string(lines[i]) + "\n";
  }
  while (!out.empty() && out.back() == '\n') out.pop_back();
  return out;
}

}  // namespace cks::compile
