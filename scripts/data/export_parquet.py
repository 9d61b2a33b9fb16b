#!/usr/bin/env python3
"""The measurement registry as Parquet files for pandas, polars, DuckDB (docs/parquet.md).

    python3 scripts/data/export_parquet.py --out out/corpus-parquet              # data/shards
    python3 scripts/data/export_parquet.py --registry run.db --out out/run-parquet
    python3 scripts/data/export_parquet.py --check out/corpus-parquet --registry DB   # round trip

Writes one file per table into --out (zstd, dictionary-encoded strings):
  measurements.parquet  every measurement row (any status, cuBLAS included) joined with its run's
                        provenance (run_*) and its group's shape (m, n, k, layout)
  runs.parquet, groups.parquet, kernels.parquet, plan_items.parquet, profiles.parquet, meta.parquet
                        the other tables as they are
  manifest.json         rows per table, the source, the schema version, the cks commit
A shard directory (--data, default data/shards) is read through the corpus cache (`cks data cache
path`: merged once, the same rows as every other reader). Needs pyarrow (CKS_WITH_PARQUET=1 bash
scripts/setup.sh, or python3 -m pip install pyarrow). `--check` reads the files back and compares
every row of every table, and every measurement's provenance, with the registry.
"""
from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import sqlite3
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BATCH = 500_000

# The measurements file: (column, SQL expression, type name). The order is the file's.
MEASUREMENT_COLUMNS = [
    ("uuid", "m.uuid", "string"),
    ("run_uuid", "m.run_uuid", "string"),
    ("group_key", "m.group_key", "string"),
    ("m", "g.m", "int64"),
    ("n", "g.n", "int64"),
    ("k", "g.k", "int64"),
    ("layout", "g.layout", "dict"),
    ("kernel_id", "m.kernel_id", "dict"),
    ("knobs", "m.knobs", "dict"),
    ("status", "m.status", "dict"),
    ("mean_us", "m.mean_us", "float64"),
    ("std_us", "m.std_us", "float64"),
    ("samples", "m.n", "int32"),
    ("tflops", "m.tflops", "float64"),
    ("sm_clock_mhz", "m.sm_clock_mhz", "float64"),
    ("mem_clock_mhz", "m.mem_clock_mhz", "float64"),
    ("temp_c", "m.temp_c", "float64"),
    ("power_w", "m.power_w", "float64"),
    ("max_rel_err", "m.max_rel_err", "float64"),
    ("error", "m.error", "dict"),
    ("started_at", "m.started_at", "timestamp"),
    ("finished_at", "m.finished_at", "timestamp"),
    ("attempt", "m.attempt", "int32"),
    ("worker", "m.worker", "dict"),
    # The run's provenance (runs table), repeated per row: dictionary-encoded, nearly free.
    ("run_kind", "r.kind", "dict"),
    ("gpu_name", "r.gpu_name", "dict"),
    ("gpu_uuid", "r.gpu_uuid", "dict"),
    ("driver_version", "r.driver_version", "dict"),
    ("cuda_version", "r.cuda_version", "dict"),
    ("cublas_version", "r.cublas_version", "dict"),
    ("cutlass_version", "r.cutlass_version", "dict"),
    ("git_sha", "r.git_sha", "dict"),
    ("host", "r.host", "dict"),
    ("run_started_at", "r.started_at", "dict"),
    ("run_ended_at", "r.ended_at", "dict"),
]
# A measurement's group shape: the key names it, whatever sets list it (groups has a row per set).
MEASUREMENTS_SQL = (
    "SELECT " + ", ".join(e for _, e, _ in MEASUREMENT_COLUMNS) +
    " FROM measurements m LEFT JOIN runs r ON r.uuid = m.run_uuid"
    " LEFT JOIN (SELECT key, min(m) AS m, min(n) AS n, min(k) AS k, min(layout) AS layout FROM groups GROUP BY key) g"
    " ON g.key = m.group_key ORDER BY m.rowid")
# The other tables, whole, in their own order. A table a registry lacks (profiles before schema 2)
# is written empty.
TABLES = {
    "runs": "uuid",
    "groups": "key, set_name",
    "kernels": "kernel_id",
    "plan_items": "group_key, kernel_id, knobs",
    "profiles": "run_uuid, group_key, kernel_id, knobs, metric",
    "meta": "key",
}


def die(msg):
    print(f"export_parquet: error: {msg}", file=sys.stderr)
    sys.exit(1)


def import_arrow():
    try:
        import pyarrow as pa
        import pyarrow.parquet as pq
    except ImportError:
        die("pyarrow is not installed (CKS_WITH_PARQUET=1 bash scripts/setup.sh, or python3 -m pip install pyarrow)")
    return pa, pq


