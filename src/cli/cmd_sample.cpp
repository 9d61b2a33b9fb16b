// cks sample — choose the candidates of one group to measure (static score + sampling policy).
#include <charconv>
#include <cstdio>
#include <iostream>

#include "cks/sampling.hpp"
#include "cli/commands.hpp"
#include "cli/util.hpp"

namespace cks::cli {

namespace {

struct SampleCliOpts {
  ProblemOpts problem;
  std::string policy = "biased-diverse";
  double alpha = 0.75;
  std::string budget = "auto";
  uint64_t seed = 0;
  std::string pool;
  std::string format;
};

// "auto" or a positive integer.
std::optional<int> parse_budget(const std::string& s) {
  if (s == "auto") return std::nullopt;
  long v = 0;
  const auto r = std::from_chars(s.data(), s.data() + s.size(), v);
  if (r.ec != std::errc() || r.ptr != s.data() + s.size() || v > (1L << 30))
    throw Error("--budget must be 'auto' or a positive integer (got '" + s + "')");
  if (v < 1) throw Error("--budget must be at least 1 (got " + s + ")");
  return static_cast<int>(v);
}

Table sample_table(const Sample& s, const Catalogue& cat, const SampleOptions& o) {
  Table t({"sample_rank", "kernel_id", "kernel", "knobs", "static_score", "static_rank", "from", "policy", "budget",
           "seed"});
  t.reserve(s.rows.size());
  const std::string policy(to_string(o.policy)), seed = std::to_string(o.seed);
  int64_t rank = 0;
  for (const auto& r : s.rows) {
    const KernelDesc& k = cat.kernels()[r.candidate.kernel];
    t.add_row({++rank, k.id(), k.canonical(), r.candidate.knobs.canonical(), r.score, int64_t{r.static_rank},
               std::string(r.from_top ? "top" : "explore"), policy, int64_t{s.budget}, seed});
  }
  return t;
}

}  // namespace

void register_sample(CLI::App& app) {
  auto* cmd = app.add_subcommand("sample", "choose the candidates of one group to measure");
  static SampleCliOpts o;
  add_problem(cmd, o.problem);
  cmd->add_option("--policy", o.policy, "uniform, top or biased-diverse")->capture_default_str();
  cmd->add_option("--alpha", o.alpha, "biased-diverse: fraction of the budget from the top of the ranking")->check(fraction())
      ->capture_default_str();
  cmd->add_option("--budget", o.budget, "candidates to sample: a number, or auto (2000; 1000 largest; 3000 atypical)")
      ->capture_default_str();
  cmd->add_option("--seed", o.seed, "seed of the random draws")->transform(seed())->capture_default_str();
  cmd->add_option("--pool", o.pool, "restrict the pool to the kernel IDs in this file (one per line)");
  add_format(cmd, o.format);
  cmd->callback([] {
    const Format f = parse_format(o.format);
    const Layout layout = validate_problem(o.problem);
    const HardwareDesc hw = hw_preset(o.problem.preset);
    SampleOptions so;
    so.policy = parse_policy(o.policy);
    so.alpha = o.alpha;
    so.budget = parse_budget(o.budget);
    so.seed = o.seed;
    validate(so);

    const Catalogue& cat = Catalogue::get(layout);
    const auto pool = o.pool.empty() ? cat.candidates() : read_pool_file(o.pool, cat);
    const GemmShape p{o.problem.m, o.problem.n, o.problem.k};
    const Sample s = sample_candidates(p, layout, cat.kernels(), pool, so, hw);
    std::fprintf(stderr, "cks sample: %s: pool %ld candidates, budget %d (%s%s), %d top + %d explore\n",
                 group_key(p, layout).c_str(), s.pool_size, s.budget, s.budget_reason.c_str(),
                 s.budget < s.requested_budget ? ", whole pool" : "", s.n_top, s.n_explore);
    sample_table(s, cat, so).write(std::cout, f);
  });
}

}  // namespace cks::cli
