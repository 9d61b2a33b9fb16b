// The model cache (docs/models.md, "Start-up"): Model::load of a model file parsed before reads
// the parsed model back from "<cache_dir()>/model-<key>.bin" (common/cache_file.hpp) instead of
// parsing the JSON, the booster's base64 and its UBJSON again (the shipped model: ~0.85 s).
//
// key = hash of (the file's bytes, the entry format, this build's feature schema and version):
// another file, a format change or a build with another schema is another entry. Only XGBoost
// models are cached (ridge and MLP files parse in milliseconds). Payload:
//   u8 kind, str objective, u64 schema hash, str schema version, str hw preset,
//   str options (JSON), str provenance (JSON), evidence (u64 top, groups), the XGBoost payload
//   (rankers.hpp: columns, flattened trees, the booster's hash and bytes)
// A missing, stale or corrupt entry is parsed from the file again and rewritten. Both files are
// read through read-only mappings (no copy of the 26 MB file and the 28 MB entry); the booster's
// bytes are copied out of the entry only when the model is saved or run through libxgboost.
#include <algorithm>

#include "common/json_limits.hpp"

#include "cks/models.hpp"
#include "common/cache_file.hpp"
#include "models/rankers.hpp"

namespace cks::models_detail {

namespace {

// Bumped whenever the payload (or the parse it stores: tree_ensemble.cpp's flattening) changes.
constexpr uint64_t kModelCacheFormat = 1;
constexpr std::string_view kKind = "model";
// Entries kept in the cache folder (most recently used first): a model entry is the size of the
// parsed model (~30 MB for the shipped one).
constexpr size_t kKeepModels = 4;

uint64_t entry_key(uint64_t source_hash) {
  const std::string id = hex64(source_hash) + ":" + std::to_string(kModelCacheFormat) + ":" +
                         FeatureSchema::get().hash_hex() + ":" + CKS_VERSION;
  return hash64(id);
}

void write_info(const ModelInfo& info, BinaryWriter& w) {
  w.pod(static_cast<uint8_t>(info.kind));
  w.str(info.objective);
  w.u64(info.schema_hash);
  w.str(info.schema_version);
  w.str(info.hw_preset);
  w.str(info.options.to_json().dump());
  w.str(info.provenance.dump());
  w.u64(info.evidence.top);
  w.u64(info.evidence.groups.size());
  for (const EvidenceGroup& g : info.evidence.groups) {
    w.pod(static_cast<uint8_t>(g.problem.layout));
    w.pod(static_cast<int64_t>(g.problem.m));
    w.pod(static_cast<int64_t>(g.problem.n));
    w.pod(static_cast<int64_t>(g.problem.k));
    w.u64(g.leaders.size());
    for (const auto& [id, knobs] : g.leaders) {
      w.str(id);
      w.str(knobs);
    }
  }
}

ModelInfo read_info(BinaryReader& r) {
  ModelInfo info;
  const auto kind = r.pod<uint8_t>();
  if (kind != static_cast<uint8_t>(ModelKind::xgboost)) throw CacheCorrupt("cache entry: not an XGBoost model");
  info.kind = ModelKind::xgboost;
  info.objective = r.str();
  info.schema_hash = r.u64();
  info.schema_version = r.str();
  info.hw_preset = r.str();
  info.options = TrainOptions::from_json(nlohmann::json::parse(r.str()));
  info.provenance = nlohmann::json::parse(r.str());
  info.evidence.top = r.u64();
  info.evidence.groups.resize(r.count(1 + 3 * sizeof(int64_t) + 8));
  for (EvidenceGroup& g : info.evidence.groups) {
    const auto layout = r.pod<uint8_t>();
    if (layout >= kLayouts.size()) throw CacheCorrupt("cache entry: bad layout");
    g.problem.layout = static_cast<Layout>(layout);
    g.problem.m = r.pod<int64_t>();
    g.problem.n = r.pod<int64_t>();
    g.problem.k = r.pod<int64_t>();
    g.leaders.resize(r.count(16));
    for (auto& [id, knobs] : g.leaders) {
      id = r.str();
      knobs = r.str();
    }
  }
  return info;
}

std::string entry_path(const std::string& dir, uint64_t key) { return dir + "/model-" + hex64(key) + ".bin"; }

// The booster's bytes of a model read back, on first use: from its cache entry if that still
// holds them, else from the model file if that is still the file the model was read from.
std::string read_blob(const std::string& entry, const BlobRef& ref, size_t payload_offset, const std::string& origin,
                      uint64_t source) {
  if (const auto f = MappedFile::open(entry); f && f->bytes().size() >= payload_offset + ref.offset + ref.size) {
    const std::string_view blob = f->bytes().substr(payload_offset + ref.offset, ref.size);
    if (hash64(blob) == ref.hash) return std::string(blob);
  }
  try {
    const std::string text = read_file_limited(origin, "model file");
    if (model_source_hash(text) == source) return xgboost_blob(*parse_model_file(text, origin));
  } catch (const Error&) {
  }
  throw Error("model '" + origin +
              "': its booster is no longer available (the model file and its cache entry changed since the model was "
              "loaded); load the model again");
}

std::unique_ptr<Model> read_entry(const std::string& path, uint64_t key, const std::string& origin, uint64_t source) {
  const std::optional<CacheEntry> entry = read_cache_entry(path, kKind, key);
  if (!entry) return nullptr;
  try {
    BinaryReader r(entry->payload);
    ModelInfo info = read_info(r);
    const size_t payload_offset = entry->payload_offset;
    std::unique_ptr<Model> m = read_xgboost_cache(r, [path, payload_offset, origin, source](const BlobRef& ref) {
      return read_blob(path, ref, payload_offset, origin, source);
    });
    if (!r.done() || info.schema_hash != FeatureSchema::get().hash()) return nullptr;
    info.source_hash = source;
    m->info() = std::move(info);
    return m;
  } catch (const std::bad_alloc&) {
    throw;
  } catch (const std::exception&) {  // CacheCorrupt, a JSON error, an Error of the model's checks
    return nullptr;
  }
}

}  // namespace

uint64_t model_source_hash(std::string_view text) { return hash64(text, 0x636b732d6d6f646cull); }

std::unique_ptr<Model> load_model_file(const std::string& path) {
  // The file's bytes, mapped (or read, where it cannot be mapped).
  std::optional<MappedFile> mapped = MappedFile::open(path);
  std::string read;
  if (!mapped) read = read_file_limited(path, "model file");
  const std::string_view text = mapped ? mapped->bytes() : std::string_view(read);
  const uint64_t source = model_source_hash(text);
  const std::string dir = cache_dir();
  const uint64_t key = entry_key(source);
  if (!dir.empty())
    if (std::unique_ptr<Model> m = read_entry(entry_path(dir, key), key, path, source)) return m;
  std::unique_ptr<Model> m = parse_model_file(text, path);
  m->info().source_hash = source;
  if (!dir.empty() && m->info().kind == ModelKind::xgboost) {
    BinaryWriter w;
    write_info(m->info(), w);
    if (write_xgboost_cache(*m, w)) write_cache_entry(entry_path(dir, key), kKind, key, w.data(), "model-", kKeepModels);
  }
  return m;
}

}  // namespace cks::models_detail
