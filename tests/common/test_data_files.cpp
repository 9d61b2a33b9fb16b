// Run-time data lookup (src/common/data_files.hpp, docs/library.md "Data files"): $CKS_DATA_DIR,
// then the installed share/cks beside the executable or library, then the source tree.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <optional>

#include "cks/hw.hpp"
#include "cks/selector.hpp"
#include "common/data_files.hpp"
#include "compile/compile_test_util.hpp"
#include "common/test_util.hpp"

using namespace cks;
namespace fs = std::filesystem;

namespace {

// Sets an environment variable for the scope of the object, restoring the old value after.
using test::ScopedEnv;

}  // namespace

TEST(DataFiles, BuildTreeFindsTheSourceTree) {
  unsetenv("CKS_DATA_DIR");
  unsetenv("CKS_MODEL");
  EXPECT_EQ(find_data_file("hw/presets.json"), fs::path(CKS_SOURCE_DIR "/data/hw/presets.json").lexically_normal().string());
  EXPECT_EQ(find_data_file("models/default.json"), fs::path(CKS_SOURCE_DIR "/models/default.json").lexically_normal().string());
  EXPECT_EQ(Selector::default_model_path(), find_data_file("models/default.json"));
  EXPECT_EQ(find_data_file("hw/no-such-file.json"), "");
  // The test binary is an executable (bin/cks_tests of the build tree): its installed data folder
  // would be <its folder>/../share/cks (<build>/share/cks, which does not exist).
  EXPECT_EQ(installed_data_dir(), (fs::read_symlink("/proc/self/exe").parent_path() / "../share/cks").lexically_normal().string());
  const auto c = data_file_candidates("hw/presets.json");
  ASSERT_GE(c.size(), 2u);
  EXPECT_EQ(c[0], installed_data_dir() + "/hw/presets.json");
}

TEST(DataFiles, DataDirAndModelEnvironmentComeFirst) {
  compile_test::ScratchDir dir;
  fs::create_directories(dir.path() + "/hw");
  fs::create_directories(dir.path() + "/models");
  fs::copy_file(CKS_SOURCE_DIR "/data/hw/presets.json", dir.path() + "/hw/presets.json");
  std::ofstream(dir.path() + "/models/default.json") << "{}";
  {
    ScopedEnv data("CKS_DATA_DIR", dir.path());
    unsetenv("CKS_MODEL");
    EXPECT_EQ(hw_presets_path(), dir.path() + "/hw/presets.json");
    EXPECT_EQ(Selector::default_model_path(), dir.path() + "/models/default.json");
    EXPECT_EQ(data_file_candidates("hw/presets.json").front(), dir.path() + "/hw/presets.json");
    // A file the folder lacks falls through to the next place.
    EXPECT_EQ(find_data_file("shapes/llm_models.json"),
              fs::path(CKS_SOURCE_DIR "/data/shapes/llm_models.json").lexically_normal().string());
    ScopedEnv model("CKS_MODEL", "/elsewhere/m.json");
    EXPECT_EQ(Selector::default_model_path(), "/elsewhere/m.json");
  }
  unsetenv("CKS_MODEL");
}