def registry_of(args):
    """The registry to read: --registry, or the corpus cache entry of --data."""
    if args.registry:
        if not os.path.isfile(args.registry):
            die(f"no registry at '{args.registry}'")
        return args.registry
    data = args.data or os.path.join(ROOT, "data/shards")
    proc = subprocess.run([args.cks, "data", "cache", "path", "--data", data], capture_output=True, text=True)
    if proc.returncode != 0:
        die(f"cks data cache path failed: {proc.stderr.strip()}")
    return proc.stdout.strip()


def connect(path):
    db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    db.execute("PRAGMA query_only=1")
    return db


def table_columns(db, table):
    return [(r[1], (r[2] or "").upper()) for r in db.execute(f"PRAGMA table_info({table})")]


def has_table(db, table):
    return db.execute("SELECT count(*) FROM sqlite_master WHERE type='table' AND name=?", (table,)).fetchone()[0] > 0


# ISO-8601 UTC with milliseconds, as the registry writes them ("2025-06-01T12:34:56.789Z").
def to_ms(text):
    if text is None or text == "":
        return None
    if len(text) != 24 or text[10] != "T" or text[19] != "." or text[23] != "Z":
        raise ValueError(f"time '{text}' is not ISO-8601 UTC with milliseconds")
    t = dt.datetime.strptime(text[:19], "%Y-%m-%dT%H:%M:%S").replace(tzinfo=dt.timezone.utc)
    return int(t.timestamp()) * 1000 + int(text[20:23])


