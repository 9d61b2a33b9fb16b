#!/usr/bin/env python3
"""Random probe cases for cutlass_smem_probe.cu: usage cutlass_smem_probe_cases.py SEED COUNT [rowmajor-d] > cases.inc.

With rowmajor-d, C and D are row-major (the swapped kernels' epilogue; cutlass_smem_probe_swapped.txt).

Case names: <layout>_<tm>x<tn>x<tk>_<cm>x<cn>_s<stages>_<mainloop>_<epilogue>_<scheduler> with mainloop
ws|pp|co, epilogue ews|eco|eno, scheduler p|sk. Auto-stage cases whose carve-out leaves fewer than two
stages are skipped (they do not compile: the mainloop static_asserts Stages >= 2).
"""
import math
import random
import sys

MAINLOOP = {"ws": "WS", "pp": "Ping", "co": "Coop"}
EPILOGUE = {"ews": "EWS", "eco": "ECoop", "eno": "ENo"}
SCHEDULER = {"p": "P", "sk": "SK"}
COMBOS = [("ws", "ews", "p"), ("ws", "eno", "p"), ("pp", "ews", "p"), ("pp", "eno", "p"),
          ("co", "eco", "p"), ("co", "eno", "p"), ("co", "eco", "sk"), ("co", "eno", "sk")]


def auto_stages(tm, tn, tk, epilogue):
    if epilogue == "eno":
        storage = 1
    else:
        em, en = min(128 if epilogue == "eco" else 64, tm), math.gcd(min(32, tn), tn)
        storage = em * en * min((tm // em) * (tn // en), 2) * 2 + 2048
    return (232448 - (storage + 127) // 128 * 128) // ((tm + tn) * tk * 2 + 16)


def main():
    rng = random.Random(int(sys.argv[1]))
    d_layout = ",RM" if sys.argv[3:] == ["rowmajor-d"] else ""
    tiles = [(tm, tn, tk) for tm in (64, 128, 256) for tn in range(8, 257, 8) for tk in (32, 64, 128, 256)
             if tk < 256 or tm == 64]
    for _ in range(int(sys.argv[2])):
        tm, tn, tk = rng.choice(tiles)
        ml, ep, sc = rng.choice([c for c in COMBOS if c[0] != "co" or tm >= 128])
        layout = rng.choice(["tn", "nt", "nn", "tt"])
        stages = rng.choice([0, 0, 2, 3])
        cn = rng.choice([1, 2])
        if stages == 0 and auto_stages(tm, tn, tk, ep) < 2:
            continue
        la, lb = ("RM" if layout[0] == "t" else "CMj"), ("RM" if layout[1] == "t" else "CMj")
        name = f"{layout}_{tm}x{tn}x{tk}_1x{cn}_s{stages}_{ml}_{ep}_{sc}"
        print(f'probe<{tm},{tn},{tk},1,{cn},{stages},{la},{lb},{MAINLOOP[ml]},{EPILOGUE[ep]},{SCHEDULER[sc]}{d_layout}>("{name}");')


if __name__ == "__main__":
    main()
