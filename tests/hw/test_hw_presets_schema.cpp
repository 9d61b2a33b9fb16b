// The presets file schema (issue 18 defect 12): a missing "presets", a missing or mistyped field,
// zero or negative resources are one clear error naming the field, never an empty catalogue
// with exit 0 or an internal error.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "cli/cli_run.hpp"

namespace cks::test {
namespace {

namespace fs = std::filesystem;

class PresetsDir {
 public:
  PresetsDir() {
    std::string tmpl = (fs::temp_directory_path() / "cks-presets-XXXXXX").string();
    if (!mkdtemp(tmpl.data())) throw std::runtime_error("mkdtemp");
    dir_ = tmpl;
    fs::create_directories(dir_ / "hw");
  }
  ~PresetsDir() {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }
  // Writes hw/presets.json and runs cks with CKS_DATA_DIR pointing here.
  CliRun run(const std::string& presets, const std::vector<std::string>& args) const {
    std::ofstream(dir_ / "hw" / "presets.json") << presets;
    return run_cli(args, {{"CKS_DATA_DIR", dir_.string()}});
  }

 private:
  fs::path dir_;
};

nlohmann::json shipped() {
  return nlohmann::json::parse(slurp_file(std::string(CKS_SOURCE_DIR) + "/data/hw/presets.json"));
}

std::string with_field(const char* field, const nlohmann::json& value) {
  nlohmann::json j = shipped();
  if (value.is_discarded()) j["presets"]["h200-sxm"].erase(field);
  else j["presets"]["h200-sxm"][field] = value;
  return j.dump();
}

TEST(HwPresetsSchema, ZeroAndNegativeResourcesAreRefused) {
  PresetsDir d;
  for (const char* field : {"smem_per_sm_bytes", "max_cluster_size_portable", "sm_clock_mhz", "regs_per_sm", "sm_count"}) {
    const CliRun r = d.run(with_field(field, 0), {"catalogue", "stats"});
    EXPECT_TRUE(one_error_line(r, std::string("\"") + field + "\" must be in")) << field;
  }
  EXPECT_TRUE(one_error_line(d.run(with_field("l2_bytes", -1), {"hw"}), "\"l2_bytes\" must be in"));
  EXPECT_TRUE(one_error_line(d.run(with_field("sm_count", "132"), {"hw"}), "\"sm_count\" must be an integer"));
  EXPECT_TRUE(one_error_line(d.run(with_field("sm_count", 1.5), {"hw"}), "\"sm_count\" must be an integer"));
  EXPECT_TRUE(one_error_line(d.run(with_field("name", 5), {"hw"}), "\"name\" must be a non-empty string"));
  EXPECT_TRUE(one_error_line(d.run(with_field("regs_per_sm", nlohmann::json(nlohmann::json::value_t::discarded)), {"hw"}),
                             "\"regs_per_sm\" is missing"));
}

TEST(HwPresetsSchema, ResourcesTooSmallForAnyKernelAreAnError) {
  PresetsDir d;
  nlohmann::json j = shipped();
  j["presets"]["h200-sxm"]["smem_per_sm_bytes"] = 1024;
  j["presets"]["h200-sxm"]["smem_per_block_optin_bytes"] = 1024;
  EXPECT_TRUE(one_error_line(d.run(j.dump(), {"catalogue", "stats"}), "no tn kernel fits hardware preset 'h200-sxm'"));
}

TEST(HwPresetsSchema, MalformedFilesAreClearErrors) {
  PresetsDir d;
  EXPECT_TRUE(one_error_line(d.run(R"({"x":1})", {"hw"}), "expected {\"presets\""));
  EXPECT_TRUE(one_error_line(d.run(R"({"presets":[]})", {"hw", "--list"}), "expected {\"presets\""));
  EXPECT_TRUE(one_error_line(d.run(R"({"presets":{"h200-sxm":3}})", {"hw"}), "must be an object"));
  EXPECT_TRUE(one_error_line(d.run("{", {"hw"}), "invalid JSON"));
  EXPECT_TRUE(one_error_line(d.run(std::string(100000, '[') + std::string(100000, ']'), {"hw"}), "nested deeper"));
  // The shipped file itself passes.
  EXPECT_EQ(d.run(shipped().dump(), {"hw"}).code(), 0);
}

}  // namespace
}  // namespace cks::test
