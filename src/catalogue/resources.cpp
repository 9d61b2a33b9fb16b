// Resource model of a catalogue kernel as CUTLASS 4.2 lays it out: epilogue tile, automatic stage
// count, the kernel's shared storage, and accumulator register pressure. Each formula names the
// CUTLASS source it reproduces; tests/catalogue checks them against sizes measured with nvcc.
#include <algorithm>
#include <numeric>

#include "catalogue/model.hpp"

namespace cks {
namespace catalogue {

namespace {

constexpr long round_up(long x, long a) { return (x + a - 1) / a * a; }
constexpr long kBf16Bytes = 2;

bool is_tma_epilogue(const KernelDesc& k) { return k.epilogue != EpilogueSchedule::no_smem; }

// Alignment of the epilogue's smem_D array: alignment_for_swizzle of its layout atom
// (sm90_get_epilogue_smem_swizzle_layout_atom -> ss_smem_selector over the epilogue tile).
//  * D column-major (M-major): the epilogue tile's M is 64 or 128, so the selector picks the
//    128-byte swizzle atom Swizzle<3,4,3>: 2^(3+4+3) = 1024 bytes.
//  * D row-major (N-major: the swapped kernels): the contiguous extent is the epilogue tile's N
//    (at most 32 bf16 = 64 bytes), so SW64 Swizzle<2,4,3> (512 bytes) for N % 32 == 0, SW32
//    Swizzle<1,4,3> (256) for N % 16 == 0, else the interleaved atom Swizzle<0,4,3> (128)
//    (measured: tests/catalogue/data/cutlass_smem_probe_swapped.txt).
long epilogue_smem_align(const KernelDesc& k) {
  if (!k.swapped) return 1024;
  const int n = epilogue_tile(k).n;
  return n % 32 == 0 ? 512 : n % 16 == 0 ? 256 : 128;
}
// The mainloop's TensorStorage is a cute::aligned_struct<128>.
constexpr long kMainloopSmemAlign = 128;
// Sizes of empty structs as laid out by the compiler: the no-smem epilogue's TensorStorage (1 byte)
// and PipelineStorage (2 bytes: two empty members).
constexpr long kEmptyEpilogueTensors = 1;
constexpr long kEmptyEpiloguePipeline = 2;
// Fusion callbacks storage of LinearCombination (empty structs, < 1 alignment unit): its only
// effect is to push the epilogue TensorStorage to the next 1024-byte boundary.
constexpr long kFusionStorageBytes = 1;
// OrderedSequenceBarrier<Depth, Length> storage: Depth x Length cluster barriers of 8 bytes.
constexpr long ordered_barrier_bytes(int depth, int length) { return 8L * depth * length; }
// Tile scheduler SharedStorage (persistent and stream-K): an empty class placed alignas(16).
constexpr long kSchedulerStorage = 16;

long epilogue_d_bytes(const EpilogueTile& t) { return static_cast<long>(t.m) * t.n * t.stages_d * kBf16Bytes; }

// sizeof(CollectiveEpilogue::TensorStorage) and sizeof(CollectiveEpilogue::PipelineStorage)
// (sm90_epilogue_tma_warpspecialized.hpp: smem_D staging buffers aligned to the swizzle, then the
// fusion storage; PipelineTransactionAsync<StagesC> barriers for C loads).
long epilogue_tensors(const KernelDesc& k) {
  if (!is_tma_epilogue(k)) return kEmptyEpilogueTensors;
  return round_up(epilogue_d_bytes(epilogue_tile(k)) + kFusionStorageBytes, epilogue_smem_align(k));
}
long epilogue_pipeline(const KernelDesc& k) {
  return is_tma_epilogue(k) ? kBarrierBytesPerStage * epilogue_tile(k).stages_c : kEmptyEpiloguePipeline;
}

// Bytes of the A and B tiles of one stage (bits_to_bytes(16 T_M T_K) + bits_to_bytes(16 T_N T_K)).
long stage_tile_bytes(const KernelDesc& k) { return kBf16Bytes * (k.tm + k.tn) * k.tk; }

}  // namespace

EpilogueTile epilogue_tile(const KernelDesc& k) {
  EpilogueTile t;
  if (!is_tma_epilogue(k)) return t;
  const int m_cap = k.epilogue == EpilogueSchedule::tma_ws_cooperative ? 128 : 64;
  t.m = std::min(m_cap, k.tm);
  t.n = std::gcd(std::min(32, k.tn), k.tn);
  t.subtiles = (k.tm / t.m) * (k.tn / t.n);
  t.stages_d = std::min(t.subtiles, 2);
  t.stages_c = std::min(t.subtiles, 4);
  return t;
}

// sizeof(SharedStorage) = { TensorStorage tensors; PipelineStorage pipeline; }, aligned like its
// most-aligned member (the 1024-byte smem_D). For the no-smem epilogue it is an empty struct.
long epilogue_shared_storage(const KernelDesc& k) {
  if (!is_tma_epilogue(k)) return 1;
  return round_up(epilogue_tensors(k) + epilogue_pipeline(k), epilogue_smem_align(k));
}

// compute_stage_count_or_override(StageCountAutoCarveout<carveout>) in sm90_gmma_builder.inl:
//   (capacity/128*128 - round_up(carveout, 128)) / (round_up(stage_tile_bytes, 128) + 16)
int auto_stages(const KernelDesc& k) {
  const long capacity = kBuilderSmemCapacity / 128 * 128;
  const long carveout = round_up(epilogue_shared_storage(k), 128);
  const long per_stage = round_up(stage_tile_bytes(k), 128) + kBarrierBytesPerStage;
  return static_cast<int>((capacity - carveout) / per_stage);
}

int resolved_stages(const KernelDesc& k) { return k.stages > 0 ? k.stages : auto_stages(k); }

// sizeof(GemmKernel::SharedStorage):
//  * ping-pong / cooperative (sm90_gemm_tma_warpspecialized_{pingpong,cooperative}.hpp):
//      struct { PipelineStorage pipelines;          // alignas(16) members: mainloop barriers (16 S),
//                                                   //   epilogue-load barriers, [ping-pong: math WG
//                                                   //   order barrier <2,2>], load-order barrier <1,2>
//               alignas(16) TileSchedulerStorage;   // empty, 16 bytes
//               TensorStorage { epilogue; mainloop; } tensors; }   // side by side, both live
//  * basic TMA warp-specialized (sm90_gemm_tma_warpspecialized.hpp), not persistent, so
//      struct { union { mainloop; epilogue; } tensors; PipelineStorage pipelines; }
SmemLayout smem_layout(const KernelDesc& k, int stages) {
  SmemLayout s;
  s.stages = stages;
  s.mainloop_tensors = stages * round_up(stage_tile_bytes(k), kMainloopSmemAlign);
  s.epilogue_tensors = epilogue_tensors(k);
  const long align = is_tma_epilogue(k) ? epilogue_smem_align(k) : kMainloopSmemAlign;
  const long mainloop_barriers = kBarrierBytesPerStage * stages;
  const long epilogue_barriers = round_up(epilogue_pipeline(k), 16);
  if (k.mainloop == MainloopSchedule::tma_ws) {
    s.barriers = mainloop_barriers + epilogue_barriers;
    const long tensors = round_up(std::max(s.mainloop_tensors, s.epilogue_tensors), align);
    s.total = round_up(tensors + s.barriers, align);
  } else {
    const long order_barriers = ordered_barrier_bytes(1, 2) +  // LoadWarpOrderBarrier
                                (k.mainloop == MainloopSchedule::pingpong ? ordered_barrier_bytes(2, 2) : 0);
    s.barriers = mainloop_barriers + epilogue_barriers + order_barriers + kSchedulerStorage;
    const long tensors =
        round_up(round_up(s.epilogue_tensors, kMainloopSmemAlign) + s.mainloop_tensors, align);
    s.total = round_up(s.barriers, align) + tensors;
  }
  s.padding = s.total - s.mainloop_tensors - s.epilogue_tensors - s.barriers;
  return s;
}

int accumulator_registers(const KernelDesc& k) {
  const int threads_per_tile = k.mainloop == MainloopSchedule::cooperative ? 256 : 128;
  return k.tm * k.tn / threads_per_tile;  // fp32: one register per accumulator element
}

// MmaRegisterRequirement in the ping-pong / cooperative kernels: RegsPerThread >= 208 ? 240 : 232,
// where RegsPerThread is exactly accumulator_registers().
int consumer_register_limit(const KernelDesc& k, const HardwareDesc& hw) {
  if (k.mainloop == MainloopSchedule::tma_ws) return hw.regs_per_thread_max;
  return accumulator_registers(k) >= 208 ? 240 : 232;
}

bool non_portable_cluster(const KernelDesc& k, const HardwareDesc& hw) {
  return k.cluster_size() > hw.max_cluster_size_portable;
}

}  // namespace catalogue

// Field definitions (cks/catalogue.hpp):
//   threads            128 per warpgroup: producer + consumers (256 basic, 384 ping-pong/cooperative)
//   smem_per_stage     (T_M + T_N) T_K * 2: the A and B tiles of one stage
//   smem_pipeline      16: the full/empty mbarrier pair each stage adds (PipelineTmaAsync)
//   smem_epilogue      sizeof(CollectiveEpilogue::SharedStorage); 0 for the no-smem epilogue
//   stages             explicit count, or what the auto carve-out resolves to
//   smem_total         sizeof(GemmKernel::SharedStorage): the dynamic smem the kernel requests
//   spills_expected    accumulators + 24 live registers exceed the consumer budget
KernelResources resources(const KernelDesc& k, const HardwareDesc& hw) {
  KernelResources r;
  r.consumer_wgs = k.mainloop == MainloopSchedule::tma_ws ? 1 : 2;
  r.threads = 128 * (1 + r.consumer_wgs);
  r.smem_per_stage = 2L * (k.tm + k.tn) * k.tk;
  r.smem_pipeline = catalogue::kBarrierBytesPerStage;
  r.smem_epilogue = k.epilogue == EpilogueSchedule::no_smem ? 0 : catalogue::epilogue_shared_storage(k);
  r.stages = catalogue::resolved_stages(k);
  r.smem_total = catalogue::smem_layout(k, r.stages).total;
  r.acc_regs_per_thread = catalogue::accumulator_registers(k);
  r.reg_limit_consumer = catalogue::consumer_register_limit(k, hw);
  r.spills_expected = r.acc_regs_per_thread + catalogue::kConsumerRegisterOverhead > r.reg_limit_consumer;
  return r;
}

}  // namespace cks
