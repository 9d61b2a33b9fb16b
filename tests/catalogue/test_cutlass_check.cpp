// Cross-check against CUTLASS's own generator, and the `cks catalogue` command line.
//
// SLOW THE FIRST TIME: CatalogueCutlassCheck.EveryEmittedKernelIsCatalogued runs
// tools/cutlass_listing.py (cutlass_library at instantiation level max, about 80 s on one core,
// longer on a loaded machine) when <build>/cutlass_listing_sm90_bf16.json does not exist yet; later
// runs read the cached listing in well under a second.
#include <gtest/gtest.h>

#include <array>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <sys/wait.h>

#include "catalogue/cutlass_check.hpp"
#include "cks/catalogue.hpp"
#include "cks/common.hpp"

using namespace cks;

namespace {

struct RunResult {
  int status = -1;
  std::string out;
};
// Runs the real cks binary (stdout captured, stderr merged when asked).
RunResult run_cks(const std::string& args, bool merge_stderr = false) {
  const std::string cmd = std::string(CKS_BIN_DIR) + "/cks " + args + (merge_stderr ? " 2>&1" : " 2>/dev/null");
  RunResult r;
  FILE* p = popen(cmd.c_str(), "r");
  if (!p) return r;
  std::array<char, 4096> buf;
  size_t n;
  while ((n = fread(buf.data(), 1, buf.size(), p)) > 0) r.out.append(buf.data(), n);
  const int st = pclose(p);
  r.status = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
  return r;
}

std::string listing_path() { return catalogue::listing_path_for_bin_dir(CKS_BIN_DIR); }

}  // namespace

TEST(CatalogueCutlassCheck, EveryEmittedKernelIsCatalogued) {
  const auto listing = catalogue::load_or_generate_cutlass_listing(listing_path());
  ASSERT_GT(listing.kernels.size(), 10000u) << listing.generator;
  const auto check = catalogue::check_against_cutlass(listing, default_hw());
  for (const auto& u : check.unexplained) ADD_FAILURE() << "unexplained: " << u;
  EXPECT_EQ(check.total.unexplained, 0);
  EXPECT_EQ(check.total.emitted, static_cast<long>(listing.kernels.size()));
  EXPECT_EQ(check.total.matched + check.total.excluded + check.total.unexplained, check.total.emitted);
  const auto& allowed = catalogue::documented_exclusions();
  for (const auto& [rule, n] : check.total.excluded_by_rule)
    EXPECT_NE(std::find(allowed.begin(), allowed.end(), rule), allowed.end()) << rule;
  for (Layout l : kLayouts) {
    const auto& c = check.layouts.at(l);
    EXPECT_GT(c.emitted, 0) << to_string(l);
    // C = bf16 and C = void variants, and ScheduleAuto, fold onto fewer distinct descriptors.
    EXPECT_LT(c.distinct, c.emitted) << to_string(l);
    // The catalogue is a strict superset: finer tile N, explicit stages, more schedule pairings.
    const auto ours = static_cast<long>(Catalogue::get(l).kernels().size());
    EXPECT_GT(c.ours_not_emitted, 0) << to_string(l);
    EXPECT_LE(ours - c.ours_not_emitted, c.distinct) << to_string(l);  // = distinct descriptors matched
  }
}

