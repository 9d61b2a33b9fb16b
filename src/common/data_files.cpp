// Run-time data lookup (common/data_files.hpp).
#include "common/data_files.hpp"

#include <dlfcn.h>
#include <link.h>

#include <cstdlib>
#include <filesystem>

// The installed share/cks relative to the installed bin/ and lib/ (CMakeLists.txt, from
// GNUInstallDirs; "../share/cks" for the usual lib/ and bin/).
#ifndef CKS_BIN_TO_DATA
#define CKS_BIN_TO_DATA "../share/cks"
#endif
#ifndef CKS_LIB_TO_DATA
#define CKS_LIB_TO_DATA "../share/cks"
#endif

namespace fs = std::filesystem;

namespace cks {

namespace {

// The file of the module (shared library or executable) that holds this function, and whether it
// is a shared library: dladdr's link map names a shared library by the path it was loaded from;
// the main program's entry has an empty name, so the executable is read from /proc/self/exe.
fs::path this_module(bool& shared) {
  shared = false;
  Dl_info info{};
  link_map* map = nullptr;
  std::error_code ec;
  if (dladdr1(reinterpret_cast<void*>(&installed_data_dir), &info, reinterpret_cast<void**>(&map), RTLD_DL_LINKMAP) != 0 &&
      map != nullptr && map->l_name != nullptr && map->l_name[0] != '\0') {
    fs::path p = fs::weakly_canonical(fs::absolute(map->l_name, ec), ec);
    if (!ec) {
      shared = true;
      return p;
    }
  }
  fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  return ec ? fs::path() : exe;
}

fs::path exe_path() {
  std::error_code ec;
  fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  return ec ? fs::path() : exe;
}

}  // namespace

std::string installed_data_dir() {
  bool shared = false;
  const fs::path module = this_module(shared);
  if (module.empty()) return "";
  return (module.parent_path() / (shared ? CKS_LIB_TO_DATA : CKS_BIN_TO_DATA)).lexically_normal().string();
}

std::vector<std::string> data_file_candidates(const std::string& rel) {
  std::vector<std::string> out;
  if (const char* d = std::getenv("CKS_DATA_DIR"); d && *d) out.push_back((fs::path(d) / rel).string());
  if (const std::string inst = installed_data_dir(); !inst.empty()) out.push_back((fs::path(inst) / rel).string());
  const bool model = rel.rfind("models/", 0) == 0;  // models/ sits beside data/ in the repository
  out.push_back((fs::path(CKS_SOURCE_DIR) / (model ? "" : "data") / rel).lexically_normal().string());
  if (const fs::path exe = exe_path(); !exe.empty())
    out.push_back((exe.parent_path().parent_path().parent_path() / (model ? "" : "data") / rel).lexically_normal().string());
  return out;
}

std::string find_data_file(const std::string& rel) {
  std::error_code ec;
  for (const auto& p : data_file_candidates(rel))
    if (fs::is_regular_file(p, ec)) return p;
  return "";
}

}  // namespace cks
