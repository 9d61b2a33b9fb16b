// Hostile model files (issue 18 defect 4): bounded size, bounded nesting, typed fields; every
// failure a cks::Error naming the file, never a crash, std::bad_alloc or an internal error.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "cks/features.hpp"
#include "cks/models.hpp"
#include "cli/cli_run.hpp"

namespace cks {
namespace {

nlohmann::json skeleton() {
  return {{"format", "cks-model-1"},
          {"kind", "ridge"},
          {"objective", "squared"},
          {"schema", {{"version", "x"}, {"hash", FeatureSchema::get().hash_hex()}}},
          {"hw_preset", "h200-sxm"},
          {"options", nlohmann::json::object()},
          {"provenance", nlohmann::json::object()},
          {"parameters", nlohmann::json::object()}};
}

std::string error_of(const std::string& text) {
  try {
    Model::deserialize(text, "m.json");
  } catch (const Error& e) {
    return e.what();
  }
  return "(no error)";
}

std::string nested(size_t levels) {
  return std::string(levels, '[') + "1" + std::string(levels, ']');
}

TEST(ModelFileLimits, DeepNestingIsAnErrorNotACrash) {
  std::string text = skeleton().dump();
  text.insert(text.size() - 1, ",\"extra\":" + nested(200000));
  EXPECT_NE(error_of(text).find("nested deeper than 64 levels"), std::string::npos) << error_of(text);
  nlohmann::json j = skeleton();
  std::string deep_prov = j.dump();
  const std::string key = "\"provenance\":{}";
  deep_prov.replace(deep_prov.find(key), key.size(), "\"provenance\":{\"a\":" + nested(200000) + "}");
  EXPECT_NE(error_of(deep_prov).find("nested deeper"), std::string::npos);
  // 60 levels are fine as far as nesting goes (the ridge parameters are what is missing).
  std::string ok = skeleton().dump();
  ok.insert(ok.size() - 1, ",\"extra\":" + nested(60));
  EXPECT_EQ(error_of(ok).find("nested"), std::string::npos) << error_of(ok);
}

TEST(ModelFileLimits, WrongFieldTypesAreClearErrors) {
  auto with = [](const char* key, const nlohmann::json& v) {
    nlohmann::json j = skeleton();
    j[key] = v;
    return j.dump();
  };
  EXPECT_NE(error_of(with("format", 7)).find("is not a model file (expected format 'cks-model-1')"), std::string::npos);
  EXPECT_NE(error_of(with("provenance", nlohmann::json::array())).find("\"provenance\" must be an object, not array"),
            std::string::npos)
      << error_of(with("provenance", nlohmann::json::array()));
  EXPECT_NE(error_of(with("schema", "x")).find("\"schema\" must be an object"), std::string::npos);
  EXPECT_NE(error_of(with("kind", 1)).find("\"kind\" must be a string"), std::string::npos);
  EXPECT_NE(error_of(with("options", 1)).find("\"options\" must be an object"), std::string::npos);
  EXPECT_NE(error_of(with("options", nlohmann::json{{"seed", "x"}})).find("not a valid model file"), std::string::npos);
  EXPECT_NE(error_of(with("parameters", nlohmann::json{{"weights", "zz"}})).find("m.json"), std::string::npos);
  EXPECT_NE(error_of("[1,2]").find("not a model file"), std::string::npos);
}

TEST(ModelFileLimits, SizeAndFileTypeAreChecked) {
  EXPECT_THROW(Model::load("/dev/zero"), Error);
  try {
    Model::load("/dev/zero");
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("not a regular file"), std::string::npos) << e.what();
  }
  EXPECT_THROW(Model::load(testing::TempDir()), Error);
  const std::string huge = testing::TempDir() + "/cks_huge_model.json";
  const int fd = ::open(huge.c_str(), O_CREAT | O_WRONLY | O_TRUNC, 0644);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(::ftruncate(fd, off_t{2} << 30), 0);  // sparse: no disk used
  ::close(fd);
  try {
    Model::load(huge);
    ADD_FAILURE() << "a 2 GiB model was read";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("too large"), std::string::npos) << e.what();
  }
  std::remove(huge.c_str());
}

TEST(ModelFileLimits, SelectGivesOneErrorLine) {
  const std::string dir = testing::TempDir();
  const std::string deep = dir + "/cks_deep_model.json";
  {
    std::string text = skeleton().dump();
    text.insert(text.size() - 1, ",\"extra\":" + nested(200000));
    std::ofstream(deep) << text;
  }
  const std::string numeric = dir + "/cks_numeric_format.json";
  {
    nlohmann::json j = skeleton();
    j["format"] = 1;
    std::ofstream(numeric) << j.dump();
  }
  const std::string bad_prov = dir + "/cks_bad_provenance.json";
  {
    nlohmann::json j = skeleton();
    j["provenance"] = "text";
    std::ofstream(bad_prov) << j.dump();
  }
  for (const std::string& model : {deep, numeric, bad_prov, std::string("/dev/zero")}) {
    const auto r = test::run_cli({"select", "--m", "64", "--n", "64", "--k", "64", "--layout", "tn", "--model", model});
    EXPECT_TRUE(test::one_error_line(r, model)) << model;
    EXPECT_EQ(r.err.find("internal error"), std::string::npos) << r.err;
  }
  for (const auto& f : {deep, numeric, bad_prov}) std::remove(f.c_str());
}

}  // namespace
}  // namespace cks