TEST(CatalogueCutlassCheck, ScheduleAutoAndVoidSourceMapOntoExplicitKernels) {
  const std::string path = ::testing::TempDir() + "/cks_listing_mapping.json";
  {
    std::FILE* f = std::fopen(path.c_str(), "w");
    ASSERT_NE(f, nullptr);
    std::fputs(R"({"generator":"test","count":3,"kernels":[
      {"name":"a","layout":"tn","tile":[64,128,64],"cluster":[1,2,1],"stages":0,"kernel_schedule":"ScheduleAuto",
       "epilogue_schedule":"ScheduleAuto","tile_scheduler":"Default","c_type":"bf16"},
      {"name":"b","layout":"nt","tile":[256,128,64],"cluster":[2,1,1],"stages":0,"kernel_schedule":"ScheduleAuto",
       "epilogue_schedule":"ScheduleAuto","tile_scheduler":"Default","c_type":"void"},
      {"name":"c","layout":"nn","tile":[128,64,64],"cluster":[1,1,1],"stages":0,
       "kernel_schedule":"TmaWarpSpecializedCooperativeFP8FastAccum","epilogue_schedule":"NoSmemWarpSpecialized",
       "tile_scheduler":"StreamK","c_type":"void"}]})",
               f);
    std::fclose(f);
  }
  const auto listing = catalogue::read_cutlass_listing(path);
  ASSERT_EQ(listing.kernels.size(), 3u);
  EXPECT_EQ(listing.kernels[0].desc.canonical(), "sm90_bf16_tn_64x128x64_1x2x1_s0_pingpong+no_smem+persistent");
  EXPECT_EQ(listing.kernels[1].desc.canonical(), "sm90_bf16_nt_256x128x64_2x1x1_s0_cooperative+no_smem+persistent");
  EXPECT_NE(listing.kernels[2].unmapped.find("not modelled"), std::string::npos);
  const auto check = catalogue::check_against_cutlass(listing, default_hw());
  EXPECT_EQ(check.total.matched, 2);
  EXPECT_EQ(check.total.unexplained, 1);
  std::remove(path.c_str());
}

TEST(CatalogueCli, StatsJsonHasEveryLayout) {
  const auto r = run_cks("catalogue stats --format json");
  ASSERT_EQ(r.status, 0) << r.out;
  const auto j = nlohmann::json::parse(r.out);
  ASSERT_EQ(j.size(), 5u);  // four layouts and "all"
  for (size_t i = 0; i < kLayouts.size(); ++i) {
    EXPECT_EQ(j[i]["layout"], to_string(kLayouts[i]));
    EXPECT_EQ(j[i]["kernels"].get<size_t>(), Catalogue::get(kLayouts[i]).kernels().size());
    EXPECT_EQ(j[i]["candidates"].get<size_t>(), Catalogue::get(kLayouts[i]).candidates().size());
  }
}

TEST(CatalogueCli, ListFiltersAndShowPrintsTheCutlassType) {
  const auto list = run_cks("catalogue list --layout tn --filter tile_m=128 --filter tile_n=128 --filter tile_k=64 "
                            "--filter cluster_m=2 --filter cluster_n=1 --filter stages=0 --filter mainloop=cooperative "
                            "--filter epilogue=tma_ws_cooperative --filter scheduler=persistent --format json");
  ASSERT_EQ(list.status, 0) << list.out;
  const auto rows = nlohmann::json::parse(list.out);
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0]["id"], "k00c05864eb799421");
  EXPECT_EQ(rows[0]["knobs"], 8);

  const auto show = run_cks("catalogue show k00c05864eb799421 --format json");
  ASSERT_EQ(show.status, 0) << show.out;
  const auto j = nlohmann::json::parse(show.out);
  EXPECT_EQ(j["canonical"], "sm90_bf16_tn_128x128x64_2x1x1_s0_cooperative+tma_ws_cooperative+persistent");
  EXPECT_EQ(j["resolved_stages"], 6);
  EXPECT_EQ(j["knob_settings"].size(), 8u);
  EXPECT_NE(j["cutlass_type"].get<std::string>().find("KernelTmaWarpSpecializedCooperative"), std::string::npos);
}

TEST(CatalogueCli, BadInputIsAClearError) {
  auto r = run_cks("catalogue show k0123456789abcdef", true);
  EXPECT_NE(r.status, 0);
  EXPECT_NE(r.out.find("cks: error: unknown kernel id 'k0123456789abcdef'"), std::string::npos) << r.out;
  r = run_cks("catalogue list --layout xy", true);
  EXPECT_NE(r.status, 0);
  EXPECT_NE(r.out.find("unknown layout 'xy'"), std::string::npos) << r.out;
  r = run_cks("catalogue list --filter bogus=1", true);
  EXPECT_NE(r.status, 0);
  EXPECT_NE(r.out.find("unknown --filter column 'bogus'"), std::string::npos) << r.out;
  r = run_cks("catalogue stats --by nothing", true);
  EXPECT_NE(r.status, 0);
  EXPECT_NE(r.out.find("unknown --by axis 'nothing'"), std::string::npos) << r.out;
}
