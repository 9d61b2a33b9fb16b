// Computation of phi(p, c, h). Three levels, so that the per-candidate loop stays short:
//   KernelTerms   per kernel x hardware (construction): resources, residency, stage times;
//   ProblemTerms  per problem: byte counts, intensity, logarithms;
//   TileTerms     per problem x kernel: tile grid, paper waves, cluster and panel terms; these
//                 columns are written once into a template row that every candidate of the
//                 kernel copies before its runtime-knob columns are filled in.
// Every formula is written next to its column; feature_list.hpp carries the short definitions
// and docs/features.md the long form.
#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <mutex>
#include <tuple>

#include "cks/features.hpp"
#include "features/feature_list.hpp"

namespace cks {

using namespace features_detail;

namespace {

constexpr double kBytesA = 2.0, kBytesB = 2.0;  // bf16 operands
constexpr double kBytesD = 2.0;                 // bf16 output
constexpr double kBytesC = 0.0;                 // C = void: the epilogue reads no source
constexpr double kBytesPartial = 4.0;           // fp32 split-K / Stream-K partial accumulators
// CUTLASS's pingpong/cooperative kernels split the register file with setmaxnreg: consumers get
// MmaRegisterRequirement (reg_limit_consumer: 232, or 240 under heavy register pressure) and the
// producer warpgroup LoadRegisterRequirement (40, or 24 with the 240 split).
int producer_regs(int consumer_limit) { return consumer_limit >= 240 ? 24 : 40; }
// Non-accumulator registers of a consumer thread (addresses, loop state, descriptors): the same
// allowance the spill rule of resources() uses.
constexpr int kRegOverhead = 24;
constexpr int kRegAllocGranule = 8;  // registers are allocated per warp in units of 256 = 8/thread
// A warpgroup's WGMMA stream is modelled as reaching half of the SM's tensor peak; two consumer
// warpgroups (cooperative, ping-pong) saturate it.
constexpr double kMaxConsumerWgs = 2.0;
// CUTLASS's get_max_cta_occupancy assumes GH100 GPCs of 18 SMs when sizing persistent grids.
constexpr int kMaxSmPerGpc = 18;
// PersistentTileSchedulerSm90StreamKParams::min_iters_per_sk_unit_.
constexpr long kMinItersPerSkUnit = 8;

constexpr size_t col(Feat f) { return static_cast<size_t>(f); }
long ceil_div(long a, long b) { return (a + b - 1) / b; }
long round_up(long a, long b) { return ceil_div(a, b) * b; }
float code(auto e) { return static_cast<float>(static_cast<int>(e)); }

// CTAs of one cluster size that CUTLASS's persistent grid places on the device
// (detail::get_max_cta_occupancy; cluster size 1 => every SM).
long ctas_per_device(int cluster_size, int sm_count) {
  if (cluster_size == 1) return sm_count;
  const long gpcs = sm_count < kMaxSmPerGpc ? 1 : sm_count / kMaxSmPerGpc;
  long ctas = gpcs * (kMaxSmPerGpc - kMaxSmPerGpc % cluster_size);
  const long residual = sm_count < kMaxSmPerGpc ? 0 : sm_count % kMaxSmPerGpc;
  ctas += residual - residual % cluster_size;
  return std::max(1L, std::min<long>(sm_count, ctas));
}

// PersistentTileSchedulerSm90Params::get_log_swizzle_size.
int log_swizzle_size(long blocks_m, long blocks_n, int max_swizzle) {
  const long min_dim = std::min(blocks_m, blocks_n);
  if (max_swizzle >= 8 && min_dim >= 6) return 3;
  if (max_swizzle >= 4 && min_dim >= 3) return 2;
  if (max_swizzle >= 2 && min_dim >= 2) return 1;
  return 0;
}

// Problem-independent terms of one kernel on one GPU.
struct KernelTerms {
  KernelDesc desc;
  KernelResources res;
  bool persistent = false;   // pingpong / cooperative loop over tiles; tma_ws runs one CTA per tile
  double stage_bytes = 0;    // B_stage = (b_A T_M + b_B T_N) T_K
  double regs_est = 0;       // launch-time registers per thread
  long b_smem = 0, b_reg = 0, b_thr = 0, b_res = 1;
  long slots = 1;            // CTA slots of one wave before truncation by the problem
  double t_tma_ns = 0, t_wgmma_ns = 0;
  double step_ns = 0;        // SM time for one mainloop iteration of every co-resident CTA
  double tile_intensity = 0, multicast = 1;
  double tile_area = 0;      // T_M T_N
};

KernelTerms kernel_terms(const KernelDesc& k, const HardwareDesc& hw) {
  if (k.tm <= 0 || k.tn <= 0 || k.tk <= 0 || k.cm <= 0 || k.cn <= 0)
    throw Error("invalid kernel descriptor '" + k.canonical() + "': tile and cluster dimensions must be positive");
  KernelTerms t;
  t.desc = k;
  t.res = resources(k, hw);
  t.persistent = k.mainloop != MainloopSchedule::tma_ws;
  const double tm = k.tm, tn = k.tn, tk = k.tk;
  t.tile_area = tm * tn;
  t.stage_bytes = (kBytesA * tm + kBytesB * tn) * tk;

  // Registers. setmaxnreg kernels allocate the whole split at launch; the basic kernel gets one
  // compiler-chosen count for every thread, estimated from its accumulators.
  double cta_regs;
  if (t.persistent) {
    cta_regs = 128.0 * producer_regs(t.res.reg_limit_consumer) + 128.0 * t.res.consumer_wgs * t.res.reg_limit_consumer;
  } else {
    const long per_thread = std::min<long>(hw.regs_per_thread_max,
                                           round_up(t.res.acc_regs_per_thread + kRegOverhead, kRegAllocGranule));
    cta_regs = static_cast<double>(per_thread) * t.res.threads;
  }
  t.regs_est = cta_regs / t.res.threads;

  // Residency bounds. CUDA reserves (smem_per_sm - smem_per_block_optin) bytes per CTA (1 KiB).
  const double reserved = std::max(0L, hw.smem_per_sm_bytes - hw.smem_per_block_optin_bytes);
  t.b_smem = static_cast<long>(std::floor(hw.smem_per_sm_bytes / (t.res.smem_total + reserved)));
  t.b_reg = static_cast<long>(std::floor(hw.regs_per_sm / cta_regs));
  t.b_thr = hw.max_threads_per_sm / t.res.threads;
  t.b_res = std::max(1L, std::min({t.b_smem, t.b_reg, t.b_thr, static_cast<long>(hw.max_blocks_per_sm)}));
  // Persistent grids never exceed one CTA per SM; the basic kernel fills every resident slot.
  const long sm_share = t.persistent ? 1 : t.b_res;
  t.slots = sm_share * ctas_per_device(k.cluster_size(), hw.sm_count);

  // Producer / consumer time of one stage (ns).
  const double flops_stage = 2.0 * tm * tn * tk;
  const double peak_sm = hw.bf16_flops_per_sm_per_s();
  const double p_wgmma = peak_sm / kMaxConsumerWgs;
  t.t_tma_ns = t.stage_bytes / hw.tma_bw_per_sm_bytes_per_s() * 1e9;
  t.t_wgmma_ns = flops_stage / (t.res.consumer_wgs * p_wgmma) * 1e9;
  // co-resident CTAs share the SM's TMA bandwidth and tensor cores.
  const double math_ns = sm_share * flops_stage / std::min(peak_sm, sm_share * t.res.consumer_wgs * p_wgmma) * 1e9;
  t.step_ns = std::max(sm_share * t.t_tma_ns, math_ns);

  t.tile_intensity = 2.0 * tm * tn / (kBytesA * tm + kBytesB * tn);
  // With TMA multicast each A tile is loaded once per cluster row of c_N CTAs, each B tile once
  // per cluster column of c_M CTAs.
  t.multicast = (kBytesA * tm / k.cn + kBytesB * tn / k.cm) / (kBytesA * tm + kBytesB * tn);
  return t;
}

struct ProblemTerms {
  long m, n, k;
  double fm, fn, fk;
  double flops;                 // 2 M N K
  double a_bytes, b_bytes;      // b_A M K, b_B K N
  double d_bytes;               // Q_epi = b_D M N + b_C M N
  double log2_m, log2_n, log2_k, log2_flops;
};

ProblemTerms problem_terms(const Problem& p) {
  if (p.m <= 0 || p.n <= 0 || p.k <= 0)
    throw Error("problem dimensions must be positive (got M=" + std::to_string(p.m) + ", N=" + std::to_string(p.n) +
                ", K=" + std::to_string(p.k) + ")");
  ProblemTerms t;
  t.m = p.m, t.n = p.n, t.k = p.k;
  t.fm = static_cast<double>(p.m), t.fn = static_cast<double>(p.n), t.fk = static_cast<double>(p.k);
  t.flops = 2.0 * t.fm * t.fn * t.fk;
  t.a_bytes = kBytesA * t.fm * t.fk;
  t.b_bytes = kBytesB * t.fk * t.fn;
  t.d_bytes = (kBytesD + kBytesC) * t.fm * t.fn;
  t.log2_m = std::log2(t.fm), t.log2_n = std::log2(t.fn), t.log2_k = std::log2(t.fk);
  t.log2_flops = std::log2(t.flops);
  return t;
}

// Problem x kernel terms that the runtime-knob columns need.
struct TileTerms {
  long n_m, n_n, n_k, tiles;
  long blocks_m, blocks_n;  // tile grid rounded up to cluster multiples
  double q_stream;          // operand bytes if every tile streamed its panels from HBM
};

// Writes every column that does not depend on the runtime knobs.
TileTerms write_kernel_columns(const ProblemTerms& p, const KernelTerms& kt, const HardwareDesc& hw, float* row) {
  const KernelDesc& k = kt.desc;
  const KernelResources& r = kt.res;
  auto put = [row](Feat f, double v) { row[col(f)] = static_cast<float>(v); };
  TileTerms t;
  t.n_m = ceil_div(p.m, k.tm);
  t.n_n = ceil_div(p.n, k.tn);
  t.n_k = ceil_div(p.k, k.tk);
  t.tiles = t.n_m * t.n_n;
  t.blocks_m = round_up(t.n_m, k.cm);
  t.blocks_n = round_up(t.n_n, k.cn);
  // Tile (i, j) streams its A row-panel (T_M x K) and B column-panel (K x T_N); out-of-bounds
  // parts are not fetched, so the total is n_N * |A| + n_M * |B|.
  t.q_stream = t.n_n * p.a_bytes + t.n_m * p.b_bytes;

  // problem
  put(Feat::m, p.fm);
  put(Feat::n, p.fn);
  put(Feat::k, p.fk);
  row[col(Feat::layout)] = code(k.layout);
  put(Feat::a_k_major, a_row_major(k.layout) ? 1 : 0);
  put(Feat::b_k_major, b_row_major(k.layout) ? 0 : 1);
  for (Feat f : {Feat::elem_a, Feat::elem_b, Feat::elem_c, Feat::elem_d, Feat::elem_acc}) row[col(f)] = 0;
  put(Feat::log2_m, p.log2_m);
  put(Feat::log2_n, p.log2_n);
  put(Feat::log2_k, p.log2_k);
  put(Feat::log2_flops, p.log2_flops);
  put(Feat::log2_aspect_mn, p.log2_m - p.log2_n);
  // kernel
  put(Feat::tile_m, k.tm);
  put(Feat::tile_n, k.tn);
  put(Feat::tile_k, k.tk);
  put(Feat::inst_m, k.inst_m());
  put(Feat::inst_n, k.inst_n());
  put(Feat::inst_k, k.inst_k());
  put(Feat::stages, r.stages);
  put(Feat::stages_auto, k.stages == 0 ? 1 : 0);
  row[col(Feat::mainloop)] = code(k.mainloop);
  row[col(Feat::epilogue)] = code(k.epilogue);
  put(Feat::cluster_m, k.cm);
  put(Feat::cluster_n, k.cn);
  put(Feat::cluster_size, k.cluster_size());
  row[col(Feat::tile_scheduler)] = code(k.scheduler);
  row[col(Feat::operator_id)] = 0;
  row[col(Feat::compute_engine)] = 0;
  put(Feat::consumer_wgs, r.consumer_wgs);
  put(Feat::threads, r.threads);
  // hardware
  put(Feat::hw_sm_count, hw.sm_count);
  put(Feat::hw_smem_per_sm, hw.smem_per_sm_bytes);
  put(Feat::hw_smem_per_block, hw.smem_per_block_optin_bytes);
  put(Feat::hw_regs_per_sm, hw.regs_per_sm);
  put(Feat::hw_llc_bytes, hw.l2_bytes);
  put(Feat::hw_hbm_bw, hw.hbm_bw_bytes_per_s);
  put(Feat::hw_peak_flops, hw.bf16_dense_flops_per_s);
  put(Feat::hw_tma_bw, hw.tma_bw_bytes_per_s);
  put(Feat::hw_ridge, hw.ridge_flops_per_byte());
  // grid: n_X T_X is the padded extent; the excess over X is masked work.
  const double pm = static_cast<double>(t.n_m) * k.tm, pn = static_cast<double>(t.n_n) * k.tn,
               pk = static_cast<double>(t.n_k) * k.tk;
  put(Feat::n_m_tiles, t.n_m);
  put(Feat::n_n_tiles, t.n_n);
  put(Feat::n_k_iters, t.n_k);
  put(Feat::tiles, t.tiles);
  put(Feat::edge_m, (pm - p.fm) / pm);
  put(Feat::edge_n, (pn - p.fn) / pn);
  put(Feat::edge_k, (pk - p.fk) / pk);
  put(Feat::padded_work_frac, 1.0 - (p.fm / pm) * (p.fn / pn) * (p.fk / pk));
  // residency
  put(Feat::regs_per_thread_est, kt.regs_est);
  put(Feat::b_smem, kt.b_smem);
  put(Feat::b_reg, kt.b_reg);
  put(Feat::b_thr, kt.b_thr);
  put(Feat::b_res, kt.b_res);
  // paper waves: W = n_M n_N / (S_SM b_res), eta = W / ceil(W)
  const double w = static_cast<double>(t.tiles) / (static_cast<double>(hw.sm_count) * kt.b_res);
  const double eta = w / std::ceil(w);
  put(Feat::waves, w);
  put(Feat::wave_eff, eta);
  put(Feat::streamk_proxy, 1.0 - eta);
  // cluster
  put(Feat::cluster_fill_m, static_cast<double>(t.n_m) / k.cm);
  put(Feat::cluster_fill_n, static_cast<double>(t.n_n) / k.cn);
  put(Feat::cluster_overshoot_m, k.cm > t.n_m ? 1 : 0);
  put(Feat::cluster_overshoot_n, k.cn > t.n_n ? 1 : 0);
  put(Feat::cluster_idle_frac, 1.0 - static_cast<double>(t.tiles) / (static_cast<double>(t.blocks_m) * t.blocks_n));
  put(Feat::multicast_load_ratio, kt.multicast);
  // intensity: I = 2MNK / (b_A M K + b_B K N + Q_epi)
  const double q_min = p.a_bytes + p.b_bytes + p.d_bytes;
  const double intensity = p.flops / q_min;
  put(Feat::intensity, intensity);
  put(Feat::intensity_over_ridge, intensity / hw.ridge_flops_per_byte());
  put(Feat::tile_intensity, kt.tile_intensity);
  // cache (knob-independent part)
  put(Feat::working_set_llc, q_min / hw.l2_bytes);
  put(Feat::panel_llc, (kBytesA * k.tm + kBytesB * k.tn) * p.fk / hw.l2_bytes);
  // shared memory
  put(Feat::stage_bytes, kt.stage_bytes);
  put(Feat::smem_mainloop_bytes, static_cast<double>(r.stages) * (r.smem_per_stage + r.smem_pipeline));
  put(Feat::smem_epilogue_bytes, r.smem_epilogue);
  put(Feat::smem_total_bytes, r.smem_total);
  const double f_smem = static_cast<double>(r.smem_total) / hw.smem_per_sm_bytes;
  put(Feat::f_smem, f_smem);
  put(Feat::stages_x_fsmem, r.stages * f_smem);
  // registers
  put(Feat::acc_regs_per_thread, r.acc_regs_per_thread);
  put(Feat::reg_limit_consumer, r.reg_limit_consumer);
  put(Feat::spills_expected, r.spills_expected ? 1 : 0);
  // producer / consumer
  put(Feat::t_tma_ns, kt.t_tma_ns);
  put(Feat::t_wgmma_ns, kt.t_wgmma_ns);
  put(Feat::consumer_producer_ratio, kt.t_wgmma_ns / kt.t_tma_ns);
  return t;
}

// How CUTLASS runs one candidate: decomposition, work units and slot time.
struct Schedule {
  Decomposition kind = Decomposition::data_parallel;  // never heuristic
  long splits = 1;
  long sk_tiles = 0;
  double passes = 0;          // tile-passes (n_K iterations each) per CTA slot: sched_waves
  long k_iters_unit = 0;
  double reduction_bytes = 0; // fp32 partials written and read back
};

// PersistentTileSchedulerSm90StreamKParams::select_decomposition_mode and get_num_sk_tiles /
// get_num_sk_units, followed by the slot time of the chosen decomposition.
//
// The decision sees a full wave of CTA slots (the stream-K grid is not truncated by the problem
// size), which is what lets small problems be split across idle SMs.
Schedule schedule(const KernelTerms& kt, const TileTerms& t, const RuntimeKnobs& knobs, long tiles_launched,
                  int sm_count) {
  const long ctas = kt.slots;
  Schedule s;
  s.k_iters_unit = t.n_k;
  s.passes = static_cast<double>(ceil_div(tiles_launched, ctas));
  if (!kt.persistent || kt.desc.scheduler != TileSchedulerKind::stream_k) return s;
  const Decomposition d = knobs.decomposition;
  const double partial_tile_bytes = 2.0 * kBytesPartial * kt.tile_area;  // write + read back
  if (d == Decomposition::split_k || (d == Decomposition::heuristic && knobs.splits > 1)) {
    // adjust_split_count: no more splits than SMs or K iterations.
    s.splits = std::max(1L, std::min({static_cast<long>(knobs.splits), static_cast<long>(sm_count), t.n_k}));
    if (s.splits == 1) return s;
    s.kind = Decomposition::split_k;
    s.k_iters_unit = ceil_div(t.n_k, s.splits);
    s.passes = static_cast<double>(ceil_div(tiles_launched * s.splits, ctas)) * s.k_iters_unit / t.n_k;
    s.reduction_bytes = (s.splits - 1) * static_cast<double>(tiles_launched) * partial_tile_bytes;
    return s;
  }
  if (d == Decomposition::data_parallel) return s;
  // Stream-K: the tiles of the last two (partial) waves are shared among a wave of units.
  const long cs = kt.desc.cluster_size();
  const long full_waves = tiles_launched / ctas;
  long sk_tiles = 0;
  if (full_waves * ctas != tiles_launched && t.n_k > kMinItersPerSkUnit) {
    const long dp_waves = full_waves > 1 ? full_waves - 1 : 0;
    sk_tiles = tiles_launched - dp_waves * ctas;
    const long tail = tiles_launched - full_waves * ctas;
    if (d == Decomposition::heuristic && 2 * tail >= ctas) sk_tiles = 0;  // tail more than half full
    sk_tiles = sk_tiles / cs * cs;
  }
  const long sk_units = std::min(ctas / cs * cs, (t.n_k * sk_tiles / kMinItersPerSkUnit) / cs * cs);
  if (sk_tiles == 0 || sk_units == 0) return s;
  const long dp_tiles = tiles_launched - sk_tiles;
  s.sk_tiles = sk_tiles;
  if (d == Decomposition::heuristic && sk_tiles < sk_units && sk_units % sk_tiles == 0) {
    // Units are a multiple of the tiles: CUTLASS runs a plain split-K over the Stream-K tiles.
    s.kind = Decomposition::split_k;
    s.splits = sk_units / sk_tiles;
    s.k_iters_unit = ceil_div(t.n_k, s.splits);
    s.reduction_bytes = (s.splits - 1) * static_cast<double>(sk_tiles) * partial_tile_bytes;
  } else {
    s.kind = Decomposition::stream_k;
    s.k_iters_unit = ceil_div(sk_tiles * t.n_k, sk_units);
    // Each unit ends inside a tile at most once and leaves one partial tile to fix up.
    s.reduction_bytes = static_cast<double>(sk_units) * partial_tile_bytes;
  }
  s.passes = static_cast<double>(ceil_div(dp_tiles, ctas)) + static_cast<double>(s.k_iters_unit) / t.n_k;
  return s;
}

// HBM operand traffic under the raster/swizzle walk (bytes), and the wave footprint.
//
// The scheduler walks tiles along the major dimension (M for along_m) inside strips that are
// w = swizzle * c_minor tiles wide in the minor dimension. A wave of `ctas` concurrent CTAs covers an
// r_M x r_N block of tiles. Model:
//  * |A| + |B| <= L: every operand byte comes from HBM once;
//  * the wave's own panels do not fit (F_w > L): no reuse survives, every tile streams its panels
//    from HBM (q_stream);
//  * otherwise the strip's minor-operand panels stay resident while the strip is walked, so the
//    minor operand is read once and the major operand once per strip, unless the whole major
//    operand fits in LLC next to one strip's panels (then once).
struct Traffic {
  double q_hbm;
  double footprint;
};

Traffic operand_traffic(const ProblemTerms& p, const KernelDesc& k, const TileTerms& t, bool along_m, long swizzle,
                        long blocks_m, long blocks_n, long ctas, double llc) {
  const long n_major = along_m ? blocks_m : blocks_n;
  const long n_minor = along_m ? blocks_n : blocks_m;
  const long c_minor = along_m ? k.cn : k.cm;
  const long w = std::min(n_minor, swizzle * c_minor);
  long r_minor, r_major;
  if (ctas <= w) {
    r_minor = ctas, r_major = 1;
  } else if (ctas <= w * n_major) {
    r_minor = w, r_major = ceil_div(ctas, w);
  } else {
    r_major = n_major, r_minor = std::min(n_minor, ceil_div(ctas, n_major));
  }
  const long r_m = along_m ? r_major : r_minor, r_n = along_m ? r_minor : r_major;
  const double rows = std::min(static_cast<double>(r_m) * k.tm, p.fm);
  const double cols = std::min(static_cast<double>(r_n) * k.tn, p.fn);
  Traffic tr;
  tr.footprint = (kBytesA * rows + kBytesB * cols) * p.fk;
  const double ab = p.a_bytes + p.b_bytes;
  if (ab <= llc) {
    tr.q_hbm = ab;
  } else if (tr.footprint > llc) {
    tr.q_hbm = t.q_stream;
  } else {
    const long strip = std::max(w, r_minor);
    const double minor_tile = along_m ? k.tn : k.tm;
    const double minor_extent = along_m ? p.fn : p.fm;
    const double minor_elem = along_m ? kBytesB : kBytesA;
    const double strip_bytes = std::min(strip * minor_tile, minor_extent) * minor_elem * p.fk;
    const double minor_op = along_m ? p.b_bytes : p.a_bytes;
    const double major_op = along_m ? p.a_bytes : p.b_bytes;
    tr.q_hbm = major_op + strip_bytes <= llc ? ab : minor_op + static_cast<double>(ceil_div(n_minor, strip)) * major_op;
  }
  tr.q_hbm = std::clamp(tr.q_hbm, ab, std::max(ab, t.q_stream));
  return tr;
}

// Writes the columns that depend on the runtime knobs.
void write_knob_columns(const ProblemTerms& p, const KernelTerms& kt, const TileTerms& t, const HardwareDesc& hw,
                        const RuntimeKnobs& knobs, float* row) {
  if (knobs.max_swizzle < 1 || knobs.splits < 1)
    throw Error("invalid runtime knobs '" + knobs.canonical() + "': swizzle and splits must be >= 1");
  auto put = [row](Feat f, double v) { row[col(f)] = static_cast<float>(v); };
  const KernelDesc& k = kt.desc;
  // The persistent schedulers round the grid up to swizzle x cluster multiples and pick the
  // raster order (heuristic: along M when there are more tile columns than rows); the basic
  // kernel launches the cluster-rounded grid in hardware order (blockIdx.x = M fastest).
  long swizzle = 1, blocks_m = t.blocks_m, blocks_n = t.blocks_n;
  bool along_m = true;
  if (kt.persistent) {
    swizzle = 1L << log_swizzle_size(t.blocks_m, t.blocks_n, knobs.max_swizzle);
    blocks_m = round_up(t.n_m, swizzle * k.cm);
    blocks_n = round_up(t.n_n, swizzle * k.cn);
    along_m = knobs.raster == RasterOrder::heuristic ? blocks_n > blocks_m : knobs.raster == RasterOrder::along_m;
  }
  const long tiles_launched = blocks_m * blocks_n;
  // The stream-K scheduler always launches a full wave; the others truncate it to the tiles.
  const long busy_ctas = std::min(kt.slots, tiles_launched);
  const bool full_wave = kt.persistent && k.scheduler == TileSchedulerKind::stream_k;
  const Schedule s = schedule(kt, t, knobs, tiles_launched, hw.sm_count);

  put(Feat::ctas_per_wave, full_wave ? kt.slots : busy_ctas);
  put(Feat::launch_idle_frac, 1.0 - static_cast<double>(t.tiles) / tiles_launched);
  put(Feat::sched_waves, s.passes);
  // Slot-time spent on real output tiles over the slot-time of every slot of the device.
  put(Feat::sched_wave_eff, static_cast<double>(t.tiles) / kt.slots / s.passes);
  put(Feat::uses_stream_k, s.kind == Decomposition::stream_k ? 1 : 0);
  // Level index in kResolvedDecompositionLevels = enum value - 1 (heuristic never resolves).
  row[col(Feat::decomposition_resolved)] = code(s.kind) - 1.0f;
  put(Feat::splits_eff, s.splits);
  put(Feat::sk_tiles_frac, static_cast<double>(s.sk_tiles) / tiles_launched);
  put(Feat::k_iters_per_unit, s.k_iters_unit);

  const Traffic tr = operand_traffic(p, k, t, along_m, swizzle, blocks_m, blocks_n, busy_ctas, hw.l2_bytes);
  const double hbm_bytes = tr.q_hbm + p.d_bytes + s.reduction_bytes;
  put(Feat::wave_footprint_llc, tr.footprint / hw.l2_bytes);
  put(Feat::restream_factor, tr.q_hbm / (p.a_bytes + p.b_bytes));
  put(Feat::effective_intensity, p.flops / hbm_bytes);

  const double stages = kt.res.stages;
  put(Feat::pipeline_fill, std::min(1.0, s.k_iters_unit / stages));
  put(Feat::pipeline_amortization, s.k_iters_unit / stages);

  row[col(Feat::raster)] = code(knobs.raster);
  put(Feat::raster_along_m, along_m ? 1 : 0);
  put(Feat::max_swizzle, knobs.max_swizzle);
  put(Feat::log2_swizzle, std::has_single_bit(static_cast<unsigned>(knobs.max_swizzle))
                              ? std::countr_zero(static_cast<unsigned>(knobs.max_swizzle))
                              : std::log2(knobs.max_swizzle));
  put(Feat::swizzle_eff, swizzle);
  row[col(Feat::decomposition)] = code(knobs.decomposition);
  put(Feat::splits, knobs.splits);

  // Static time: the slots make sched_waves passes of n_K mainloop steps, after one pipeline
  // fill of min(S, k_iters) TMA stages; bounded below by the HBM traffic time.
  const double fill_ns = std::min<double>(stages, s.k_iters_unit) * kt.t_tma_ns;
  const double compute_ns = s.passes * t.n_k * kt.step_ns + fill_ns;
  const double memory_ns = hbm_bytes / hw.hbm_bw_bytes_per_s * 1e9;
  const double time_ns = std::max(compute_ns, memory_ns);
  put(Feat::est_time_us, time_ns * 1e-3);
  put(Feat::est_efficiency, p.flops / (time_ns * 1e-9 * hw.bf16_dense_flops_per_s));
}

}  // namespace

struct FeatureComputer::Impl {
  std::vector<KernelDesc> kernels;
  HardwareDesc hw;
  std::vector<KernelTerms> terms;
};

FeatureComputer::FeatureComputer(std::vector<KernelDesc> kernels, const HardwareDesc& hw) {
  if (hw.sm_count <= 0) throw Error("hardware descriptor '" + hw.preset + "' has no SMs");
  auto impl = std::make_shared<Impl>();
  impl->hw = hw;
  impl->terms.reserve(kernels.size());
  for (const auto& k : kernels) impl->terms.push_back(kernel_terms(k, hw));
  impl->kernels = std::move(kernels);
  impl_ = std::move(impl);
}

const std::vector<KernelDesc>& FeatureComputer::kernels() const { return impl_->kernels; }
const HardwareDesc& FeatureComputer::hw() const { return impl_->hw; }

void FeatureComputer::compute(const Problem& p, std::span<const Candidate> candidates, FeatureMatrix& out) const {
  const ProblemTerms pt = problem_terms(p);
  out.resize(candidates.size(), kNumFeatures);
  // Template row of the current kernel: its knob-independent columns.
  float tmpl[kNumFeatures];
  TileTerms tt{};
  uint32_t current = UINT32_MAX;
  for (size_t i = 0; i < candidates.size(); ++i) {
    const Candidate& c = candidates[i];
    if (c.kernel != current) {
      if (c.kernel >= impl_->terms.size())
        throw Error("candidate kernel index " + std::to_string(c.kernel) + " out of range");
      const KernelTerms& kt = impl_->terms[c.kernel];
      if (kt.desc.layout != p.layout)
        throw Error("kernel " + kt.desc.id() + " has layout " + std::string(to_string(kt.desc.layout)) +
                    " but the problem has layout " + std::string(to_string(p.layout)));
      tt = write_kernel_columns(pt, kt, impl_->hw, tmpl);
      current = c.kernel;
    }
    float* row = out.row(i);
    std::memcpy(row, tmpl, sizeof tmpl);
    write_knob_columns(pt, impl_->terms[current], tt, impl_->hw, c.knobs, row);
  }
}

void FeatureComputer::compute_row(const Problem& p, const Candidate& c, float* out_row) const {
  FeatureMatrix m;
  compute(p, std::span<const Candidate>(&c, 1), m);
  std::memcpy(out_row, m.row(0), kNumFeatures * sizeof(float));
}

void compute_features(const Problem& p, const KernelDesc& k, const RuntimeKnobs& knobs, const HardwareDesc& hw,
                      float* out_row) {
  FeatureComputer({k}, hw).compute_row(p, Candidate{0, knobs}, out_row);
}

namespace {
// Every HardwareDesc field that enters phi, for the cache key.
auto hw_fields(const HardwareDesc& h) {
  return std::make_tuple(h.sm_count, h.smem_per_sm_bytes, h.smem_per_block_optin_bytes, h.regs_per_sm,
                         h.regs_per_thread_max, h.max_threads_per_sm, h.max_blocks_per_sm, h.l2_bytes,
                         h.hbm_bw_bytes_per_s, h.bf16_dense_flops_per_s, h.tma_bw_bytes_per_s);
}
}  // namespace

void compute_matrix(const Problem& p, const Catalogue& cat, const HardwareDesc& hw, FeatureMatrix& out) {
  if (cat.layout() != p.layout)
    throw Error("catalogue is for layout " + std::string(to_string(cat.layout())) + " but the problem has layout " +
                std::string(to_string(p.layout)));
  // A few catalogues (one per layout, maybe several GPUs) are in use per process; the kernel list
  // comparison costs far less than the matrix itself.
  static std::mutex mu;
  static std::vector<FeatureComputer> cache;
  constexpr size_t kCacheSize = 8;
  std::optional<FeatureComputer> fc;
  {
    std::lock_guard lock(mu);
    for (const auto& c : cache)
      if (hw_fields(c.hw()) == hw_fields(hw) && c.kernels() == cat.kernels()) fc = c;
  }
  if (!fc) {
    fc.emplace(cat.kernels(), hw);
    std::lock_guard lock(mu);
    if (cache.size() == kCacheSize) cache.erase(cache.begin());
    cache.push_back(*fc);
  }
  fc->compute(p, cat.candidates(), out);
}

}  // namespace cks
