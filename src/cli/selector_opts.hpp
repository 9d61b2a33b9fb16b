// The ranking options of cks::Selector on the command line (cks select, cks eval --prefilter,
// cks bench select): the two-stage prefilter and cascade of docs/models.md ("Deployment").
#pragma once
#include <array>
#include <cmath>
#include <memory>
#include <optional>
#include <utility>
#include <sstream>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "cks/models.hpp"
#include "cks/plan.hpp"
#include "cks/selector.hpp"
#include "cli/util.hpp"

namespace cks::cli {

// --cascade-terms, --cascade-keep, --select-threads, --prior-weight, --prior-terms, the evidence
// and prior options; with `exhaustive` also --prefilter N and --exhaustive (= --prefilter 0; the
// flag lands in *exhaustive).
inline void add_selector_options(CLI::App* cmd, SelectorOptions& o, bool* exhaustive = nullptr) {
  if (exhaustive) {
    auto* p = cmd->add_option("--prefilter", o.prefilter,
                              "candidates the prefilter keeps for the model (0 = exhaustive: the model scores "
                              "every candidate of the catalogue)")->transform(count())
                  ->capture_default_str();
    cmd->add_flag("--exhaustive", *exhaustive, "rank the whole catalogue with the model (no prefilter)")->excludes(p);
  }
  cmd->add_option("--cascade-terms", o.cascade_terms,
                  "XGBoost: trees scoring every prefiltered candidate before the best get the rest (0 = all trees)")->transform(count())
      ->capture_default_str();
  cmd->add_option("--cascade-keep", o.cascade_keep, "XGBoost: candidates that get every tree")->transform(count())->capture_default_str();
  cmd->add_option("--prior-weight", o.prior_weight,
                  "weight of the model prior in the prefilter key (0 = static score only)")->check(non_negative_real())
      ->capture_default_str();
  cmd->add_option("--prior-terms", o.prior_terms, "XGBoost: trees scoring the prior (computed once per layout)")->transform(count())
      ->capture_default_str();
  cmd->add_option("--select-threads", o.select_threads,
                  "threads scoring one select (XGBoost: phi and the cascade's rows in blocks; the ranking is the "
                  "same for any count; 0 = min(4, hardware threads), 1 = the calling thread only)")
      ->transform(uint_in(0, 1024))
      ->capture_default_str();
  cmd->add_option("--evidence-groups", o.evidence_groups,
                  "join the prefilter's candidates with the measured leaders of this many nearest training groups "
                  "(the model file's evidence; 0 = off)")->transform(count())
      ->capture_default_str();
  cmd->add_option("--evidence-top", o.evidence_top, "leaders taken from each of those groups")->transform(count())
      ->capture_default_str();
  cmd->add_option_function<std::string>(
         "--prior-mode",
         [&o](const std::string& v) {
           if (v == "mean") o.prior_mode = PriorMode::mean;
           else if (v == "nearest") o.prior_mode = PriorMode::nearest;
           else throw Error("--prior-mode: '" + v + "' is not mean or nearest");
         },
         "the prior's dependence on the problem: mean (one prior, the mean over the reference problems) "
         "or nearest (the prior of the nearest reference problem)")
      ->default_str("mean");
  cmd->add_option_function<std::vector<std::string>>(
         "--prior-problems",
         [&o](const std::vector<std::string>& v) {
           o.prior_problems.clear();
           for (const std::string& text : v) {
             long m = 0, n = 0, k = 0;
             char x1 = 0, x2 = 0;
             std::istringstream in(text);
             if (!(in >> m >> x1 >> n >> x2 >> k) || x1 != 'x' || x2 != 'x' || in.peek() != EOF || m <= 0 || n <= 0 || k <= 0 ||
                 m > kMaxProblemDim || n > kMaxProblemDim || k > kMaxProblemDim)
               throw Error("--prior-problems: '" + text + "' is not MxNxK with M, N, K in [1, 2^31-1]");
             o.prior_problems.push_back({m, n, k});
           }
         },
         "the prior's reference problems, MxNxK,... (default: 6 problems of large and small M, N and K)")
      ->delimiter(',');
}

// Layout names (tn, nt, nn, tt) as the bit set of SelectorOptions::swap_layouts.
inline unsigned parse_swap_layouts(const std::vector<std::string>& names, const std::string& what) {
  unsigned bits = 0;
  for (const std::string& n : names) {
    Layout l;
    try {
      l = parse_layout(n);
    } catch (const Error&) {
      throw Error(what + ": '" + n + "' is not a layout (tn, nt, nn or tt)");
    }
    bits |= 1u << static_cast<unsigned>(l);
  }
  if (!bits) throw Error(what + ": no layout given");
  return bits;
}

// --orientations, --swap-margin, --orientation-depth, --swap-max-m and --swap-layouts (cks select,
// cks bench select, cks bundle, cks eval): whether the transposed problem's ranking, run by swapped
// kernels, leads and is interleaved with the problem's own (SelectorOptions::orientations;
// docs/catalogue.md, "Swapped kernels"). cks eval's real picks look measured rows up by catalogue
// index, which a swapped pick does not have: there it counts as unmeasured.
inline void add_orientation_options(CLI::App* cmd, SelectorOptions& o) {
  cmd->add_option_function<std::string>(
         "--orientations",
         [&o](const std::string& v) { o.orientations = parse_orientations(v, "--orientations"); },
         "both: also the transposed problem (N, M, K), run by swapped kernels (row-major D^T); where its static "
         "estimate leads, its ranking interleaved with the own one, the swapped first (measured in lease 40); "
         "own: the problem's layout catalogue only")
      ->default_str("both");
  cmd->add_option("--swap-margin", o.swap_margin,
                  "both: the swapped orientation leads when its static estimate beats the own one's by more than this "
                  "fraction")->check(non_negative_real())->capture_default_str();
  cmd->add_option("--orientation-depth", o.orientation_depth,
                  "both: candidates of each ranking whose best static score is its orientation's estimate")
      ->transform(positive_count())->capture_default_str();
  cmd->add_option("--swap-max-m", o.swap_max_m,
                  "both: rank the transposed problem only for M up to this (0: any M; chosen on training groups, lease 41)")
      ->check(int_in(0, kMaxProblemDim))->capture_default_str();
  cmd->add_option("--swap-tall-min-m", o.swap_tall_min_m,
                  "both: also rank the transposed problem, in any layout, for M above this with N at most "
                  "--swap-tall-max-n (0: no such problems; chosen on training groups, lease 43)")
      ->check(int_in(0, kMaxProblemDim))->capture_default_str();
  cmd->add_option("--swap-tall-max-n", o.swap_tall_max_n, "both: the largest N of --swap-tall-min-m's and --swap-tall-max-k's problems")
      ->check(int_in(1, kMaxProblemDim))->capture_default_str();
  cmd->add_option("--swap-tall-max-k", o.swap_tall_max_k,
                  "both: also rank the transposed problem, in any layout, for M above --swap-max-m with N at most "
                  "--swap-tall-max-n and K at most this (0: no such problems)")
      ->check(int_in(0, kMaxProblemDim))->capture_default_str();
  cmd->add_option_function<std::vector<std::string>>(
         "--swap-layouts", [&o](const std::vector<std::string>& v) { o.swap_layouts = parse_swap_layouts(v, "--swap-layouts"); },
         "both: the layouts whose transposed problem is ranked, comma-separated (default: tn,nn,tt; all four: tn,nt,nn,tt)")
      ->delimiter(',');
}

// --sliced-max-tiles, --sliced-max-m, --sliced-min-k, --sliced-max-ctas, --sliced-min-slice-k and
// --sliced-alternates (cks select, cks bench select, cks bundle, cks eval): the sliced-K rule
// (SelectorOptions::sliced, SlicedRule; docs/catalogue.md, "Sliced-K kernels").
inline void add_sliced_options(CLI::App* cmd, SelectorOptions& o) {
  cmd->add_option("--sliced-max-tiles", o.sliced.max_tiles,
                  "sliced-K rule: lead the ranking of problems of at most this many 64x64 tiles (and --sliced-max-m, "
                  "--sliced-min-k) with a sliced-K kernel (0: off; the defaults were chosen on leases 50 and 51's training groups)")
      ->check(int_in(0, kMaxProblemDim))->capture_default_str();
  cmd->add_option("--sliced-max-m", o.sliced.max_m, "sliced-K rule: the largest M of its region (0: any M)")
      ->check(int_in(0, kMaxProblemDim))->capture_default_str();
  cmd->add_option("--sliced-min-k", o.sliced.min_k, "sliced-K rule: the smallest K of its region")
      ->check(int_in(1, kMaxProblemDim))->capture_default_str();
  cmd->add_option("--sliced-max-ctas", o.sliced.max_ctas, "sliced-K rule: tiles x slices at most this")
      ->check(int_in(2, kMaxProblemDim))->capture_default_str();
  cmd->add_option("--sliced-min-slice-k", o.sliced.min_slice_k, "sliced-K rule: K / slices at least this")
      ->check(int_in(1, kMaxProblemDim))->capture_default_str();
  cmd->add_option("--sliced-alternates", o.sliced.alternates,
                  "sliced-K rule: further slice counts interleaved into the ranking after its first entry")
      ->transform(count())->capture_default_str();
}

// The options of a "sliced[:tTILES][:mMAX_M][:kMIN_K][:cMAX_CTAS][:sMIN_SLICE_K][:aALTERNATES]" method
// (SelectionMethods: the deployed ranking with these bounds of the sliced-K rule; "sliced" alone is
// the default rule, "sliced:t0" the deployed ranking without it); throws Error on anything else.
inline void parse_sliced_method(const std::string& m, SelectorOptions& so) {
  const std::string bad = "--methods: '" + m + "' is not sliced[:tMAX_TILES][:mMAX_M][:kMIN_K][:cMAX_CTAS][:sMIN_SLICE_K][:aALTERNATES]";
  so.sliced = SlicedRule{};
  size_t b = 6;
  while (b < m.size()) {
    if (m[b] != ':' || b + 2 > m.size()) throw Error(bad);
    const size_t e = std::min(m.find(':', b + 1), m.size());
    const char kind = m[b + 1];
    const std::string v = m.substr(b + 2, e - b - 2);
    if (v.empty() || v.size() > 10 || v.find_first_not_of("0123456789") != std::string::npos) throw Error(bad);
    const long x = std::stol(v);
    if (kind == 't') so.sliced.max_tiles = x;
    else if (kind == 'm') so.sliced.max_m = x;
    else if (kind == 'k' && x >= 1) so.sliced.min_k = x;
    else if (kind == 'c' && x >= 2) so.sliced.max_ctas = x;
    else if (kind == 's' && x >= 1) so.sliced.min_slice_k = x;
    else if (kind == 'a') so.sliced.alternates = static_cast<size_t>(x);
    else throw Error(bad);
    b = e;
  }
}

// Checks the values after parsing; applies --exhaustive.
inline void finish_selector_options(SelectorOptions& o, bool exhaustive) {
  if (exhaustive) o.prefilter = 0;
  if (o.prefilter > 0 && o.cascade_terms > 0 && o.cascade_keep == 0)
    throw Error("--cascade-keep must be >= 1 (or --cascade-terms 0 for no cascade)");
  if (!(o.prior_weight >= 0)) throw Error("--prior-weight must be >= 0");
}

// The selection methods of `cks plan picks|sidebyside` and `cks analyze sidebyside`, by name
// (comma-separated, the deployed one first): deployed (cks select's defaults with the model),
// own (cks select --orientations own: the deployed ranking before session 31),
// prefilterN (cks select --prefilter N: another prefilter size, measured beside the default),
// evidenceG:T (cks select --evidence-groups G --evidence-top T),
// exhaustive (the model over the whole catalogue), static (the static score). `tops`: the depth
// each of the three is ranked to.
// "evidenceG:T" with counts G, T >= 1 (at most 6 digits each): (G, T).
inline std::optional<std::pair<size_t, size_t>> evidence_method(const std::string& m) {
  if (m.rfind("evidence", 0) != 0) return std::nullopt;
  const size_t colon = m.find(':', 8);
  if (colon == std::string::npos) return std::nullopt;
  auto count = [](const std::string& t) -> size_t {
    if (t.empty() || t.size() > 6 || t.find_first_not_of("0123456789") != std::string::npos) return 0;
    return std::stoul(t);
  };
  const size_t g = count(m.substr(8, colon - 8)), t = count(m.substr(colon + 1));
  if (g == 0 || t == 0) return std::nullopt;
  return std::pair{g, t};
}

// The options of a "both[:gF][:mN][:lL+L][:tMxN][:kK]" method (SelectionMethods); throws Error on anything else.
inline void parse_both_method(const std::string& m, SelectorOptions& so) {
  const std::string bad = "--methods: '" + m + "' is not both[:gMARGIN][:mMAX_M][:lLAYOUT+LAYOUT...][:tMIN_MxMAX_N][:kMAX_K]";
  size_t b = 4;
  while (b < m.size()) {
    if (m[b] != ':' || b + 2 > m.size()) throw Error(bad);
    const size_t e = std::min(m.find(':', b + 1), m.size());
    const char kind = m[b + 1];
    const std::string v = m.substr(b + 2, e - b - 2);
    if (v.empty()) throw Error(bad);
    if (kind == 'g') {
      size_t used = 0;
      double g = -1;
      try {
        g = std::stod(v, &used);
      } catch (const std::exception&) {
        throw Error(bad);
      }
      if (used != v.size() || !(g >= 0) || !std::isfinite(g)) throw Error(bad);
      so.swap_margin = g;
    } else if (kind == 'm') {
      if (v.size() > 10 || v.find_first_not_of("0123456789") != std::string::npos) throw Error(bad);
      so.swap_max_m = std::stol(v);
    } else if (kind == 'l') {
      std::vector<std::string> names;
      size_t p = 0;
      while (p <= v.size()) {
        const size_t q = std::min(v.find('+', p), v.size());
        names.push_back(v.substr(p, q - p));
        p = q + 1;
      }
      so.swap_layouts = parse_swap_layouts(names, "--methods " + m);
    } else if (kind == 't') {
      // tMIN_MxMAX_N: also M > MIN_M with N <= MAX_N, any layout (SelectorOptions::swap_tall_*).
      const size_t x = v.find('x');
      const auto digits = [](const std::string& d) {
        return !d.empty() && d.size() <= 10 && d.find_first_not_of("0123456789") == std::string::npos;
      };
      if (x == std::string::npos || !digits(v.substr(0, x)) || !digits(v.substr(x + 1))) throw Error(bad);
      so.swap_tall_min_m = std::stol(v.substr(0, x));
      so.swap_tall_max_n = std::stol(v.substr(x + 1));
      if (so.swap_tall_max_n < 1) throw Error(bad);
    } else if (kind == 'k') {
      // kMAX_K: also M > MAX_M (the m part) with N <= MAX_N (the t part) and K <= MAX_K, any layout.
      if (v.size() > 10 || v.find_first_not_of("0123456789") != std::string::npos) throw Error(bad);
      so.swap_tall_max_k = std::stol(v);
    } else {
      throw Error(bad);
    }
    b = e;
  }
}

struct SelectionMethods {
  std::shared_ptr<const Model> model;
  std::vector<std::unique_ptr<Selector>> selectors;
  std::vector<PickMethod> methods;
  SelectionMethods(const std::string& model_path, const std::string& names, std::array<size_t, 3> tops) {
    const std::string path = model_path.empty() ? Selector::default_model_path() : model_path;
    model = Model::load(path);
    size_t b = 0;
    while (b <= names.size()) {
      const size_t e = std::min(names.find(',', b), names.size());
      const std::string m = names.substr(b, e - b);
      b = e + 1;
      SelectorOptions so;
      if (m == "deployed") {
        selectors.push_back(std::make_unique<Selector>(model, so));
        methods.push_back({m, selectors.back().get(), tops[0]});
      } else if (m == "own") {
        // own: cks select --orientations own (the deployed ranking before session 31, when both
        // orientations became the default), ranked as deep as the deployed method.
        so.orientations = Orientations::own;
        selectors.push_back(std::make_unique<Selector>(model, so));
        methods.push_back({m, selectors.back().get(), tops[0]});
      } else if (m.rfind("prefilter", 0) == 0 && m.size() > 9 &&
                 m.find_first_not_of("0123456789", 9) == std::string::npos && m.size() <= 16 && std::stoul(m.substr(9)) > 0) {
        // prefilterN: cks select's ranking with --prefilter N (the deployed defaults otherwise),
        // ranked as deep as the deployed method.
        so.prefilter = std::stoul(m.substr(9));
        selectors.push_back(std::make_unique<Selector>(model, so));
        methods.push_back({m, selectors.back().get(), tops[0]});
      } else if (const auto ev = evidence_method(m)) {
        // evidenceG:T: cks select --evidence-groups G --evidence-top T (the deployed defaults
        // otherwise), ranked as deep as the deployed method.
        so.evidence_groups = ev->first;
        so.evidence_top = ev->second;
        selectors.push_back(std::make_unique<Selector>(model, so));
        methods.push_back({m, selectors.back().get(), tops[0]});
      } else if (m == "both" || m.rfind("both:", 0) == 0) {
        // both: cks select --orientations both (the deployed ranking of the problem and of its
        // transposed problem, the latter run by swapped kernels, interleaved), ranked as deep as
        // the deployed method. Its picks are matched by kernel ID (plan and analyze sidebyside),
        // not by catalogue index. Variants of the rule: both:gF (--swap-margin F), both:mN
        // (--swap-max-m N), both:lL+L (--swap-layouts L,L), both:tMxN (--swap-tall-min-m M
        // --swap-tall-max-n N), both:kK (--swap-tall-max-k K), in any combination (both:g0.1:m256). "both" alone is the
        // unrestricted rule (any M, every layout) measured in leases 40 and 41, not the deployed
        // default (M <= 256 in tn/nn/tt since session 33, or M > 4096 with N <= 512 since 34, or
        // M > 256 with N <= 512 and K <= 4096 since 38: both:m256:ltn+nn+tt:t4096x512:k4096).
        so.orientations = Orientations::both;
        so.swap_max_m = 0;
        so.swap_layouts = 0xFu;
        so.swap_tall_min_m = 0;
        so.swap_tall_max_k = 0;
        parse_both_method(m, so);
        selectors.push_back(std::make_unique<Selector>(model, so));
        methods.push_back({m, selectors.back().get(), tops[0]});
      } else if (m == "sliced" || m.rfind("sliced:", 0) == 0) {
        // sliced[:tT][:mM][:kK][:cC][:sS][:aA]: the deployed ranking with the sliced-K rule
        // (SlicedRule; parse_sliced_method), ranked as deep as the deployed method. Its sliced-K
        // picks are matched by kernel ID and knobs, like the swapped ones.
        parse_sliced_method(m, so);
        selectors.push_back(std::make_unique<Selector>(model, so));
        methods.push_back({m, selectors.back().get(), tops[0]});
      } else if (m == "exhaustive") {
        so.prefilter = 0;
        selectors.push_back(std::make_unique<Selector>(model, so));
        methods.push_back({m, selectors.back().get(), tops[1]});
      } else if (m == "static") {
        selectors.push_back(std::make_unique<Selector>(Selector::static_score(hw_preset(model->info().hw_preset), so)));
        methods.push_back({m, selectors.back().get(), tops[2]});
      } else {
        throw Error("--methods: unknown method '" + m + "' (expected deployed, own, prefilterN with N >= 1, evidenceG:T with G, T >= 1, both[:gF][:mN][:lL+L][:tMxN][:kK], sliced[:tT][:mM][:kK][:cC][:sS][:aA], exhaustive or static)");
      }
    }
  }
};

}  // namespace cks::cli
