// The autotune results file (runtime/tuning.hpp): records round trip through the CSV, the
// validators (GPU, cks version, model hash) decide which apply, appends from several writers
// keep whole lines, and a damaged file is one clear error naming the line.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <limits>
#include <fstream>
#include <thread>

#include "cks/common.hpp"
#include "common/test_util.hpp"
#include "compile/compile_test_util.hpp"
#include "runtime/tuning.hpp"

using namespace cks;
using namespace cks::rt;

namespace {

TuningRecord rec(int64_t m, const std::string& winner = "kadf55d1e9f98f3e8", const std::string& knobs = "r=m,s=2,d=h,k=1") {
  TuningRecord r;
  r.gpu = "NVIDIA H200";
  r.cks_version = "0.1.0";
  r.model_hash = "5c0d2f0e8a9b1c3d";
  r.layout = Layout::tn;
  r.m = m;
  r.n = 4096;
  r.k = 4096;
  r.winner = winner;
  r.knobs = winner == kCublasWinner ? "" : knobs;
  r.us = 118.25;
  r.cublas_us = 124.5;
  return r;
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

// Autotune's winner: the fastest median, unless it beats cuBLASLt's top-1 by less than the margin.
TEST(TunedWinner, TheTopOneKeepsCloseCalls) {
  const double inf = std::numeric_limits<double>::infinity();
  // candidates 0-1 (kernels), 2 (the top-1), 3 (cuBLASLt's next algorithm)
  EXPECT_EQ(tuned_winner({9.0, 9.5, 10.0, 10.2}, 2), 0u);     // 10 % faster: the kernel
  EXPECT_EQ(tuned_winner({9.95, 9.97, 10.0, 10.2}, 2), 2u);   // 0.5 % faster: within the margin
  EXPECT_EQ(tuned_winner({9.95, 9.97, 10.0, 10.2}, 2, 0.0), 0u);
  EXPECT_EQ(tuned_winner({11.0, inf, 10.0, 9.5}, 2), 3u);      // another algorithm, 5 % faster
  EXPECT_EQ(tuned_winner({inf, inf, 10.0, inf}, 2), 2u);       // every other candidate failed
  EXPECT_EQ(tuned_winner({9.0, 9.5, inf}, 2), 0u);             // no top-1 time: the fastest
  EXPECT_DOUBLE_EQ(kTuneMargin, 0.01);
}

TEST(TunedWinner, AHostBoundProductGoesToTheCheaperLaunch) {
  // Lease 24's 8x4096x2048 tn from Python: the kernel 10.13 us on the GPU, cuBLASLt 10.04 (the
  // top-1 keeps it on GPU time); per call the host adds a launch (here 3.5 and 7 us) + 8 us.
  const std::vector<double> gpu{10.13, 10.04};
  EXPECT_EQ(tuned_winner(gpu, 1), 1u);
  const std::vector<double> call{per_call_us(gpu[0], 3.5, 8), per_call_us(gpu[1], 7.0, 8)};
  EXPECT_DOUBLE_EQ(call[0], 11.5);
  EXPECT_DOUBLE_EQ(call[1], 15.0);
  EXPECT_EQ(tuned_winner(call, 1), 0u);
  // A product the GPU bounds keeps its GPU times, and the margin.
  EXPECT_DOUBLE_EQ(per_call_us(120.0, 7.0, 8), 120.0);
  EXPECT_EQ(tuned_winner({per_call_us(119.5, 3.5, 8), per_call_us(120.0, 7.0, 8)}, 1), 1u);
}

TEST(TunedWinner, AMarginAgainstCublasLtKeepsACloseKernel) {
  const double inf = std::numeric_limits<double>::infinity();
  // kernels 0-1, cuBLASLt's top-1 2 and its next algorithm 3. Lease 29's 32x8192x4096 tn from Python:
  // cuBLASLt 20.54 us, the kernels 20.79 and 21.06: cuBLASLt on time alone, the kernel with 3 % + 1 us.
  const std::vector<double> us{21.06, 20.79, 20.54, 22.75};
  EXPECT_EQ(tuned_winner(us, 2), 2u);
  EXPECT_EQ(tuned_winner(us, 2, 2, 0, 0), 2u);  // no margin: as before
  EXPECT_EQ(tuned_winner(us, 2, 2, 3, 1), 1u);
  EXPECT_EQ(tuned_winner(us, 2, 2, 1, 0), 2u);  // 1.2 % slower than cuBLASLt: outside a 1 % margin
  // A clear cuBLASLt win stays: 10 % faster than the kernels.
  EXPECT_EQ(tuned_winner({22.0, 23.0, 20.0, 25.0}, 2, 2, 3, 1), 2u);
  // Another cuBLASLt algorithm that wins is held to the margin as well.
  EXPECT_EQ(tuned_winner({20.6, inf, 21.0, 20.3}, 2, 2, 3, 1), 0u);
  EXPECT_EQ(tuned_winner({30.0, inf, 21.0, 20.3}, 2, 2, 3, 1), 3u);
  // No kernel ran: cuBLASLt. A kernel that wins outright is unchanged.
  EXPECT_EQ(tuned_winner({inf, inf, 21.0, 20.3}, 2, 2, 3, 1), 3u);
  EXPECT_EQ(tuned_winner({18.0, 19.0, 21.0, 20.3}, 2, 2, 3, 1), 0u);
}

TEST(TuningFile, RecordsRoundTripWithQuotedKnobs) {
  const TuningRecord a = rec(4096), b = rec(16, kCublasWinner);
  EXPECT_EQ(format_record(a), "NVIDIA H200,0.1.0,5c0d2f0e8a9b1c3d,tn,4096,4096,4096,kadf55d1e9f98f3e8,\"r=m,s=2,d=h,k=1\",118.25,124.5");
  EXPECT_EQ(format_record(b), "NVIDIA H200,0.1.0,5c0d2f0e8a9b1c3d,tn,16,4096,4096,cublas,,118.25,124.5");
  const std::string text = std::string(kTuningHeader) + "\n# a comment\n" + format_record(a) + "\r\n\n" + kTuningHeader +
                           "\n" + format_record(b) + "\n";
  const auto recs = parse_tuning(text, "t.csv");
  ASSERT_EQ(recs.size(), 2u);
  EXPECT_EQ(recs[0], a);
  EXPECT_EQ(recs[1], b);
}

// lt_algo (autotune_lt_algos > 1): an optional 12th field, written only when not 0, so records of
// the top-1 and of kernels keep the 11 fields older files have; a line without it reads as 0.
TEST(TuningFile, LtAlgoIsAnOptionalTwelfthField) {
  TuningRecord algo = rec(1008, kCublasWinner);
  algo.n = algo.k = 1008;
  algo.us = 52.25;
  algo.cublas_us = 63.5;
  algo.lt_algo = 2;
  EXPECT_EQ(format_record(algo), "NVIDIA H200,0.1.0,5c0d2f0e8a9b1c3d,tn,1008,1008,1008,cublas,,52.25,63.5,2");
  const std::string top1 = format_record(rec(16, kCublasWinner));
  EXPECT_EQ(std::count(top1.begin(), top1.end(), ','), 10) << top1;
  // An older file (11 fields, one header) with a new record appended reads whole; explicit 0s too.
  const std::string old_line = "NVIDIA H200,0.1.0,5c0d2f0e8a9b1c3d,tn,16,4096,4096,cublas,,118.25,124.5";
  const std::string text = std::string(kTuningHeader) + "\n" + old_line + "\n" + format_record(algo) + "\n" +
                           format_record(rec(4096)) + ",0\n" + old_line + ",0\n";
  const auto recs = parse_tuning(text, "t.csv");
  ASSERT_EQ(recs.size(), 4u);
  EXPECT_EQ(recs[0], rec(16, kCublasWinner));
  EXPECT_EQ(recs[0].lt_algo, 0);
  EXPECT_EQ(recs[1], algo);
  EXPECT_EQ(recs[2], rec(4096));
  EXPECT_EQ(recs[3], recs[0]);
  for (int a = 0; a <= kMaxTuningLtAlgo; ++a) {
    algo.lt_algo = a;
    const auto one = parse_tuning(format_record(algo) + "\n", "t.csv");
    ASSERT_EQ(one.size(), 1u);
    EXPECT_EQ(one[0], algo);
  }
}

TEST(TuningFile, LtAlgoPersistsAndTheLastRecordWins) {
  compile_test::ScratchDir dir;
  const std::string path = dir.path() + "/tuning.csv";
  TuningRecord algo = rec(64, kCublasWinner);
  algo.lt_algo = 3;
  {
    TuningTable t(path, "NVIDIA H200", "0.1.0", "5c0d2f0e8a9b1c3d");
    t.add(rec(32, kCublasWinner));
    t.add(algo);
    EXPECT_EQ(t.find(Layout::tn, 64, 4096, 4096)->lt_algo, 3);
  }
  EXPECT_EQ(test::slurp(path).rfind(std::string(kTuningHeader) + "\n", 0), 0u) << "the header is unchanged";
  TuningTable again(path, "NVIDIA H200", "0.1.0", "5c0d2f0e8a9b1c3d");
  again.load();
  ASSERT_NE(again.find(Layout::tn, 64, 4096, 4096), nullptr);
  EXPECT_EQ(*again.find(Layout::tn, 64, 4096, 4096), algo);
  EXPECT_EQ(again.find(Layout::tn, 32, 4096, 4096)->lt_algo, 0);
  again.add(rec(64, kCublasWinner));  // tuned again with the top-1 winning
  TuningTable last(path, "NVIDIA H200", "0.1.0", "5c0d2f0e8a9b1c3d");
  last.load();
  EXPECT_EQ(last.find(Layout::tn, 64, 4096, 4096)->lt_algo, 0);
}

TEST(TuningFile, BadLinesNameTheFileAndLine) {
  const std::string head = std::string(kTuningHeader) + "\n";
  auto err = [&](const std::string& line) { return error_of([&] { parse_tuning(head + line + "\n", "t.csv"); }); };
  EXPECT_EQ(err("a,b,c"), std::string("t.csv:2: 3 fields, expected 11 (") + kTuningHeader + ") or 12 (with lt_algo)");
  EXPECT_EQ(err("H200,0.1.0,h,tn,8,8,8,cublas,,1,1,1,1"),
            std::string("t.csv:2: 13 fields, expected 11 (") + kTuningHeader + ") or 12 (with lt_algo)");
  for (const char* a : {"8", "-1", "x", "", "01", "1.0"})
    EXPECT_EQ(err(std::string("H200,0.1.0,h,tn,8,8,8,cublas,,1,1,") + a),
              std::string("t.csv:2: lt_algo must be an integer in [0, 7] (got '") + a + "')");
  EXPECT_EQ(err("H200,0.1.0,h,tn,8,8,8,kadf55d1e9f98f3e8,\"r=m,s=2,d=h,k=1\",1,1,2"),
            "t.csv:2: lt_algo 2 is a cuBLASLt algorithm, the winner is kadf55d1e9f98f3e8");
  EXPECT_EQ(err("H200,0.1.0,h,tn,8,8,8,kadf55d1e9f98f3e8,\"r=m,s=2,d=h,k=1\",1,1,0"), "");
  EXPECT_EQ(err("H200,0.1.0,h,xx,8,8,8,cublas,,1,1"), "t.csv:2: unknown layout 'xx' (expected tn, nt, nn or tt)");
  EXPECT_EQ(err("H200,0.1.0,h,tn,8x,8,8,cublas,,1,1"), "t.csv:2: bad m '8x'");
  EXPECT_EQ(err("H200,0.1.0,h,tn,4,8,8,cublas,,1,1").rfind("t.csv:2: M must be a multiple of 8", 0), 0u);
  EXPECT_EQ(err("H200,0.1.0,h,tn,8,8,8,kxyz,,1,1"),
            "t.csv:2: winner 'kxyz' is neither cublas nor a kernel ID (k + 16 hex digits)");
  EXPECT_EQ(err("H200,0.1.0,h,tn,8,8,8,cublas,r=h,1,1"), "t.csv:2: cublas takes no knobs (got 'r=h')");
  EXPECT_EQ(err("H200,0.1.0,h,tn,8,8,8,kadf55d1e9f98f3e8,fast,1,1").rfind("t.csv:2: ", 0), 0u);
  EXPECT_EQ(err("H200,0.1.0,h,tn,8,8,8,cublas,,nan,1"), "t.csv:2: us must be a positive number of microseconds (got 'nan')");
  EXPECT_EQ(err("H200,0.1.0,h,tn,8,8,8,cublas,,1,-2"), "t.csv:2: cublas_us must be a positive number of microseconds (got '-2')");
  EXPECT_EQ(err(",0.1.0,h,tn,8,8,8,cublas,,1,1"), "t.csv:2: empty gpu name");
  // Binary garbage stays one printable line.
  const std::string bad = err(std::string("\x01\x02,\xff", 4));
  EXPECT_EQ(bad.find('\n'), std::string::npos);
}

TEST(TuningFile, TableAppliesOnlyMatchingRecordsAndPersists) {
  compile_test::ScratchDir dir;
  const std::string path = dir.path() + "/sub/tuning.csv";
  {
    TuningTable t(path, "NVIDIA H200", "0.1.0", "5c0d2f0e8a9b1c3d");
    t.load();  // missing file: empty
    EXPECT_EQ(t.size(), 0u);
    t.add(rec(4096));
    t.add(rec(16, kCublasWinner));
    TuningRecord other = rec(32);
    other.gpu = "NVIDIA H100";
    t.add(other);  // persisted, not applied here
    EXPECT_EQ(t.size(), 2u);
  }
  const std::string text = test::slurp(path);
  EXPECT_EQ(text.rfind(std::string(kTuningHeader) + "\n", 0), 0u);
  EXPECT_EQ(text.find(kTuningHeader, 1), std::string::npos) << "one header";
  TuningTable again(path, "NVIDIA H200", "0.1.0", "5c0d2f0e8a9b1c3d");
  again.load();
  EXPECT_EQ(again.size(), 2u);
  EXPECT_EQ(again.ignored(), 1u);
  ASSERT_NE(again.find(Layout::tn, 4096, 4096, 4096), nullptr);
  EXPECT_EQ(again.find(Layout::tn, 4096, 4096, 4096)->winner, "kadf55d1e9f98f3e8");
  EXPECT_EQ(again.find(Layout::tn, 16, 4096, 4096)->winner, kCublasWinner);
  EXPECT_EQ(again.find(Layout::tn, 32, 4096, 4096), nullptr);
  // Another model's or version's records do not apply; the last record of a problem wins.
  TuningTable other_model(path, "NVIDIA H200", "0.1.0", "ffffffffffffffff");
  other_model.load();
  EXPECT_EQ(other_model.size(), 0u);
  TuningRecord newer = rec(4096, kCublasWinner);
  again.add(newer);
  TuningTable last(path, "NVIDIA H200", "0.1.0", "5c0d2f0e8a9b1c3d");
  last.load();
  EXPECT_EQ(last.find(Layout::tn, 4096, 4096, 4096)->winner, kCublasWinner);
}

TEST(TuningFile, ConcurrentAppendsKeepWholeLines) {
  compile_test::ScratchDir dir;
  const std::string path = dir.path() + "/tuning.csv";
  std::vector<std::thread> writers;
  for (int w = 0; w < 4; ++w)
    writers.emplace_back([&, w] {
      TuningTable t(path, "NVIDIA H200", "0.1.0", "5c0d2f0e8a9b1c3d");
      for (int i = 0; i < 50; ++i) t.add(rec(8 * (w * 50 + i + 1)));
    });
  for (auto& t : writers) t.join();
  TuningTable t(path, "NVIDIA H200", "0.1.0", "5c0d2f0e8a9b1c3d");
  ASSERT_NO_THROW(t.load());
  EXPECT_EQ(t.size(), 200u);
}

TEST(TuningFile, UnreadableFilesAreClearErrors) {
  compile_test::ScratchDir dir;
  TuningTable folder(dir.path(), "g", "v", "h");  // a folder, not a file
  EXPECT_NE(error_of([&] { folder.load(); }).find(dir.path()), std::string::npos);
  std::ofstream(dir.path() + "/t.csv") << kTuningHeader << "\nH200,0.1.0,h,tn,8,8,8\n";
  TuningTable bad(dir.path() + "/t.csv", "g", "v", "h");
  EXPECT_EQ(error_of([&] { bad.load(); }).rfind(dir.path() + "/t.csv:2: 7 fields, expected 11 (", 0), 0u);
  TuningTable unwritable("/proc/cks_tuning.csv", "g", "v", "h");
  EXPECT_NE(error_of([&] { unwritable.add(rec(8)); }).find("cannot open tuning file '/proc/cks_tuning.csv'"), std::string::npos);
}
