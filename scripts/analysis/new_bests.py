#!/usr/bin/env python3
"""How often an active-learning lease found a new group best (issue 16, per round).

    new_bests.py LEASE_REGISTRY CORPUS_REGISTRY

For every group the lease measured, its fastest kernel row against the fastest the corpus had
before, each as a time over its own run's cuBLAS row of the group (runs differ in clocks and host;
the per-group cuBLAS ratio is the corpus's default normalization). Prints the count of groups whose
best moved by more than 1 / 3 / 5 %, the median move (negative: the lease's best is slower than the
corpus's), the 15 largest moves, and the lease kernels' classes (mainloop, tile, raster) that won.
CORPUS_REGISTRY: `cks data merge --no-plan-items --out all.db data/shards` without the lease.
"""
import collections
import sqlite3
import statistics
import sys

new, old = sqlite3.connect(sys.argv[1]), sqlite3.connect(sys.argv[2])


def best(db, keys=None):
    cub, b = {}, {}
    for key, kid, knobs, us in db.execute("SELECT group_key, kernel_id, knobs, min(mean_us) FROM measurements "
                                          "WHERE status = 'ok' GROUP BY group_key, kernel_id, knobs"):
        if keys is not None and key not in keys:
            continue
        if kid == "cublas":
            cub[key] = min(us, cub.get(key, 1e18))
        elif key not in b or us < b[key][0]:
            b[key] = (us, kid, knobs)
    return cub, b


nc, nb = best(new)
oc, ob = best(old, set(nb))
K = {r[0]: r[1:] for r in new.execute("SELECT kernel_id, mainloop, tm, tn FROM kernels")}
gains, cls = [], collections.Counter()
for key in nb:
    if key in ob and key in oc and key in nc:
        g = (ob[key][0] / oc[key]) / (nb[key][0] / nc[key]) - 1
        gains.append((g, key, nb[key][1:], ob[key][1:]))
        if g > 0.01:
            kk = K[nb[key][1]]
            cls[(kk[0], f"{kk[1]}x{kk[2]}", nb[key][2][:3])] += 1
gains.sort(reverse=True)
print(f"{len(gains)} groups; a new best by > 1 %: {sum(g > 0.01 for g, *_ in gains)}, > 3 %: "
      f"{sum(g > 0.03 for g, *_ in gains)}, > 5 %: {sum(g > 0.05 for g, *_ in gains)}; "
      f"median move {100 * statistics.median(g for g, *_ in gains):+.1f} %")
print("largest moves (%, group, the lease's best, the corpus's best before):")
for g, key, nbk, obk in gains[:15]:
    print(f"  {100 * g:+.1f} {key} {nbk} {obk}")
print("classes of the new bests:", cls.most_common(10))
