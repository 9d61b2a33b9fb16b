// `cks data stats|export|merge|pack`: reading, combining and committing measurement data.
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <memory>

#include "cks/registry.hpp"
#include "cli/commands.hpp"
#include "cli/util.hpp"

namespace cks::cli {
namespace {

using json = nlohmann::ordered_json;

// Stats and export only read: the file is opened read-only and never changed.
RegistryOptions read_only() {
  RegistryOptions o;
  o.read_only = true;
  return o;
}

// Flattens nested objects into "a.b.c" -> value rows (arrays are left to the md tables).
void flatten(const json& j, const std::string& prefix, Table& t) {
  for (const auto& [key, value] : j.items()) {
    const std::string path = prefix.empty() ? key : prefix + "." + key;
    if (value.is_object()) flatten(value, path, t);
    else if (value.is_number_integer()) t.add_row({path, value.get<int64_t>()});
    else if (value.is_boolean()) t.add_row({path, static_cast<int64_t>(value.get<bool>())});
    else if (value.is_number()) t.add_row({path, value.get<double>()});
    else if (value.is_string()) t.add_row({path, value.get<std::string>()});
  }
}

void print_stats(const json& stats, Format format) {
  if (format == Format::json) {
    std::cout << stats.dump(2) << '\n';
    return;
  }
  Table counts({"metric", "value"});
  flatten(stats, "", counts);
  if (format == Format::csv) {
    counts.write(std::cout, format);
    return;
  }
  std::cout << "## Counts\n\n";
  counts.write(std::cout, format);
  Table runs({"uuid", "kind", "gpu_name", "driver_version", "cuda_version", "cutlass_version", "git_sha", "host",
              "started_at", "ended_at", "provenance_complete"});
  for (const auto& r : stats["runs"]["list"]) {
    std::vector<Cell> row;
    for (const auto& c : runs.columns()) {
      if (r[c].is_boolean()) row.emplace_back(std::string(r[c].get<bool>() ? "yes" : "no"));
      else row.emplace_back(r[c].get<std::string>());
    }
    runs.add_row(std::move(row));
  }
  std::cout << "\n## Runs\n\n";
  runs.write(std::cout, format);
}

void register_stats(CLI::App* data) {
  auto* cmd = data->add_subcommand("stats", "counts: runs and provenance, groups, attempts by status, kernels, "
                                            "cuBLAS references");
  auto src = std::make_shared<SourceOpts>();
  auto fmt = std::make_shared<std::string>();
  add_source(cmd, *src);
  add_format(cmd, *fmt, "json");
  cmd->callback([src, fmt] {
    const Format format = parse_format(*fmt);
    auto source = open_data(src->registry, src->data);
    print_stats(data_stats(*source), format);
  });
}

void register_export(CLI::App* data) {
  auto* cmd = data->add_subcommand("export", "one row per measurement with its group, run provenance and kernel");
  auto src = std::make_shared<SourceOpts>();
  auto fmt = std::make_shared<std::string>();
  auto filter = std::make_shared<MeasurementFilter>();
  auto layout = std::make_shared<std::string>();
  auto no_cublas = std::make_shared<bool>(false);
  add_source(cmd, *src);
  add_format(cmd, *fmt, "csv");
  cmd->add_option("--status", filter->status, "only this status (ok, crash, ...)");
  cmd->add_option("--set", filter->set, "only groups of this set (train, eval, ...)");
  cmd->add_option("--layout", *layout, "only groups of this layout (tn, nt, nn, tt)");
  cmd->add_flag("--no-cublas", *no_cublas, "leave out the cuBLAS reference rows");
  cmd->callback([src, fmt, filter, layout, no_cublas] {
    const Format format = parse_format(*fmt);
    if (!filter->status.empty() && !is_valid_status(filter->status))
      throw Error("unknown status '" + filter->status + "' (expected one of ok, compile_error, cannot_implement, "
                  "launch_error, incorrect, crash, timeout, cut, quarantined)");
    if (!layout->empty()) filter->layout = parse_layout(*layout);
    filter->include_cublas = !*no_cublas;
    auto source = open_data(src->registry, src->data);
    const Registry reg(source->path(), read_only());
    std::ios::sync_with_stdio(false);
    export_measurements(reg, *filter, format, std::cout);
    std::cout.flush();
  });
}

void register_merge(CLI::App* data) {
  auto* cmd = data->add_subcommand("merge", "combine registries or shards into one without duplicates");
  auto out = std::make_shared<std::string>();
  auto inputs = std::make_shared<std::vector<std::string>>();
  auto fmt = std::make_shared<std::string>();
  cmd->add_option("--out", *out, "destination registry (created if missing)")->required();
  cmd->add_option("inputs", *inputs,
                  "source registries (.db), shards (.db.xz, .db.gz, .cols.xz) or shard directories (every shard in it)")
      ->required();
  auto no_plan = std::make_shared<bool>(false);
  cmd->add_flag("--no-plan-items", *no_plan, "leave the sources' plan items out (a slim copy)");
  add_format(cmd, *fmt);
  cmd->callback([out, inputs, fmt, no_plan] {
    const Format format = parse_format(*fmt);
    // A directory stands for its shards (data/shards: every form, so that a glob of one form
    // cannot leave a shard out).
    std::vector<std::string> sources;
    for (const std::string& in : *inputs) {
      if (std::filesystem::is_directory(in)) {
        for (std::string& shard : shard_files(in)) sources.push_back(std::move(shard));
      } else {
        sources.push_back(in);
      }
    }
    const MergeStats s = merge_registries(*out, sources, !*no_plan);
    Table t({"table", "new_rows"});
    t.add_row({std::string("runs"), int64_t{s.runs}});
    t.add_row({std::string("groups"), int64_t{s.groups}});
    t.add_row({std::string("kernels"), int64_t{s.kernels}});
    t.add_row({std::string("plan_items"), int64_t{s.plan_items}});
    t.add_row({std::string("measurements"), int64_t{s.measurements}});
    t.add_row({std::string("profiles"), int64_t{s.profiles}});
    t.write(std::cout, format);
  });
}

void register_pack(CLI::App* data) {
  auto* cmd = data->add_subcommand("pack", "write a registry as an immutable compressed shard for data/shards");
  auto registry = std::make_shared<std::string>();
  auto out_dir = std::make_shared<std::string>(kDefaultShardDir);
  cmd->add_option("--registry", *registry, "the registry to pack")->required();
  cmd->add_option("--out-dir", *out_dir, "shard directory")->capture_default_str();
  auto parts = std::make_shared<int>(1);
  cmd->add_option("--parts", *parts, "split the groups over this many shards (large runs)")->transform(uint_in(1, 100000))->capture_default_str();
  auto compression = std::make_shared<std::string>("xz");
  cmd->add_option("--compression", *compression, "xz (about half the size of gzip on registries) or gz (shards before session 14)")
      ->check(CLI::IsMember({"xz", "gz"}))
      ->capture_default_str();
  auto by_run = std::make_shared<bool>(false);
  cmd->add_flag("--by-run", *by_run,
                "one shard per run with rows (a collect of several plans: a shard each); runs whose shard exists "
                "already (a resumed lease's earlier run) are skipped; the last shard also keeps what no run's rows use");
  auto compact = std::make_shared<bool>(false);
  cmd->add_flag("--compact", *compact,
                "round the measured values to what they can tell (mean and TFLOP/s 6 significant digits, std and "
                "error 3, power 0.1 W) and timestamps to the second: ~28 % smaller shards, every row and key kept");
  auto columnar = std::make_shared<bool>(false);
  cmd->add_flag("--columnar", *columnar,
                "write the registry's columns (a .cols.xz shard: JSON lines, one per column, then xz) instead of its "
                "SQLite file: lossless, 2.5-3.6x smaller (compacted, lease 44: 108 -> 40 KB, lease 37: 1,488 -> 408 KB); read "
                "like any shard");
  cmd->callback([registry, out_dir, parts, compression, by_run, compact, columnar] {
    if (*columnar) {
      if (*compression != "xz") throw Error("--columnar shards are always xz (.cols.xz): drop --compression " + *compression);
      *compression = "cols";
    }
    if (*by_run) {
      if (*parts != 1) throw Error("--by-run and --parts cannot be combined (a run's shard is one file)");
      const PackByRun r = pack_shards_by_run(*registry, *out_dir, *compression, *compact);
      for (const auto& [run, shard] : r.skipped)
        std::cerr << "cks data pack: run " << run << " is packed already (" << shard << "): skipped\n";
      for (const auto& [run, shard] : r.written) std::cout << shard << '\n';
      if (r.written.empty()) throw Error("every run of '" + *registry + "' is packed already: no shard written");
      return;
    }
    for (const auto& shard : pack_shards(*registry, *out_dir, *parts, *compression, *compact))
      std::cout << shard << '\n';
  });
}

// The shard directory of --data (default data/shards), checked like open_data() checks it.
std::string shard_dir(const std::string& data) {
  const std::string dir = data.empty() ? kDefaultShardDir : data;
  if (!std::filesystem::is_directory(dir)) {
    if (data.empty()) throw Error("no data: pass --data DIR (" + dir + " not found)");
    throw Error("--data expects a directory of shards; '" + dir + "' is not one");
  }
  return dir;
}

std::string cache_dir_or_fail() {
  const std::string dir = corpus_cache_dir();
  if (dir.empty())
    throw Error("the corpus cache is off (CKS_CORPUS_CACHE=off, or neither XDG_CACHE_HOME nor HOME is set)");
  return dir;
}

void register_cache(CLI::App* data) {
  auto* cache = data->add_subcommand(
      "cache", "the corpus cache: shard directories merged once, opened in place by every reading command");
  cache->require_subcommand(1);

  auto* status = cache->add_subcommand("status", "the cache directory's entries, most recently used first");
  auto sdata = std::make_shared<std::string>();
  auto sfmt = std::make_shared<std::string>();
  status->add_option("--data", *sdata, "mark the entry of this shard directory (default data/shards)");
  add_format(status, *sfmt);
  status->callback([sdata, sfmt] {
    const Format format = parse_format(*sfmt);
    const std::string dir = cache_dir_or_fail();
    std::string current;
    const std::string shards = sdata->empty() ? kDefaultShardDir : *sdata;
    if (std::filesystem::is_directory(shards)) current = corpus_key(shard_files(shards));
    else if (!sdata->empty()) shard_dir(*sdata);  // the one-line error
    Table t({"key", "current", "shards", "mb", "built_at", "build_s", "last_used", "path"});
    for (const auto& e : corpus_cache_entries(dir))
      t.add_row({e.key, std::string(e.key == current ? "yes" : "no"), static_cast<int64_t>(e.shards),
                 static_cast<double>(e.bytes) / 1e6, e.built_at, e.build_seconds, e.last_used, e.path});
    std::fprintf(stderr, "cks data cache: %s%s\n", dir.c_str(),
                 current.empty() ? ""
                                 : (" (" + shards + ": key " + current +
                                    (std::filesystem::exists(dir + "/" + current + ".db") ? ", cached)" : ", not cached yet)"))
                                       .c_str());
    t.write(std::cout, format);
  });

  auto* path = cache->add_subcommand("path", "the cached registry of a shard directory (built when missing)");
  auto pdata = std::make_shared<std::string>();
  path->add_option("--data", *pdata, "the shard directory (default data/shards)");
  path->callback([pdata] {
    cache_dir_or_fail();
    const DataSource source(shard_dir(*pdata));
    std::cout << source.path() << '\n';
  });

  auto* rebuild = cache->add_subcommand("rebuild", "merge a shard directory into its cache entry again");
  auto rdata = std::make_shared<std::string>();
  rebuild->add_option("--data", *rdata, "the shard directory (default data/shards)");
  rebuild->callback([rdata] {
    cache_dir_or_fail();
    DataSourceOptions o;
    o.rebuild = true;
    const DataSource source(shard_dir(*rdata), o);
    std::cout << source.path() << '\n';
  });

  auto* clear = cache->add_subcommand("clear", "remove every entry of the cache directory");
  clear->callback([] {
    const std::string dir = cache_dir_or_fail();
    const size_t n = clear_corpus_cache(dir);
    std::fprintf(stderr, "cks data cache: removed %zu entries from %s\n", n, dir.c_str());
  });
}

}  // namespace

void register_data(CLI::App& app) {
  auto* data = app.add_subcommand("data", "measurement registry: stats, export, merge, pack, cache");
  data->require_subcommand(1);
  register_stats(data);
  register_export(data);
  register_merge(data);
  register_pack(data);
  register_cache(data);
}

}  // namespace cks::cli
