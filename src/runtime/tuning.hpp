// The autotune results file (docs/library.md "Tuning file"), in the spirit of PyTorch's TunableOp:
// a CSV that the runtime appends one line to per problem it tunes, and that later processes read
// instead of timing again.
//
//   gpu,cks_version,model_hash,layout,m,n,k,winner,knobs,us,cublas_us
//   NVIDIA H200,0.1.0,5c0d2f0e8a9b1c3d,tn,4096,4096,4096,kadf55d1e9f98f3e8,"r=m,s=2,d=h,k=1",118.2,124.9
//   NVIDIA H200,0.1.0,5c0d2f0e8a9b1c3d,tn,16,4096,4096,cublas,,9.1,9.1
//   NVIDIA H200,0.1.0,5c0d2f0e8a9b1c3d,nn,1008,1008,1008,cublas,,52.3,63.9,2
//
// An optional 12th field, lt_algo, is the index of the cuBLASLt heuristic's algorithm that won
// (autotune_lt_algos > 1): written only when it is not 0, so a record of the top-1 or a kernel is
// the 11-field line it always was, and a line without it reads as 0. cublas_us stays the top-1's
// time (the reference).
// The header line may repeat (several processes appending); '#' lines are comments. A record is
// reused only when its GPU name, cks version and model hash equal the runtime's (the validators);
// the last record of a problem wins.
#pragma once
#include <cstdint>
#include <map>
#include <algorithm>
#include <optional>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

#include "cks/catalogue.hpp"

namespace cks::rt {

inline constexpr const char* kTuningHeader = "gpu,cks_version,model_hash,layout,m,n,k,winner,knobs,us,cublas_us";
inline constexpr const char* kCublasWinner = "cublas";
inline constexpr int kMaxTuningLtAlgo = 7;  // lt_algo, at most (autotune_lt_algos <= 8)

// A candidate replaces cuBLASLt's heuristic top-1 only when its median is at least this much faster:
// a closer call is within the tuning pass's noise, and the top-1 keeps it. Lease 22's 27 runs replayed
// (scripts/analysis/autotune_ab.py --margin): at 1 % the problems below 0.98x cuBLASLt in the
// steady-state bench fall from 24 to 14 in all, the geomean from 1.0300 to 1.0298 (docs/runtime-results.md).
inline constexpr double kTuneMargin = 0.01;

// The time per call of back-to-back calls of a candidate: its GPU time, unless the host's is longer
// (its launch cost plus the caller's own time per call).
inline double per_call_us(double gpu_us, double launch_us, double caller_us) { return std::max(gpu_us, launch_us + caller_us); }

// Autotune's winner among the timed medians us (infinity: failed), where us[top1] is cuBLASLt's
// heuristic top-1: the fastest, unless it beats the top-1 by less than margin (then top1).
inline size_t tuned_winner(const std::vector<double>& us, size_t top1, double margin = kTuneMargin) {
  size_t best = top1;
  for (size_t i = 0; i < us.size(); ++i)
    if (us[i] < us[best]) best = i;
  if (best != top1 && us[top1] < 1e300 && us[best] > us[top1] * (1.0 - margin)) best = top1;
  return best;
}

// With a margin against cuBLASLt (lt_pct, lt_us > 0): when the winner above is cuBLASLt (top1 or
// another of its algorithms, indices >= kernels; the kernels come first), the fastest kernel wins
// instead unless cuBLASLt beats it by more than lt_pct % + lt_us. Back to back from Python a call on
// cuBLASLt costs more than autotune's timing says: in leases 25 and 29 (the same wheel, bundle and
// 975 problems) the model's top-1 kernel ran at 1.09x torch.matmul where autotune had chosen
// cuBLASLt on GPU times 15-30 us, cuBLASLt itself at 1.00x and 0.95x; replayed over both checks
// (scripts/analysis/lt_margin_replay.py), a margin of 3 % + 1 us cut the problems below 0.98x from
// 37 to 20 and from 68 to 25; measured with it, lease 29 read 22 (docs/library.md).
inline size_t tuned_winner(const std::vector<double>& us, size_t top1, size_t kernels, double lt_pct, double lt_us,
                           double margin = kTuneMargin) {
  const size_t best = tuned_winner(us, top1, margin);
  if (best < kernels || (lt_pct <= 0 && lt_us <= 0)) return best;
  size_t k = kernels;
  for (size_t i = 0; i < kernels; ++i)
    if (us[i] < 1e300 && (k == kernels || us[i] < us[k])) k = i;
  if (k == kernels) return best;
  return us[k] <= us[best] * (1.0 + lt_pct / 100.0) + lt_us ? k : best;
}

struct TuningRecord {
  std::string gpu, cks_version, model_hash;
  Layout layout = Layout::tn;
  int64_t m = 0, n = 0, k = 0;
  std::string winner;  // a kernel ID or "cublas"
  std::string knobs;   // the winner's RuntimeKnobs::canonical(); "" for cublas
  double us = 0;       // the winner's time per call
  double cublas_us = 0;  // cuBLASLt's heuristic top-1's time per call (the reference)
  int lt_algo = 0;       // winner cublas: the heuristic's algorithm index that won (0: the top-1)
  bool operator==(const TuningRecord&) const = default;
};

// One CSV line (no newline).
std::string format_record(const TuningRecord& r);
// Every record of a file's text. Throws Error "<origin>:<line>: ..." on a malformed line: wrong
// field count (11, or 12 with lt_algo), a bad layout or dimension, a winner that is neither
// "cublas" nor a kernel ID, unparsable knobs, a time that is not a positive finite number, an
// lt_algo that is not an integer in [0, 7] or is not 0 with a kernel winner.
std::vector<TuningRecord> parse_tuning(std::string_view text, const std::string& origin);

// The records of `path` that match the validators, by problem (the last one wins); a missing file
// is empty. Throws Error like parse_tuning, or when the file cannot be read.
class TuningTable {
 public:
  TuningTable() = default;
  TuningTable(std::string path, std::string gpu, std::string cks_version, std::string model_hash);
  void load();  // (re)reads the file
  const TuningRecord* find(Layout layout, int64_t m, int64_t n, int64_t k) const;
  // Appends the record to the file (one write(2) in O_APPEND mode, so concurrent processes do not
  // interleave lines; the header first when the file is new; the folder created) and to the table.
  // Throws Error when the file cannot be written.
  void add(const TuningRecord& r);
  const std::string& path() const { return path_; }
  size_t size() const { return by_problem_.size(); }
  size_t ignored() const { return ignored_; }  // records of other GPUs, versions or models

 private:
  std::string path_, gpu_, cks_version_, model_hash_;
  std::map<std::tuple<int, int64_t, int64_t, int64_t>, TuningRecord> by_problem_;
  size_t ignored_ = 0;
};

}  // namespace cks::rt
