// Columnar shards (`*.cols.xz`, session 37): a registry written table by table and column by
// column as JSON lines, then xz. The SQLite file of a `.db.xz` shard interleaves its columns row by
// row inside B-tree pages and an index of its primary key, which xz compresses far worse than a
// column of like values: lease 44's shard is 150 KB as `.db.xz`, 108 KB compacted, ~50 KB as
// columns compacted. The repository's size limit (512 MiB packed, the corpus's history included)
// makes that the difference between one more lease and several.
//
// Format "cks-shard-columns-1" (UTF-8 text, one JSON value per line):
//   {"format":"cks-shard-columns-1"}
//   then per table, in the registry's creation order:
//   {"table":NAME,"sql":"CREATE TABLE ...","columns":[NAME,...],"rows":N}
//   then the rows in chunks of kColumnarChunk (the last one shorter), each chunk one line per
//   column: a JSON array of that column's values for the chunk's rows, in rowid order;
//   and last {"end":"cks-shard-columns-1"} (a file cut between two tables is not a registry).
//   One column may be derived: a chunk of measurements.tflops where most values are the measured
//   mean's TFLOP/s on the group's shape, rounded to 6 significant digits (a compact shard), is
//   {"derive":"tflops-6g","values":[...]}: an integer -2..2 for such a value (units of the 6th
//   digit from the rounding; compact rounds the mean first, so 1 unit off in a third of the rows),
//   any other value as itself in a one-element array. Lease 37's shard: 601 -> ~400 KB.
// Values keep SQLite's storage class: integer, real (shortest text that reads back to the same
// double; +-inf as {"real":"inf"} / {"real":"-inf"}), text (as JSON strings; bytes that are not
// UTF-8 as {"text_hex":...}), blob ({"blob_hex":...}) and null. Lossless: decoding gives the same
// tables, columns, types and values, row for row (tests/registry/test_columnar.cpp).
#pragma once
#include <sqlite3.h>

#include <cstddef>
#include <string>

namespace cks::reg {

inline constexpr const char* kColumnarFormat = "cks-shard-columns-1";
inline constexpr size_t kColumnarChunk = 65536;

// Writes every table of `db` (not SQLite's own) to the text file `path` (created or replaced).
void write_columnar(sqlite3* db, const std::string& path);

// Builds the registry `dest_db` (an empty or new SQLite file) from the text `path` of the shard
// `shard` (named in errors). Only CREATE TABLE statements are run, one per table, each checked to
// create the table its header names with the columns it lists. Throws Error "corrupt shard
// '<shard>': ..." for anything else: another format, a malformed line, a count that does not
// match, a truncated file.
void read_columnar(const std::string& path, const std::string& dest_db, const std::string& shard);

// "" when the databases hold the same tables (SQL, rows in rowid order, every value's storage
// class and bytes, a REAL's bits), else the first difference in words. `cks data pack --columnar`
// decodes the shard it wrote and checks it against the registry this way before committing it.
std::string first_difference(sqlite3* a, sqlite3* b);

}  // namespace cks::reg
