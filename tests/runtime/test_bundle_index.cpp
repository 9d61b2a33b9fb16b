// The bundle index (runtime/bundle.hpp): JSON round trip, the folder's files, and the errors a
// damaged or foreign index gives.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "cks/common.hpp"
#include "common/test_util.hpp"
#include "compile/compile_test_util.hpp"
#include "runtime/bundle.hpp"

using namespace cks;
using namespace cks::rt;
namespace fs = std::filesystem;

namespace {

const char* kA = "sm90_bf16_tn_128x128x64_1x1x1_s0_cooperative+tma_ws_cooperative+persistent";
const char* kB = "sm90_bf16_tn_128x256x64_2x1x1_s0_cooperative+tma_ws_cooperative+stream_k";

BundleIndex sample() {
  BundleIndex b;
  b.cks_version = "0.1.0";
  b.abi_version = 1;
  b.cuda_version = "13.0.88";
  b.cutlass_version = "4.2.0";
  b.model_path = "/m/default.json";
  b.model_hash = "0123456789abcdef";
  b.model_description = "xgboost";
  b.selector_mode = "prefilter 1024";
  b.top = 2;
  b.variants = 1;
  b.created = "2026-12-02T00:00:00Z";
  const KernelDesc a = KernelDesc::from_canonical(kA), s = KernelDesc::from_canonical(kB);
  b.kernels[a.id()] = {a.id(), a.canonical(), "kernels/cks_00000000000000aa.so", 0, ""};
  b.kernels[s.id()] = {s.id(), s.canonical(), "", -1, "nvcc failed: static assertion"};
  b.problems.push_back({Layout::tn, 4096, 4096, 4096,
                        {{1, a.id(), "r=m,s=2,d=h,k=1", 0.9, false}, {2, s.id(), "r=h,s=1,d=sk,k=2", 0.8, false},
                         {1, a.id(), "r=n,s=1,d=h,k=1", 0.7, true}}});
  b.problems.push_back({Layout::tn, 16, 4096, 4096, {{1, s.id(), "r=h,s=1,d=h,k=1", 0.5, false}}});
  b.reindex();
  return b;
}

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST(BundleIndex, JsonRoundTrip) {
  const BundleIndex b = sample();
  const nlohmann::json j = b.to_json();
  EXPECT_EQ(j["schema"], "cks-bundle");
  EXPECT_EQ(j["schema_version"], 1);
  EXPECT_EQ(j["gpu_arch"], "sm_90a");
  // Each pick carries its library and index; a kernel that did not compile has none.
  EXPECT_EQ(j["problems"][0]["picks"][0]["library"], "kernels/cks_00000000000000aa.so");
  EXPECT_EQ(j["problems"][0]["picks"][0]["index"], 0);
  EXPECT_TRUE(j["problems"][0]["picks"][1]["library"].is_null());
  EXPECT_EQ(j["problems"][0]["picks"][2]["variant"], true);
  const BundleIndex back = BundleIndex::from_json(j, "index.json");
  EXPECT_EQ(back.kernels, b.kernels);
  EXPECT_EQ(back.problems, b.problems);
  EXPECT_EQ(back.model_hash, b.model_hash);
  EXPECT_EQ(back.top, 2);
  EXPECT_EQ(back.variants, 1);
  EXPECT_EQ(j["variant_order"], "model");
  EXPECT_EQ(back.variant_order, VariantOrder::model);
  // The raster order round-trips; an index from before --variant-order (no field) reads as model.
  BundleIndex r = b;
  r.variant_order = VariantOrder::raster;
  EXPECT_EQ(r.to_json()["variant_order"], "raster");
  EXPECT_EQ(BundleIndex::from_json(r.to_json(), "index.json").variant_order, VariantOrder::raster);
  nlohmann::json old = r.to_json();
  old.erase("variant_order");
  EXPECT_EQ(BundleIndex::from_json(old, "index.json").variant_order, VariantOrder::model);
  ASSERT_NE(back.find(Layout::tn, 16, 4096, 4096), nullptr);
  EXPECT_EQ(back.find(Layout::tn, 16, 4096, 4096)->picks.size(), 1u);
  EXPECT_EQ(back.find(Layout::nt, 16, 4096, 4096), nullptr);
  EXPECT_EQ(back.find(Layout::tn, 32, 4096, 4096), nullptr);
}

TEST(BundleIndex, WriteThenLoadChecksTheLibraries) {
  compile_test::ScratchDir dir;
  const BundleIndex b = sample();
  b.write(dir.path());
  EXPECT_NE(error_of([&] { BundleIndex::load(dir.path()); }).find("library kernels/cks_00000000000000aa.so of kernel"),
            std::string::npos);
  fs::create_directories(dir.path() + "/kernels");
  std::ofstream(dir.path() + "/kernels/cks_00000000000000aa.so") << "x";
  const BundleIndex back = BundleIndex::load(dir.path());
  EXPECT_EQ(back.problems, b.problems);
  EXPECT_EQ(error_of([] { BundleIndex::load("/nonexistent/bundle"); }), "bundle '/nonexistent/bundle' is not a folder");
  compile_test::ScratchDir empty;
  EXPECT_EQ(error_of([&] { BundleIndex::load(empty.path()); }),
            "bundle '" + empty.path() + "' has no index.json (build it with cks bundle)");
}

TEST(BundleIndex, DamagedOrForeignIndexesAreClearErrors) {
  const nlohmann::json good = sample().to_json();
  auto err = [&](const std::function<void(nlohmann::json&)>& edit) {
    nlohmann::json j = good;
    edit(j);
    return error_of([&] { BundleIndex::from_json(j, "b/index.json"); });
  };
  EXPECT_EQ(err([](auto& j) { j.erase("schema"); }), "b/index.json: not a cks bundle index (no \"schema\": \"cks-bundle\")");
  EXPECT_EQ(err([](auto& j) { j["schema_version"] = 2; }),
            "b/index.json: bundle schema version 2, this cks reads version 1 (rebuild it with this cks bundle)");
  EXPECT_EQ(err([](auto& j) { j["top"] = "four"; }), "b/index.json: 'top' has the wrong type");
  EXPECT_EQ(err([](auto& j) { j["variant_order"] = "zigzag"; }),
            "b/index.json: unknown variant order 'zigzag' (expected model or raster)");
  EXPECT_EQ(err([](auto& j) { j["variant_order"] = 1; }), "b/index.json: 'variant_order' has the wrong type");
  const std::string id = KernelDesc::from_canonical(kA).id();
  EXPECT_EQ(err([&](auto& j) { j["kernels"][id]["library"] = "../../etc/x.so"; }),
            "b/index.json: kernel " + id + ": library path '../../etc/x.so' leaves the bundle folder");
  EXPECT_EQ(err([&](auto& j) { j["kernels"][id]["library"] = "/abs/x.so"; }),
            "b/index.json: kernel " + id + ": library path '/abs/x.so' is not relative to the bundle");
  EXPECT_NE(err([&](auto& j) { j["kernels"][id]["canonical"] = kB; }).find("the ID is not the descriptor's"), std::string::npos);
  EXPECT_EQ(err([](auto& j) { j["problems"][1]["picks"][0]["kernel_id"] = "k0000000000000000"; }),
            "b/index.json: problem 2: pick k0000000000000000 is not in the kernel map");
  EXPECT_EQ(err([](auto& j) { j["problems"][0]["layout"] = "xx"; }),
            "b/index.json: problem 1: unknown layout 'xx' (expected tn, nt, nn or tt)");
  EXPECT_NE(err([](auto& j) { j["problems"][0]["m"] = 4095; }).find("b/index.json: problem 1: M must be a multiple of 8"),
            std::string::npos);
  EXPECT_NE(err([](auto& j) { j["problems"][0]["picks"][0]["knobs"] = "fast"; }).find("b/index.json: problem 1: pick"),
            std::string::npos);
  // Not JSON at all: the project's limited reader names the file.
  compile_test::ScratchDir dir;
  std::ofstream(dir.path() + "/index.json") << "{ not json";
  EXPECT_NE(error_of([&] { BundleIndex::load(dir.path()); }).find(dir.path() + "/index.json"), std::string::npos);
}

TEST(BundleIndex, FileHashIsTheContentsFnv) {
  compile_test::ScratchDir dir;
  std::ofstream(dir.path() + "/m.json") << "abc";
  EXPECT_EQ(file_hash(dir.path() + "/m.json"), hex64(fnv1a64("abc")));
  EXPECT_NE(error_of([&] { file_hash(dir.path() + "/missing.json"); }).find("missing.json"), std::string::npos);
}
