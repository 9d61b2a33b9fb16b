#!/usr/bin/env python3
"""Moves the groups of a picks plan whose shape is also a training group of other plans into set
'train' (same key and seed), in place: `cks plan merge --union` refuses one key in two sets, and
the picks of such a shape are then measured as training rows.

    python3 scripts/corpus/join_train_groups.py PICKS.jsonl TRAIN_PLAN.jsonl [TRAIN_PLAN.jsonl ...]
"""
import json
import sys

train = set()
for part in sys.argv[2:]:
    with open(part) as f:
        next(f)
        for line in f:
            train.add(json.loads(line)["group"]["key"])
with open(sys.argv[1]) as f:
    lines = f.readlines()
moved = 0
with open(sys.argv[1], "w") as f:
    f.write(lines[0])
    for line in lines[1:]:
        g = json.loads(line)
        if g["group"]["key"] in train:
            g["group"]["set"] = "train"
            moved += 1
        f.write(json.dumps(g, separators=(",", ":")) + "\n")
print(f"join_train_groups.py: {moved} groups of {sys.argv[1]} joined the training group of the same shape", file=sys.stderr)
