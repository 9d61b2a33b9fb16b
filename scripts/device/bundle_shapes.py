"""The bundle's problems: the rows of a shapes CSV (m,n,k,layout) that the CUTLASS kernels can run,
M and the layout's contiguous dimensions multiples of 8 (TMA's 16-byte alignment of BF16 rows);
the others (decode M = 1, say) run on cuBLASLt in every mode. Shared by pack_runtime.sh (here) and
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
            if all(int(r[d]) % 8 == 0 for d in CONTIGUOUS[r["layout"]]):
                f.write(f"{r['m']},{r['n']},{r['k']},{r['layout']}\n")


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
