"""The bundle's problems: the rows of a shapes CSV (m,n,k,layout) that the CUTLASS kernels can run,
M and the layout's contiguous dimensions multiples of 8 (TMA's 16-byte alignment of BF16 rows);
a row product (M = 1) as the column (N, 1, K) the runtime runs it as; the others run on cuBLASLt. Shared by pack_runtime.sh (here) and
runtime_check.sh (on the device).

    python3 scripts/device/bundle_shapes.py IN.csv OUT.csv
"""
import csv
import sys

CONTIGUOUS = {"tn": "mk", "nt": "mn", "nn": "mk", "tt": "mnk"}


def main(src, dst):
    rows = list(csv.DictReader(open(src)))
    with open(dst, "w") as f:
        f.write("m,n,k,layout\n")
        for r in rows:
            if int(r["m"]) == 1 and int(r["n"]) > 1:  # a row product runs as the column (N, 1, K): the
                # runtime's as_column_problem (runtime/options.hpp), B first with its other letter
                r = {"m": r["n"], "n": "1", "k": r["k"], "layout": "tn" if r["layout"][1] == "n" else "nn"}
            if all(int(r[d]) % 8 == 0 for d in CONTIGUOUS[r["layout"]]):
                f.write(f"{r['m']},{r['n']},{r['k']},{r['layout']}\n")


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
