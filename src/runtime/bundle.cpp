// The bundle index (runtime/bundle.hpp).
#include "runtime/bundle.hpp"

#include <filesystem>

#include "cks/common.hpp"
#include "cks/files.hpp"
#include "common/json_limits.hpp"

namespace cks::rt {

namespace fs = std::filesystem;

namespace {

constexpr size_t kMaxIndexBytes = size_t{256} << 20;

// A library path of the index: relative, inside the folder (no "..", not absolute).
void check_relative(const std::string& path, const std::string& where) {
  const fs::path p(path);
  if (path.empty() || p.is_absolute()) throw Error(where + ": library path '" + path + "' is not relative to the bundle");
  for (const auto& part : p)
    if (part == "..") throw Error(where + ": library path '" + path + "' leaves the bundle folder");
}

template <class T>
T field(const nlohmann::json& j, const char* name, const std::string& where) {
  if (!j.is_object() || !j.contains(name)) throw Error(where + ": missing '" + name + "'");
  try {
    return j.at(name).get<T>();
  } catch (const nlohmann::json::exception&) {
    throw Error(where + ": '" + name + "' has the wrong type");
  }
}

}  // namespace

const char* variant_order_name(VariantOrder o) { return o == VariantOrder::raster ? "raster" : "model"; }

VariantOrder parse_variant_order(std::string_view name) {
  if (name == "model") return VariantOrder::model;
  if (name == "raster") return VariantOrder::raster;
  throw Error("unknown variant order '" + std::string(name) + "' (expected model or raster)");
}

nlohmann::json BundleIndex::to_json() const {
  nlohmann::json j{{"schema", kBundleSchema},
                   {"schema_version", schema_version},
                   {"cks_version", cks_version},
                   {"gpu_arch", gpu_arch},
                   {"abi_version", abi_version},
                   {"cuda_version", cuda_version},
                   {"cutlass_version", cutlass_version},
                   {"model", {{"path", model_path}, {"hash", model_hash}, {"description", model_description}}},
                   {"selector_mode", selector_mode},
                   {"top", top},
                   {"variants", variants},
                   {"variant_order", variant_order_name(variant_order)},
                   {"created", created}};
  nlohmann::json ks = nlohmann::json::object();
  for (const auto& [id, k] : kernels) {
    nlohmann::json e{{"canonical", k.canonical}};
    if (k.ok()) {
      e["library"] = k.library;
      e["index"] = k.index;
    } else {
      e["library"] = nullptr;
      e["error"] = k.error;
    }
    ks[id] = std::move(e);
  }
  j["kernels"] = std::move(ks);
  nlohmann::json ps = nlohmann::json::array();
  for (const auto& p : problems) {
    nlohmann::json picks = nlohmann::json::array();
    for (const auto& s : p.picks) {
      const auto it = kernels.find(s.kernel_id);
      nlohmann::json e{{"rank", s.rank}, {"kernel_id", s.kernel_id}, {"knobs", s.knobs}, {"score", s.score}};
      if (s.variant) e["variant"] = true;
      // The pick's library and index (the kernel map's, repeated so a problem reads on its own).
      if (it != kernels.end() && it->second.ok()) {
        e["library"] = it->second.library;
        e["index"] = it->second.index;
      } else {
        e["library"] = nullptr;
        e["index"] = nullptr;
      }
      picks.push_back(std::move(e));
    }
    ps.push_back({{"layout", std::string(to_string(p.layout))}, {"m", p.m}, {"n", p.n}, {"k", p.k}, {"picks", picks}});
  }
  j["problems"] = std::move(ps);
  return j;
}

BundleIndex BundleIndex::from_json(const nlohmann::json& j, const std::string& origin) {
  if (!j.is_object() || j.value("schema", std::string()) != kBundleSchema)
    throw Error(origin + ": not a cks bundle index (no \"schema\": \"" + kBundleSchema + "\")");
  BundleIndex b;
  b.schema_version = field<int>(j, "schema_version", origin);
  if (b.schema_version != kBundleSchemaVersion)
    throw Error(origin + ": bundle schema version " + std::to_string(b.schema_version) + ", this cks reads version " +
                std::to_string(kBundleSchemaVersion) + " (rebuild it with this cks bundle)");
  b.cks_version = field<std::string>(j, "cks_version", origin);
  b.gpu_arch = field<std::string>(j, "gpu_arch", origin);
  b.abi_version = field<int>(j, "abi_version", origin);
  b.cuda_version = j.value("cuda_version", "");
  b.cutlass_version = j.value("cutlass_version", "");
  const auto& model = j.contains("model") ? j.at("model") : nlohmann::json::object();
  b.model_path = field<std::string>(model, "path", origin + ": model");
  b.model_hash = field<std::string>(model, "hash", origin + ": model");
  b.model_description = model.value("description", "");
  b.selector_mode = j.value("selector_mode", "");
  b.top = field<int>(j, "top", origin);
  b.variants = j.value("variants", 0);
  // Bundles before --variant-order have no field: their variants are in the model's order.
  if (j.contains("variant_order")) {
    const auto name = field<std::string>(j, "variant_order", origin);
    try {
      b.variant_order = parse_variant_order(name);
    } catch (const Error& err) {
      throw Error(origin + ": " + err.what());
    }
  }
  b.created = j.value("created", "");
  const auto& ks = j.contains("kernels") ? j.at("kernels") : nlohmann::json();
  if (!ks.is_object()) throw Error(origin + ": 'kernels' must be an object (kernel ID -> library)");
  for (const auto& [id, e] : ks.items()) {
    const std::string where = origin + ": kernel " + id;
    BundleKernel k;
    k.kernel_id = id;
    k.canonical = field<std::string>(e, "canonical", where);
    if (e.contains("library") && !e.at("library").is_null()) {
      k.library = field<std::string>(e, "library", where);
      check_relative(k.library, where);
      k.index = field<int>(e, "index", where);
      if (k.index < 0) throw Error(where + ": negative index " + std::to_string(k.index));
    } else {
      k.error = e.value("error", "not compiled");
    }
    // The ID must be the canonical descriptor's (catches a hand-edited or corrupted index).
    try {
      if (KernelDesc::from_canonical(k.canonical).id() != id) throw Error("the ID is not the descriptor's");
    } catch (const Error& err) {
      throw Error(where + ": bad canonical '" + k.canonical + "': " + err.what());
    }
    b.kernels.emplace(id, std::move(k));
  }
  const auto& ps = j.contains("problems") ? j.at("problems") : nlohmann::json();
  if (!ps.is_array()) throw Error(origin + ": 'problems' must be an array");
  for (size_t i = 0; i < ps.size(); ++i) {
    const auto& e = ps[i];
    const std::string where = origin + ": problem " + std::to_string(i + 1);
    BundleProblem p;
    try {
      p.layout = parse_layout(field<std::string>(e, "layout", where));
    } catch (const Error& err) {
      throw Error(where + ": " + err.what());
    }
    p.m = field<int64_t>(e, "m", where);
    p.n = field<int64_t>(e, "n", where);
    p.k = field<int64_t>(e, "k", where);
    try {
      check_problem(p.m, p.n, p.k, p.layout);
    } catch (const Error& err) {
      throw Error(where + ": " + err.what());
    }
    const auto& picks = e.contains("picks") ? e.at("picks") : nlohmann::json();
    if (!picks.is_array()) throw Error(where + ": 'picks' must be an array");
    for (const auto& s : picks) {
      BundlePick pick;
      pick.rank = field<int>(s, "rank", where);
      pick.kernel_id = field<std::string>(s, "kernel_id", where);
      pick.knobs = field<std::string>(s, "knobs", where);
      pick.score = s.value("score", 0.0);
      pick.variant = s.value("variant", false);
      if (!b.kernels.count(pick.kernel_id))
        throw Error(where + ": pick " + pick.kernel_id + " is not in the kernel map");
      try {
        RuntimeKnobs::from_canonical(pick.knobs);
      } catch (const Error& err) {
        throw Error(where + ": pick " + pick.kernel_id + ": " + err.what());
      }
      p.picks.push_back(std::move(pick));
    }
    b.problems.push_back(std::move(p));
  }
  b.reindex();
  return b;
}

void BundleIndex::reindex() {
  by_problem_.clear();
  for (size_t i = 0; i < problems.size(); ++i) {
    const auto& p = problems[i];
    by_problem_[{static_cast<int>(p.layout), p.m, p.n, p.k}] = i;
  }
}

const BundleProblem* BundleIndex::find(Layout layout, int64_t m, int64_t n, int64_t k) const {
  const auto it = by_problem_.find({static_cast<int>(layout), m, n, k});
  return it == by_problem_.end() ? nullptr : &problems[it->second];
}

BundleIndex BundleIndex::load(const std::string& dir) {
  const std::string path = (fs::path(dir) / kBundleIndexFile).string();
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) throw Error("bundle '" + dir + "' is not a folder");
  if (!fs::exists(path, ec)) throw Error("bundle '" + dir + "' has no " + kBundleIndexFile + " (build it with cks bundle)");
  BundleIndex b = from_json(parse_json_limited(read_file_limited(path, "bundle index", kMaxIndexBytes), path), path);
  for (const auto& [id, k] : b.kernels)
    if (k.ok() && !fs::is_regular_file(fs::path(dir) / k.library, ec))
      throw Error(path + ": library " + k.library + " of kernel " + id + " is missing");
  return b;
}

void BundleIndex::write(const std::string& dir) const {
  write_file_atomic((fs::path(dir) / kBundleIndexFile).string(), to_json().dump(1) + "\n");
}

std::string file_hash(const std::string& path) {
  return hex64(fnv1a64(read_file_limited(path, "model file")));
}

}  // namespace cks::rt
