// Registry schema versions and migrations (schema.cpp).
#pragma once
#include <sqlite3.h>

#include <string>

namespace cks::reg {

int current_schema_version();
// The version recorded in the file (0 for an empty file).
int file_schema_version(sqlite3* db);
// Throws Error when `version` is newer than this build understands.
void check_not_newer(int version, const std::string& path);
// The file's version, refusing what is not a cks registry (nothing is written): a file that
// is not SQLite ("cannot open registry '<path>': file is not a database"), an SQLite file with
// tables but no version, and, unless `allow_empty`, an empty one. Newer versions are refused too.
int checked_schema_version(sqlite3* db, const std::string& path, bool allow_empty);
// Brings the file to current_schema_version() in one transaction (no-op when current).
void migrate(sqlite3* db, const std::string& path);
// The secondary indexes of `measurements`: shards are packed without them (a fifth of an xz
// shard), and every merge recreates them on the registry it builds.
void drop_secondary_indexes(sqlite3* db);
void ensure_secondary_indexes(sqlite3* db);

}  // namespace cks::reg
