#!/usr/bin/env python3
"""The stream-K reduction probe (issue 16, few-tile large-K groups): does CUTLASS's
ReductionMode::Nondeterministic (the splits add into the workspace concurrently) beat the
Deterministic mode the generated kernels use (each split waits for the one before: lease 43 B
found split-K 16/32 at 0.52/0.32 of the group's best)?

At home: picks GROUPS groups of lease 43 B's per-group read (data/plans/lease43/read43b.py's CSV)
where cuBLAS leads most, emits each group's best kernel with `cks emit` twice, as generated
(Deterministic) and with the reduction mode replaced (Nondeterministic), and appends a timing
entry point `probe` to each .cu. On the device, run_probe.sh compiles each file into its own shared
library and probe_main.cu times, per group, both libraries over the decomposition settings
(heuristic, stream-K, split-K 2-32) and cuBLAS, interleaved.

    make_probe.py PER_GROUP.csv OUTDIR [GROUPS] [CKS]
Writes OUTDIR/k_<id>_{d,nd}.cu and OUTDIR/cases.csv (group, layout, m, n, k, kernel, raster).
"""
import csv, os, re, subprocess, sys

per_group, outdir = sys.argv[1], sys.argv[2]
ngroups = int(sys.argv[3]) if len(sys.argv) > 3 else 12
cks = sys.argv[4] if len(sys.argv) > 4 else "build/bin/cks"
os.makedirs(outdir, exist_ok=True)

rows = sorted((r for r in csv.DictReader(open(per_group)) if int(r["k"]) >= 4096),
              key=lambda r: float(r["before_vs_cublas"]))
# The groups where cuBLAS leads most, one per (m, n, k) shape (its layouts share the gap), whose
# best kernel is a stream-K one (the reduction mode is the stream-K scheduler's).
picked, shapes, sources = [], set(), {}
for r in rows:
    shape = (r["m"], r["n"], r["k"])
    kid = r["best_other_cand"].split()[0]
    if shape in shapes:
        continue
    if kid not in sources:
        sources[kid] = subprocess.run([cks, "emit", kid, "--layout", r["layout"], "--name", "run_gemm_" + kid],
                                      check=True, capture_output=True, text=True).stdout
    if not re.search(r"^//   kernel .*\+stream_k", sources[kid], re.M):
        continue
    shapes.add(shape)
    picked.append(r)
    if len(picked) == ngroups:
        break

PROBE = r'''
// ---- appended by scripts/device/reduction_probe/make_probe.py ----
#include <algorithm>
#include <vector>
// Median time (us) of `reps` launches of this file's kernel on (M, N, K) with the knobs given, the
// stream-K barrier flags re-zeroed before each launch (outside the timed events), as the
// harness's Op::reset_workspace does. Returns 0, or 1 bad knobs, 2 cannot implement, 3 error.
extern "C" int probe(int M, int N, int K, const void* A, const void* B, void* D, int raster, int decomposition,
                     int splits, int reps, float* out_us) {
  using Gemm = NAMESPACE::Gemm;
  using Runner = RUNNER;
  using Kernel = typename Gemm::GemmKernel;
  int device = 0, sm_count = 0;
  if (cudaGetDevice(&device) != cudaSuccess) return 3;
  cudaDeviceGetAttribute(&sm_count, cudaDevAttrMultiProcessorCount, device);
  cks_problem p{};
  p.m = M; p.n = N; p.k = K; p.A = A; p.B = B; p.D = D; p.alpha = 1.0f; p.beta = 0.0f;
  p.knobs = cks_knobs{raster, 1, decomposition, splits};
  p.device_id = device; p.sm_count = sm_count;
  typename Gemm::Arguments args{};
  if (!Runner::make_arguments(&p, args)) return 1;
  if (Gemm::can_implement(args) != cutlass::Status::kSuccess) return 2;
  const size_t bytes = Gemm::get_workspace_size(args);
  void* ws = nullptr;
  if (bytes > 0 && cudaMalloc(&ws, bytes) != cudaSuccess) return 3;
  Gemm gemm;
  int rc = 0;
  if (gemm.initialize(args, ws, nullptr) != cutlass::Status::kSuccess) rc = 3;
  cudaEvent_t e0, e1;
  cudaEventCreate(&e0);
  cudaEventCreate(&e1);
  std::vector<float> t;
  for (int i = 0; rc == 0 && i < reps + 5; ++i) {
    if (Kernel::initialize_workspace(args, ws, nullptr) != cutlass::Status::kSuccess) { rc = 3; break; }
    cudaEventRecord(e0);
    if (gemm.run(nullptr) != cutlass::Status::kSuccess) { rc = 3; break; }
    cudaEventRecord(e1);
    if (cudaEventSynchronize(e1) != cudaSuccess) { rc = 3; break; }
    float ms = 0;
    cudaEventElapsedTime(&ms, e0, e1);
    if (i >= 5) t.push_back(ms * 1000.0f);
  }
  cudaEventDestroy(e0);
  cudaEventDestroy(e1);
  if (ws) cudaFree(ws);
  if (rc == 0) {
    std::sort(t.begin(), t.end());
    *out_us = t[t.size() / 2];
  }
  return rc;
}
'''

kernels = {}
with open(os.path.join(outdir, "cases.csv"), "w") as f:
    f.write("group,layout,m,n,k,kernel,raster,best_tflops,cublas_tflops\n")
    for r in picked:
        kid, knobs = r["best_other_cand"].split()
        raster = {"h": 0, "m": 1, "n": 2}[re.search(r"r=(\w)", knobs).group(1)]
        f.write(f"{r['base']},{r['layout']},{r['m']},{r['n']},{r['k']},{kid},{raster},{r['best_other']},{r['cublas']}\n")
        kernels[kid] = r["layout"]
for kid, layout in kernels.items():
    src = sources[kid]
    runner = re.search(r"using Runner = (cks_gen::Runner<Gemm, \w+>);", src).group(1)
    ns = re.search(r"using Gemm = (cks_k[0-9a-f]+)::Gemm;", src).group(1)
    probe = PROBE.replace("NAMESPACE", ns).replace("RUNNER", runner)
    assert src.count("ReductionMode::Deterministic") == 1, kid
    open(os.path.join(outdir, f"{kid}_d.cu"), "w").write(src + probe)
    open(os.path.join(outdir, f"{kid}_nd.cu"), "w").write(
        src.replace("ReductionMode::Deterministic", "ReductionMode::Nondeterministic") + probe)
print(f"{len(picked)} groups, {len(kernels)} kernels, {2 * len(kernels)} files in {outdir}", file=sys.stderr)
