// Internal: the merge of a shard directory, shared by the corpus cache and uncached reads.
#pragma once
#include <string>
#include <vector>

namespace cks::reg {

// Merges `shards` (*.db.xz, *.db.gz, *.cols.xz) into the empty file `dest`: the largest shard, decompressed, is the
// base the others merge into, by decreasing size then name (copying the base is much cheaper
// than re-inserting its rows, and the order is deterministic). `dest` is left in WAL mode.
void merge_shards(std::vector<std::string> shards, const std::string& dest);

}  // namespace cks::reg
