// cks/sampling.hpp — the paper's static efficiency score and the candidate-sampling policies
// that choose which candidates of a group are measured.
//
// Static score of candidate c on problem (M, N, K) (the paper's equation was lost; this is our
// definition from its text, see docs/shapes-and-sampling.md):
//   n_M = ceil(M/T_M), n_N = ceil(N/T_N), n_K = ceil(K/T_K)
//   s   = split-K factor (knobs.splits under the split_k decomposition, else 1)
//   n_c = ceil(n_M/c_M) * ceil(n_N/c_N) * s          clusters (work units) the launch needs
//   S_c = max(1, floor(S_SM / (c_M c_N)))             clusters resident at once (the paper's
//                                                     "number of SM clusters"; one CTA per SM)
//   W   = ceil(n_c / S_c)                             cluster waves
//   fill     = M N min(s, n_K) / (W S_SM T_M T_N) / (1 + 4 (s - 1) R / K)   in (0, 1]:
//              useful output area over the GPU's CTA-slot area of all waves, so a ragged last
//              wave, SMs left idle by cluster packing, a cluster overshooting the tile grid, masked
//              edge tiles and empty split-K slices all count as waste; the last factor charges
//              split-K's fp32 partials (8 (s-1) M N bytes through HBM) against the compute time
//              2 M N K / peak, R = hw ridge intensity
//   cluster_use = n_M n_N / (ceil(n_M/c_M) c_M * ceil(n_N/c_N) c_N)  in (0, 1]: the share of the
//              launched cluster grid's CTAs that own a tile; an explicit penalty for clusters larger
//              than the tile grid (in a single partial wave the idle CTAs cost no time in `fill`)
//   pipeline = min(S, ceil(n_K / s), kPipelineRefStages) / kPipelineRefStages
//              S = resolved stage count; stages beyond the K iterations available do not help
//   tile     = min(1, r / R_tile), r = t_M t_N / (t_M + t_N) with t = min(T, problem dim), the
//              tile's operand reuse in flop/byte (T_K cancels), R_tile = per-SM BF16 peak / per-SM
//              TMA bandwidth: the reuse at which TMA can feed WGMMA; 0 if accumulators spill
//   score = fill * cluster_use * pipeline^kPipelineExponent * tile^kTileExponent   in [0, 1]
// The paper's first term (wave filling, oversized-cluster penalty) is fill * cluster_use, its
// remaining terms (deeper pipelines, sufficiently large tiles) the other two factors. We combine
// them as factors of one efficiency estimate (additive terms of its logarithm) so the score is
// scale-free: in a weighted sum the near-constant pipeline and tile terms swamp the wave term on
// small problems, where wave filling matters most.
// Stream-K's own decomposition is not modelled (scored like data-parallel).
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "cks/catalogue.hpp"
#include "cks/hw.hpp"
#include "cks/shapes.hpp"

namespace cks {

inline constexpr int kPipelineRefStages = 4;  // Hopper TMA->WGMMA latency is covered by ~4 stages
inline constexpr double kPipelineExponent = 0.5;
inline constexpr double kTileExponent = 1.0;

struct ScoreTerms {
  double fill = 0, cluster_use = 0, pipeline = 0, tile = 0;
  double score = 0;   // fill * cluster_use * pipeline^kPipelineExponent * tile^kTileExponent
  long clusters = 0;  // n_c
  long waves = 0;     // W
};
// `stages` is the resolved stage count (resources(k, hw).stages for auto kernels) and
// `spills` resources(k, hw).spills_expected; static_score() computes both with resources().
ScoreTerms static_score_terms(const GemmShape& p, const KernelDesc& k, const RuntimeKnobs& knobs,
                              const HardwareDesc& hw, int stages, bool spills);
double static_score(const GemmShape& p, const KernelDesc& k, const RuntimeKnobs& knobs, const HardwareDesc& hw);

enum class Policy : uint8_t { uniform = 0, top = 1, biased_diverse = 2 };
std::string_view to_string(Policy p);
Policy parse_policy(std::string_view s);  // throws Error "unknown sampling policy 'x' (expected ...)"

// One pool candidate in the static ranking.
struct RankedCandidate {
  uint32_t pool_index = 0;  // index into the pool vector
  double score = 0;
};
// The static ranking: the pool sorted by descending static score, ties by position in the pool
// (the catalogue's order: kernel canonical text, then knob_settings() order). `kernels` is the
// vector the candidates' `kernel` indices refer to. sample_candidates() selects without this
// full sort (partial selection), with the same order.
std::vector<RankedCandidate> rank_candidates(const GemmShape& p, const std::vector<KernelDesc>& kernels,
                                             const std::vector<Candidate>& pool, const HardwareDesc& hw);

struct SampleOptions {
  Policy policy = Policy::biased_diverse;
  double alpha = 0.75;        // biased-diverse: fraction of the budget taken from the top
  std::optional<int> budget;  // nullopt = auto_budget(tags_for(problem))
  uint64_t seed = 0;
};
// Throws Error when alpha is outside [0, 1] or budget < 1.
void validate(const SampleOptions& o);

struct SampledCandidate {
  Candidate candidate;
  double score = 0;
  long static_rank = 0;   // 1-based position in the static ranking of the pool
  bool from_top = false;  // taken from the top of the ranking (else drawn by exploration)
};
struct Sample {
  std::vector<SampledCandidate> rows;  // sorted by static_rank
  long pool_size = 0;
  int requested_budget = 0;   // before capping at the pool size
  int budget = 0;             // min(requested_budget, pool_size)
  std::string budget_reason;  // "explicit", or budget_reason(tags) for auto
  int n_top = 0, n_explore = 0;
};
// Policies (B = budget capped at the pool size; a pool no larger than the budget is taken whole):
//   uniform        B candidates uniformly at random without replacement;
//   top            the top B of the static ranking;
//   biased-diverse the top ceil(alpha B) of the ranking plus B - ceil(alpha B) drawn uniformly
//                  without replacement from the rest of the ranked list.
// Random draws use mt19937_64 seeded with sample_stream_seed(seed, problem, layout), so the
// same seed gives independent, reproducible draws for every group.
Sample sample_candidates(const GemmShape& p, Layout layout, const std::vector<KernelDesc>& kernels,
                         const std::vector<Candidate>& pool, const SampleOptions& o, const HardwareDesc& hw);
uint64_t sample_stream_seed(uint64_t seed, const GemmShape& p, Layout layout);

// A pool file: kernel IDs ("k" + 16 hex digits), one per line; blank lines and '#' comments
// ignored. Returns the catalogue's candidates of those kernels, in catalogue order. Throws
// Error naming the line of an ID not in the catalogue, or when the file cannot be read.
std::vector<Candidate> read_pool_file(const std::string& path, const Catalogue& cat);

}  // namespace cks
