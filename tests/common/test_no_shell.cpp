// No shell anywhere in src/ (issue 18 defect 6): helpers run with an argument vector
// (src/common/subprocess.hpp), so no path or environment variable can become a command.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>

namespace {

TEST(NoShell, SourcesCallNeitherPopenNorSystem) {
  const std::regex call(R"((^|[^\w.>:])(::)?(std::)?(popen|system)\s*\()");
  size_t files = 0;
  for (const auto& e : std::filesystem::recursive_directory_iterator(std::string(CKS_SOURCE_DIR) + "/src")) {
    const auto ext = e.path().extension();
    if (ext != ".cpp" && ext != ".hpp" && ext != ".h" && ext != ".cu") continue;
    ++files;
    std::ifstream in(e.path());
    std::string line;
    for (size_t n = 1; std::getline(in, line); ++n) {
      const auto comment = line.find("//");
      const std::string code = comment == std::string::npos ? line : line.substr(0, comment);
      EXPECT_FALSE(std::regex_search(code, call)) << e.path().string() << ":" << n << ": " << line;
    }
  }
  EXPECT_GT(files, 50u);
}

}  // namespace