def from_ms(ms):
    if ms is None:
        return ""
    t = dt.datetime.fromtimestamp(ms // 1000, tz=dt.timezone.utc)
    return t.strftime("%Y-%m-%dT%H:%M:%S") + f".{ms % 1000:03d}Z"


def arrow_type(pa, name):
    return {"string": pa.string(), "dict": pa.dictionary(pa.int32(), pa.string()), "int64": pa.int64(),
            "int32": pa.int32(), "float64": pa.float64(), "timestamp": pa.timestamp("ms", tz="UTC")}[name]


def sqlite_type(decl):
    if "INT" in decl:
        return "int64"
    if "REAL" in decl:
        return "float64"
    return "dict"


def write_batches(pa, pq, path, schema, batches, level, row_group):
    n = 0
    with pq.ParquetWriter(path, schema, compression="zstd", compression_level=level, use_dictionary=True,
                          write_statistics=True) as w:
        for cols in batches:
            table = pa.table(cols, schema=schema)
            w.write_table(table, row_group_size=row_group)
            n += table.num_rows
    return n


def rows_in_batches(cursor):
    while True:
        rows = cursor.fetchmany(BATCH)
        if not rows:
            return
        yield rows


def export(args):
    pa, pq = import_arrow()
    registry = registry_of(args)
    db = connect(registry)
    if not has_table(db, "meta"):
        die(f"'{registry}' is not a cks registry")
    os.makedirs(args.out, exist_ok=True)
    t0 = time.time()
    manifest = {"source": registry, "schema_version": db.execute(
        "SELECT value FROM meta WHERE key='schema_version'").fetchone()[0], "compression": f"zstd({args.level})",
                "exported_at": dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"), "tables": {}}

    schema = pa.schema([pa.field(c, arrow_type(pa, t)) for c, _, t in MEASUREMENT_COLUMNS])

    def measurement_batches():
        cur = db.execute(MEASUREMENTS_SQL)
        for rows in rows_in_batches(cur):
            cols = list(zip(*rows))
            out = {}
            for i, (name, _, typ) in enumerate(MEASUREMENT_COLUMNS):
                v = cols[i]
                if typ == "timestamp":
                    v = [to_ms(x) for x in v]
                out[name] = pa.array(v, type=arrow_type(pa, typ))
            yield out

    files = {}
    path = os.path.join(args.out, "measurements.parquet")
    n = write_batches(pa, pq, path + ".tmp", schema, measurement_batches(), args.level, args.row_group)
    os.replace(path + ".tmp", path)
    files["measurements"] = n
    for table, order in TABLES.items():
        cols = table_columns(db, table) if has_table(db, table) else []
        if not cols and table == "profiles":
            cols = [("run_uuid", "TEXT"), ("group_key", "TEXT"), ("kernel_id", "TEXT"), ("knobs", "TEXT"),
                    ("metric", "TEXT"), ("value", "REAL"), ("unit", "TEXT")]
        tschema = pa.schema([pa.field(c, arrow_type(pa, sqlite_type(d))) for c, d in cols])

        def batches(table=table, cols=cols, order=order):
            if not has_table(db, table):
                return
            cur = db.execute(f"SELECT {', '.join(c for c, _ in cols)} FROM {table} ORDER BY {order}")
            for rows in rows_in_batches(cur):
                data = list(zip(*rows))
                yield {c: pa.array(data[i], type=tschema.field(c).type) for i, (c, _) in enumerate(cols)}

        path = os.path.join(args.out, f"{table}.parquet")
        files[table] = write_batches(pa, pq, path + ".tmp", tschema, batches(), args.level, args.row_group)
        os.replace(path + ".tmp", path)
    for table, rows in files.items():
        size = os.path.getsize(os.path.join(args.out, f"{table}.parquet"))
        manifest["tables"][table] = {"rows": rows, "bytes": size}
    manifest["bytes"] = sum(t["bytes"] for t in manifest["tables"].values())
    manifest["seconds"] = round(time.time() - t0, 1)
    with open(os.path.join(args.out, "manifest.json"), "w") as f:
        json.dump(manifest, f, indent=1)
        f.write("\n")
    print(f"export_parquet: {files['measurements']} measurements and {len(TABLES)} tables in {args.out}: "
          f"{manifest['bytes'] / 1e6:.1f} MB in {manifest['seconds']} s", file=sys.stderr)
    return 0


def check(args):
    """Every row of every table back, equal to the registry's, and every measurement's provenance."""
    pa, pq = import_arrow()
    registry = registry_of(args)
    db = connect(registry)
    problems = []
    pf = pq.ParquetFile(os.path.join(args.check, "measurements.parquet"))
    names = [c for c, _, _ in MEASUREMENT_COLUMNS]
    if pf.schema_arrow.names != names:
        die(f"measurements.parquet has columns {pf.schema_arrow.names}, expected {names}")
    cur = db.execute(MEASUREMENTS_SQL)
    total = 0
    for batch in pf.iter_batches(batch_size=BATCH):
        cols = [batch.column(i).to_pylist() for i in range(batch.num_columns)]
        for i, (_, _, typ) in enumerate(MEASUREMENT_COLUMNS):
            if typ == "timestamp":
                cols[i] = [None if v is None else int(v.timestamp() * 1000 + 0.5) for v in cols[i]]
                cols[i] = [from_ms(v) for v in cols[i]]
        expected = cur.fetchmany(batch.num_rows)
        for r, want in enumerate(expected):
            got = tuple(c[r] for c in cols)
            if got != tuple(want):
                problems.append(f"measurement {want[0]}: {got} != {tuple(want)}")
                if len(problems) > 10:
                    break
        total += batch.num_rows
        if len(expected) != batch.num_rows or len(problems) > 10:
            problems.append("measurements: row counts differ")
            break
    if cur.fetchone() is not None:
        problems.append("measurements: the registry has more rows than the file")
    for table, order in TABLES.items():
        path = os.path.join(args.check, f"{table}.parquet")
        got = pq.read_table(path).to_pylist()
        if not has_table(db, table):
            if got:
                problems.append(f"{table}: rows in the file, no table in the registry")
            continue
        cols = [c for c, _ in table_columns(db, table)]
        want = db.execute(f"SELECT {', '.join(cols)} FROM {table} ORDER BY {order}").fetchall()
        got_rows = [tuple(r[c] for c in cols) for r in got]
        if got_rows != want:
            problems.append(f"{table}: {len(got_rows)} rows in the file, {len(want)} in the registry, or they differ")
    if problems:
        for p in problems[:12]:
            print(f"export_parquet: mismatch: {p}", file=sys.stderr)
        return 1
    print(f"export_parquet: round trip ok: {total} measurements with their provenance and every row of "
          f"{', '.join(TABLES)}", file=sys.stderr)
    return 0


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    src = ap.add_mutually_exclusive_group()
    src.add_argument("--registry", help="a registry file (.db)")
    src.add_argument("--data", help="a shard directory (default data/shards), read through the corpus cache")
    ap.add_argument("--out", help="directory of the Parquet files")
    ap.add_argument("--check", metavar="DIR", help="compare the Parquet files in DIR with the registry")
    ap.add_argument("--level", type=int, default=9, help="zstd level (default %(default)s)")
    ap.add_argument("--row-group", type=int, default=1 << 20, help="rows per row group (default %(default)s)")
    ap.add_argument("--cks", default=os.path.join(ROOT, "build/bin/cks"), help="the cks binary (for --data)")
    args = ap.parse_args()
    if bool(args.out) == bool(args.check):
        ap.error("give --out DIR (export) or --check DIR (round trip)")
    return check(args) if args.check else export(args)


if __name__ == "__main__":
    sys.exit(main())
