// The counter study end to end without a GPU: a registry of exhaustive groups, `cks profile plan`
// (plan_profiles), the real cks-worker in --profile mode on the fake backend, an ncu-style CSV
// written in the format `ncu --csv --page raw --print-units base` prints, `cks profile import`
// and `cks analyze counters`.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <map>
#include <sstream>

#include "cks/analysis.hpp"
#include "cks/registry.hpp"
#include "registry/registry_test_util.hpp"
#include "shapes/cli_run.hpp"
#include "common/test_util.hpp"

using namespace cks;
using namespace cks::test;

namespace {

// Three exhaustive TN groups of 12 catalogue candidates; T falls with the candidate's position.
void write_corpus(const std::string& path) {
  Registry reg(path);
  const std::string run = reg.begin_run(test_run());
  const Catalogue& cat = Catalogue::get(Layout::tn);
  const long shapes[3][3] = {{512, 1024, 2048}, {1024, 512, 4096}, {2048, 2048, 1024}};
  for (const auto& s : shapes) {
    GroupInfo g = test_group(s[0], s[1], s[2], "eval");
    g.seed = 1000 + static_cast<uint64_t>(s[0]);
    reg.upsert_group(g);
    const std::string key = group_key(s[0], s[1], s[2], Layout::tn);
    std::vector<MeasurementRow> rows;
    for (int i = 0; i < 12; ++i) {
      MeasurementRow r = test_row(run, key, cat.kernels()[static_cast<size_t>(40 * i)].id(), "ok", 10.0 + i);
      r.tflops = 2.0 * static_cast<double>(s[0] * s[1] * s[2]) / ((10.0 + i) * 1e6);
      rows.push_back(r);
    }
    rows.push_back(test_row(run, key, "cublas", "ok", 9.0));
    reg.insert_measurements(rows);
  }
  reg.end_run(run);
}

using test::slurp;

}  // namespace

