// The executable cache: cache_dir/cks_<hash>.so with a cks_<hash>.json sidecar holding the
// per-kernel outcome of compiling that batch (library, index, ptxas figures, or compile error).
// The sidecar is written last, atomically, so its presence marks a complete entry; a batch that
// was bisected gets a sidecar too (pointing each kernel at the sub-library that holds it), so a
// resubmitted batch resolves without compiling anything.
#pragma once
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cks/compile.hpp"

namespace cks::compile {

std::string library_file(const std::string& cache_dir, const std::string& hash);  // <dir>/cks_<hash>.so
std::string sidecar_file(const std::string& cache_dir, const std::string& hash);  // <dir>/cks_<hash>.json

// The cached outcome of batch `hash`; nullopt when absent, unreadable, or when a library it
// names has gone. lib_path comes back absolute (the sidecar stores names relative to the dir).
std::optional<std::vector<KernelCompileInfo>> load_sidecar(const std::string& cache_dir, const std::string& hash);

// Writes the sidecar atomically. `meta` (flags, versions, timings) is stored alongside;
// `warnings` holds ptxas warnings per kernel ID.
void store_sidecar(const std::string& cache_dir, const std::string& hash, const std::vector<KernelCompileInfo>& kernels,
                   const std::map<std::string, std::vector<std::string>>& warnings, const nlohmann::json& meta);

}  // namespace cks::compile
