// PROVISIONAL resource model (to be refined against CUTLASS 4.2 sources by the catalogue owner).
#include "cks/catalogue.hpp"

namespace cks {

namespace {
constexpr long round_up(long x, long a) { return (x + a - 1) / a * a; }
}  // namespace

KernelResources resources(const KernelDesc& k, const HardwareDesc& hw) {
  KernelResources r;
  const bool coop = k.mainloop == MainloopSchedule::cooperative;
  const bool ping = k.mainloop == MainloopSchedule::pingpong;
  r.consumer_wgs = (coop || ping) ? 2 : 1;
  r.threads = 128 * (1 + r.consumer_wgs);
  // Mainloop: one A tile (tm x tk) and one B tile (tn x tk) of bf16 per stage, 128-byte aligned,
  // plus the PipelineTmaAsync full/empty barrier pair (16 bytes) per stage.
  r.smem_per_stage = round_up(2L * (k.tm + k.tn) * k.tk, 128);
  r.smem_pipeline = 16;
  // Epilogue storage: TMA epilogues stage D subtiles (EpilogueTileAuto: 64 or 128 rows x 32
  // columns of bf16, 2 stages) plus barriers; no-smem epilogue stores from registers.
  if (k.epilogue == EpilogueSchedule::no_smem) {
    r.smem_epilogue = 0;
  } else {
    const long epi_m = (k.epilogue == EpilogueSchedule::tma_ws_cooperative && k.tm >= 128) ? 128 : 64;
    const long epi_n = k.tn < 32 ? k.tn : 32;
    r.smem_epilogue = round_up(2L * epi_m * epi_n * 2, 128) + 64;
  }
  const long capacity = hw.smem_per_block_optin_bytes / 128 * 128;
  const long carveout = round_up(r.smem_epilogue, 128);
  if (k.stages == 0) {
    r.stages = static_cast<int>((capacity - carveout) / (r.smem_per_stage + r.smem_pipeline));
  } else {
    r.stages = k.stages;
  }
  r.smem_total = r.stages * (r.smem_per_stage + r.smem_pipeline) + carveout;
  // Accumulators: fp32 per consumer thread. Cooperative splits the tile's rows over 2 WGs;
  // ping-pong and the basic TMA WS kernel hold a whole tile per consumer WG.
  const long tile_elems = static_cast<long>(k.tm) * k.tn;
  r.acc_regs_per_thread = static_cast<int>(coop ? tile_elems / 256 : tile_elems / 128);
  r.reg_limit_consumer = (coop || ping) ? 232 : hw.regs_per_thread_max;
  r.spills_expected = r.acc_regs_per_thread + 24 > r.reg_limit_consumer;
  return r;
}

}  // namespace cks