TEST(CounterStudy, PlanProfileImportAnalyze) {
  ScratchDir dir;
  const std::string db = dir.file("corpus.db");
  write_corpus(db);
  const HardwareDesc hw = hw_preset(kDefaultPreset);

  // Plan: 2 of the 3 groups, 4 candidates each, evenly spaced over the throughput ranks.
  std::vector<ProfileItem> items;
  {
    RegistryOptions ro;
    ro.create = false;
    Registry reg(db, ro);
    AnalysisLoadOptions lo;
    lo.include_cut = false;
    const AnalysisData data = load_analysis_data(reg, hw, lo);
    ProfilePlanOptions po;
    po.groups = 2;
    po.per_group = 4;
    items = plan_profiles(data, reg, po);
    po.groups = 4;
    EXPECT_THROW(plan_profiles(data, reg, po), Error) << "only 3 eval groups";
  }
  ASSERT_EQ(items.size(), 8u);
  EXPECT_GT(items[0].tflops, items[3].tflops) << "best first, worst last";
  EXPECT_EQ(items[0].group_seed, 1000u + static_cast<uint64_t>(items[0].m));
  const std::string plan = dir.file("plan.csv");
  {
    std::ofstream os(plan);
    profile_plan_table(items).write(os, Format::csv);
  }
  const auto back = read_profile_plan(plan);
  ASSERT_EQ(back.size(), items.size());
  EXPECT_EQ(back[5].knobs, items[5].knobs);
  EXPECT_EQ(back[5].kernel_id, items[5].kernel_id);

  // Device side: the real worker (fake backend) measures and "profiles" each item of a chunk.
  const std::string pdir = dir.file("profile");
  std::filesystem::create_directories(pdir);
  std::map<std::string, std::vector<const ProfileItem*>> chunks;
  for (const auto& it : items) chunks[it.group_key].push_back(&it);
  int c = 0;
  for (const auto& [key, list] : chunks) {
    const std::string stem = pdir + "/c" + std::to_string(c++) + "_" + key;
    {
      std::ofstream os(stem + ".items.tsv");
      for (const ProfileItem* it : list)
        os << it->tag << '\t' << it->m << '\t' << it->n << '\t' << it->k << "\ttn\t" << it->group_seed << "\t/none.so\t0\t"
           << it->kernel_id << '\t' << it->knobs << '\n';
    }
    const std::string cmd = std::string(CKS_BIN_DIR) + "/cks-worker --backend fake --device 0 --profile " + stem +
                            ".items.tsv --profile-out " + stem + ".results.tsv 2>/dev/null";
    ASSERT_EQ(std::system(cmd.c_str()), 0) << cmd;
    // ncu's raw page: header, units, one row per profiled kernel (numbers with separators).
    std::istringstream results(slurp(stem + ".results.tsv"));
    std::string line;
    std::getline(results, line);
    std::ofstream csv(stem + ".csv");
    csv << "==PROF== Connected to process 1\n"
        << "\"ID\",\"Kernel Name\",\"device__attribute_max_threads\",\"gpu__time_duration.sum\","
           "\"dram__throughput.avg.pct_of_peak_sustained_elapsed\"\n"
        << "\"\",\"\",\"\",\"ns\",\"%\"\n";
    int row = 0;
    while (std::getline(results, line)) {
      std::istringstream f(line);
      std::string tag, status;
      std::getline(f, tag, '\t');
      std::getline(f, status, '\t');
      ASSERT_EQ(status, "ok") << line;
      const ProfileItem* it = nullptr;
      for (const ProfileItem* p : list)
        if (p->tag == tag) it = p;
      ASSERT_NE(it, nullptr) << tag;
      // Counters consistent with the corpus: duration from its throughput, DRAM % rising with it.
      const long ns = std::lround(2.0 * static_cast<double>(it->m * it->n * it->k) / (it->tflops * 1e3));
      csv << "\"" << row << "\",\"kernel<(int)1, x>\",\"1024\",\"" << ns / 1000 << "," << std::setw(3)
          << std::setfill('0') << ns % 1000 << "\",\"" << it->tflops / 10 << "\"\n";
      ++row;
    }
    csv << "==PROF== Disconnected from process 1\n";
  }
  {
    std::ofstream prov(pdir + "/provenance.json");
    prov << R"({"gpu_name":"NVIDIA H200","gpu_uuid":"GPU-1","driver_version":"580","git_sha":"abc",)"
         << R"("ncu_version":"2025.3.1","clock_control":"none","metrics":["gpu__time_duration.sum"]})";
  }

  // Import through the CLI, into a copy of the corpus: one profile run, every metric but the
  // device attributes, plus the harness's timing.
  const auto imp = run_cks("profile import --plan " + plan + " --dir " + pdir + " --registry " + db +
                           " --provenance " + pdir + "/provenance.json --format json");
  ASSERT_EQ(imp.exit_code, 0) << imp.err;
  EXPECT_NE(imp.out.find("\"profiled\": 8"), std::string::npos) << imp.out;
  EXPECT_EQ(sql_text(db, "SELECT count(*) FROM profiles WHERE metric LIKE 'device__%'"), "0");
  EXPECT_EQ(sql_text(db, "SELECT count(DISTINCT metric) FROM profiles"), "4");
  EXPECT_EQ(sql_text(db, "SELECT kind || ' ' || gpu_uuid || ' ' || json_extract(extra_json, '$.clock_control') "
                         "FROM runs WHERE kind='profile'"),
            "profile GPU-1 none");

  // The study: duration ranks candidates exactly inversely to throughput within a group.
  {
    RegistryOptions ro;
    ro.create = false;
    Registry reg(db, ro);
    const AnalysisData data = load_analysis_data(reg, hw, AnalysisLoadOptions{});
    const CounterStudy s = counter_study(reg, data, hw);
    EXPECT_EQ(s.profiles, 8u);
    EXPECT_EQ(s.groups, 2u);
    EXPECT_EQ(s.paired_corpus, 8u);
    std::map<std::string, CounterCorrelation> by;
    for (const auto& r : s.counters) by[r.counter] = r;
    ASSERT_TRUE(by.count("duration_us"));
    EXPECT_NEAR(by["duration_us"].rho_within_mean, -1.0, 1e-9);
    EXPECT_EQ(by["duration_us"].groups_computable, 2u);
    ASSERT_TRUE(by.count("dram_throughput_pct"));
    EXPECT_NEAR(by["dram_throughput_pct"].rho_within_mean, 1.0, 1e-9);
    EXPECT_NEAR(by["dram_throughput_pct"].paper_within, 0.408, 1e-9);
  }
  const auto md = run_cks("analyze counters --registry " + db + " --format md");
  ASSERT_EQ(md.exit_code, 0) << md.err;
  EXPECT_NE(md.out.find("| duration_us | 8 | 2 | 2 |"), std::string::npos) << md.out;

  // A results file naming a tag the plan does not have is refused, naming the tag.
  {
    std::ofstream os(pdir + "/zz.results.tsv");
    os << "tag\tstatus\tmean_us\tstd_us\tsm_clock_mhz\tprofiled\tseq\tcublas_us\terror\n"
       << "p9999\tok\t1\t0\t1980\t1\t0\t1\t\n";
  }
  const auto bad = run_cks("profile import --plan " + plan + " --dir " + pdir + " --registry " + dir.file("x.db") +
                           " --provenance " + pdir + "/provenance.json");
  EXPECT_NE(bad.exit_code, 0);
  EXPECT_NE(bad.err.find("p9999"), std::string::npos) << bad.err;
}
