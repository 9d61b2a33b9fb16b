// The nvMatmulHeuristics bridge runs without a shell (issue 18 defect 6): a TMPDIR or a
// $CKS_PYTHON path with quotes, spaces, '$' or ';' is a path, never a command.
#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <optional>

#include "cks/models.hpp"
#include "common/test_util.hpp"

namespace cks {
namespace {

namespace fs = std::filesystem;

// Sets an environment variable for the scope of a test.
using test::ScopedEnv;

struct BridgeDir {
  fs::path root;
  BridgeDir() {
    std::string tmpl = (fs::temp_directory_path() / "cks-nvmmh-test-XXXXXX").string();
    if (!mkdtemp(tmpl.data())) throw std::runtime_error("mkdtemp");
    root = tmpl;
  }
  ~BridgeDir() {
    std::error_code ec;
    fs::remove_all(root, ec);
  }
};

std::vector<DataGroup> one_group() {
  DataGroup g;
  g.key = "128x128x128_tn";
  g.problem = {128, 128, 128, Layout::tn};
  return {g};
}

TEST(NvmmhBridge, HostilePathsAreNeverShellText) {
  BridgeDir d;
  const fs::path marker = d.root / "INJECTED";
  // A TMPDIR whose name closes the old command line's quotes and runs a command.
  const fs::path tmp = d.root / ("t'; touch '" + marker.string() + "'; echo '");
  fs::create_directories(tmp);
  // A bridge in a directory with spaces and quotes, answering with a fixed reply after reading
  // the request from stdin.
  const fs::path bridge_dir = d.root / "my bridge $(touch x) 'q'";
  fs::create_directories(bridge_dir);
  const fs::path bridge = bridge_dir / "bridge.py";
  std::ofstream(bridge) << "import json, sys\n"
                           "req = json.load(sys.stdin)\n"
                           "print(json.dumps({'available': False, 'reason': 'test bridge saw %d problems' % "
                           "len(req['problems'])}))\n";
  ScopedEnv tmpdir("TMPDIR", tmp.string());
  ScopedEnv path("CKS_NVMMH_BRIDGE", bridge.string());
  const auto groups = one_group();
  const NvmmhResult r = query_nvmmh(groups);
  EXPECT_FALSE(fs::exists(marker)) << "a command in TMPDIR ran";
  EXPECT_FALSE(fs::exists(fs::current_path() / "x"));
  EXPECT_EQ(r.reason, "test bridge saw 1 problems");
  EXPECT_TRUE(fs::is_empty(tmp)) << "the request file was left behind";
}

TEST(NvmmhBridge, CksPythonIsOneExecutableNotACommandLine) {
  BridgeDir d;
  const fs::path marker = d.root / "INJECTED2";
  ScopedEnv python("CKS_PYTHON", "python3 -c 'open(\"" + marker.string() + "\", \"w\")'; true");
  const auto groups = one_group();
  const NvmmhResult r = query_nvmmh(groups);
  EXPECT_FALSE(fs::exists(marker));
  EXPECT_FALSE(r.available);
  EXPECT_NE(r.reason.find("did not answer"), std::string::npos) << r.reason;
}

}  // namespace
}  // namespace cks
