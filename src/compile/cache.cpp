#include "compile/cache.hpp"

#include <filesystem>
#include <fstream>

#include "cks/common.hpp"
#include "cks/files.hpp"

namespace cks::compile {

namespace fs = std::filesystem;

namespace {
constexpr int kSidecarFormat = 1;
}

std::string library_file(const std::string& cache_dir, const std::string& hash) {
  return cache_dir + "/cks_" + hash + ".so";
}
std::string sidecar_file(const std::string& cache_dir, const std::string& hash) {
  return cache_dir + "/cks_" + hash + ".json";
}

std::optional<std::vector<KernelCompileInfo>> load_sidecar(const std::string& cache_dir, const std::string& hash) {
  std::ifstream f(sidecar_file(cache_dir, hash));
  if (!f) return std::nullopt;
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(f);
    if (j.at("format").get<int>() != kSidecarFormat) return std::nullopt;
    std::vector<KernelCompileInfo> out;
    for (const auto& e : j.at("kernels")) {
      KernelCompileInfo k;
      k.kernel_id = e.at("kernel_id").get<std::string>();
      k.canonical = e.at("canonical").get<std::string>();
      k.status = e.at("status").get<std::string>();
      k.error = e.value("error", "");
      k.index = e.value("index", -1);
      k.registers = e.value("registers", -1);
      k.spill_store_bytes = e.value("spill_store_bytes", -1);
      k.spill_load_bytes = e.value("spill_load_bytes", -1);
      k.smem_bytes = e.value("smem_bytes", -1);
      k.compile_seconds = e.value("compile_seconds", 0.0);
      k.kernel_key = e.value("kernel_key", "");
      const std::string lib = e.value("lib", "");
      if (k.status == "ok") {
        k.lib_path = fs::absolute(fs::path(cache_dir) / lib).string();
        if (lib.empty() || !fs::exists(k.lib_path)) return std::nullopt;
      }
      out.push_back(std::move(k));
    }
    return out;
  } catch (const std::exception&) {
    return std::nullopt;  // corrupt or foreign file: treated as a miss and rewritten
  }
}

void store_sidecar(const std::string& cache_dir, const std::string& hash, const std::vector<KernelCompileInfo>& kernels,
                   const std::map<std::string, std::vector<std::string>>& warnings, const nlohmann::json& meta) {
  nlohmann::json j = meta;
  j["format"] = kSidecarFormat;
  j["hash"] = hash;
  j["kernels"] = nlohmann::json::array();
  for (const auto& k : kernels) {
    nlohmann::json e{{"kernel_id", k.kernel_id},
                     {"canonical", k.canonical},
                     {"status", k.status},
                     {"error", k.error},
                     {"lib", k.lib_path.empty() ? "" : fs::path(k.lib_path).filename().string()},
                     {"index", k.index},
                     {"registers", k.registers},
                     {"spill_store_bytes", k.spill_store_bytes},
                     {"spill_load_bytes", k.spill_load_bytes},
                     {"smem_bytes", k.smem_bytes},
                     {"compile_seconds", k.compile_seconds},
                     {"kernel_key", k.kernel_key}};
    if (auto w = warnings.find(k.kernel_id); w != warnings.end()) e["ptxas_warnings"] = w->second;
    j["kernels"].push_back(std::move(e));
  }
  write_file_atomic(sidecar_file(cache_dir, hash), j.dump(1));
}

}  // namespace cks::compile
