// Model kinds and objectives, training dispatch, and the model file (JSON).
#include <fstream>
#include <sstream>
#include <thread>

#include "cks/files.hpp"
#include "cks/models.hpp"
#include "common/json_limits.hpp"
#include "models/rankers.hpp"

namespace cks {

namespace {

constexpr std::string_view kModelFormat = "cks-model-1";
constexpr std::array<std::string_view, 3> kKindNames{"xgboost", "ridge", "mlp"};

std::string join(const std::vector<std::string_view>& v) {
  std::string s;
  for (auto x : v) s += (s.empty() ? "" : ", ") + std::string(x);
  return s;
}

}  // namespace

std::string_view to_string(ModelKind k) { return kKindNames[static_cast<size_t>(k)]; }

ModelKind parse_model_kind(std::string_view s) {
  for (size_t i = 0; i < kKindNames.size(); ++i)
    if (kKindNames[i] == s) return static_cast<ModelKind>(i);
  throw Error("unknown model kind '" + std::string(s) + "' (expected xgboost, ridge or mlp)");
}

std::vector<std::string_view> objectives(ModelKind k) {
  switch (k) {
    case ModelKind::xgboost: return {"rank:ndcg", "rank:pairwise", "reg:squarederror"};
    case ModelKind::ridge: return {"squared"};
    case ModelKind::mlp: return {"lambdarank-exp", "lambdarank-linear", "ranknet", "mse"};
  }
  return {};
}

std::string resolve_objective(ModelKind k, std::string_view objective) {
  const auto valid = objectives(k);
  if (objective.empty()) return std::string(valid.front());
  for (auto v : valid)
    if (v == objective) return std::string(v);
  throw Error("unknown objective '" + std::string(objective) + "' for " + std::string(to_string(k)) +
              " (expected " + join(valid) + ")");
}

nlohmann::json TrainOptions::to_json() const {
  nlohmann::json j = {{"kind", to_string(kind)},
                      {"objective", objective},
                      {"seed", seed},
                      {"threads", threads},
                      {"rounds", rounds},
                      {"eta", eta},
                      {"max_depth", max_depth},
                      {"min_child_weight", min_child_weight},
                      {"subsample", subsample},
                      {"colsample", colsample},
                      {"l2", l2},
                      {"max_bin", max_bin},
                      {"ridge_lambda", ridge_lambda},
                      {"hidden", hidden},
                      {"epochs", epochs},
                      {"learning_rate", learning_rate},
                      {"pair_cap", pair_cap},
                      {"needle_top", needle_top}};
  // Options added for tuning: only when not at their defaults (a default model keeps its bytes).
  const TrainOptions d;
  auto extra = [&](const char* key, const auto& value, const auto& fallback) {
    if (value != fallback) j[key] = value;
  };
  extra("features", features, d.features);
  extra("l1", l1, d.l1);
  extra("gamma", gamma, d.gamma);
  extra("max_cat_to_onehot", max_cat_to_onehot, d.max_cat_to_onehot);
  extra("max_cat_threshold", max_cat_threshold, d.max_cat_threshold);
  extra("early_stopping", early_stopping, d.early_stopping);
  if (early_stopping > 0) {
    j["early_stopping_fraction"] = early_stopping_fraction;
    j["early_stopping_refit"] = early_stopping_refit;
  }
  extra("relevance_bands", relevance_bands, d.relevance_bands);
  extra("num_pairsample", num_pairsample, d.num_pairsample);
  extra("top_weight", top_weight, d.top_weight);
  extra("dropout", dropout, d.dropout);
  extra("weight_decay", weight_decay, d.weight_decay);
  extra("batch_rows", batch_rows, d.batch_rows);
  return j;
}

TrainOptions TrainOptions::from_json(const nlohmann::json& j) {
  TrainOptions o;
  auto get = [&](const char* key, auto& field) {
    if (j.contains(key)) field = j.at(key).get<std::decay_t<decltype(field)>>();
  };
  if (j.contains("kind")) o.kind = parse_model_kind(j.at("kind").get<std::string>());
  get("objective", o.objective);
  get("seed", o.seed);
  get("threads", o.threads);
  get("features", o.features);
  get("rounds", o.rounds);
  get("eta", o.eta);
  get("max_depth", o.max_depth);
  get("min_child_weight", o.min_child_weight);
  get("subsample", o.subsample);
  get("colsample", o.colsample);
  get("l2", o.l2);
  get("l1", o.l1);
  get("gamma", o.gamma);
  get("max_bin", o.max_bin);
  get("max_cat_to_onehot", o.max_cat_to_onehot);
  get("max_cat_threshold", o.max_cat_threshold);
  get("early_stopping", o.early_stopping);
  get("early_stopping_fraction", o.early_stopping_fraction);
  get("early_stopping_refit", o.early_stopping_refit);
  get("relevance_bands", o.relevance_bands);
  get("num_pairsample", o.num_pairsample);
  get("top_weight", o.top_weight);
  get("ridge_lambda", o.ridge_lambda);
  get("hidden", o.hidden);
  get("epochs", o.epochs);
  get("learning_rate", o.learning_rate);
  get("dropout", o.dropout);
  get("weight_decay", o.weight_decay);
  get("batch_rows", o.batch_rows);
  get("pair_cap", o.pair_cap);
  get("needle_top", o.needle_top);
  return o;
}

std::string Model::serialize() const {
  nlohmann::ordered_json j;
  j["format"] = kModelFormat;
  j["kind"] = to_string(info_.kind);
  j["objective"] = info_.objective;
  j["schema"] = {{"version", info_.schema_version}, {"hash", hex64(info_.schema_hash)}};
  j["hw_preset"] = info_.hw_preset;
  j["options"] = info_.options.to_json();
  j["provenance"] = info_.provenance;
  j["parameters"] = parameters();
  if (!info_.evidence.empty()) j["evidence"] = info_.evidence.to_json();
  return j.dump(1) + "\n";
}

void Model::save(const std::string& path) const {
  const std::string text = serialize();
  // A new sibling temp file renamed into place: a reader never sees a half-written model, and
  // nothing is written through a symlink (cks/files.hpp).
  write_file_atomic(path, text);
}

std::unique_ptr<Model> Model::load(const std::string& path) {
  // A model file is a few tens of MiB; anything above 1 GiB, or not a regular file (/dev/zero, a
  // FIFO), is refused before reading.
  check_input_file(path, "model file", kMaxInputFileBytes);
  return models_detail::load_model_file(path);
}

namespace {

// Typed access to the model file's fields: a wrong type is a clear error naming the field.
const nlohmann::json& member(const nlohmann::json& obj, const char* key, nlohmann::json::value_t type,
                             const std::string& origin, const char* where = "") {
  const auto it = obj.find(key);
  if (it == obj.end()) throw Error(origin + " is not a valid model file (" + where + "\"" + key + "\" is missing)");
  const bool ok = type == nlohmann::json::value_t::number_float ? it->is_number() : it->type() == type;
  if (!ok) {
    const char* expected = type == nlohmann::json::value_t::object   ? "an object"
                           : type == nlohmann::json::value_t::string ? "a string"
                           : type == nlohmann::json::value_t::array  ? "an array"
                                                                     : "a number";
    throw Error(origin + " is not a valid model file (" + where + "\"" + key + "\" must be " + expected + ", not " +
                it->type_name() + ")");
  }
  return *it;
}

}  // namespace

std::unique_ptr<Model> Model::deserialize(std::string_view text, const std::string& origin) {
  std::unique_ptr<Model> m = models_detail::parse_model_file(text, origin);
  m->info().source_hash = models_detail::model_source_hash(text);
  return m;
}

std::unique_ptr<Model> models_detail::parse_model_file(std::string_view text, const std::string& origin) {
  using vt = nlohmann::json::value_t;
  nlohmann::json j;
  try {
    j = parse_json_limited(text, origin);
  } catch (const Error& e) {
    throw Error(origin + " is not a model file (" + e.what() + ")");
  }
  const auto format = j.is_object() ? j.find("format") : j.end();
  if (!j.is_object() || format == j.end() || !format->is_string() || format->get<std::string>() != kModelFormat)
    throw Error(origin + " is not a model file (expected format '" + std::string(kModelFormat) + "')");
  try {
    const FeatureSchema& schema = FeatureSchema::get();
    const auto& schema_j = member(j, "schema", vt::object, origin);
    const std::string hash = member(schema_j, "hash", vt::string, origin, "schema: ").get<std::string>();
    if (hash != schema.hash_hex())
      throw Error(origin + " was trained on feature schema " + hash + " but this build's schema is " +
                  schema.hash_hex() + "; retrain it with `cks train`");
    const ModelKind kind = parse_model_kind(member(j, "kind", vt::string, origin).get<std::string>());
    const std::string objective = member(j, "objective", vt::string, origin).get<std::string>();
    const std::string version = member(schema_j, "version", vt::string, origin, "schema: ").get<std::string>();
    const std::string hw_preset = member(j, "hw_preset", vt::string, origin).get<std::string>();
    const auto& options = member(j, "options", vt::object, origin);
    const auto& provenance = member(j, "provenance", vt::object, origin);
    const auto& params = member(j, "parameters", vt::object, origin);
    std::unique_ptr<Model> m = kind == ModelKind::xgboost ? models_detail::load_xgboost(params)
                               : kind == ModelKind::ridge ? models_detail::load_ridge(params)
                                                          : models_detail::load_mlp(params);
    ModelInfo& info = m->info();
    info.kind = kind;
    info.objective = resolve_objective(kind, objective);
    info.schema_hash = schema.hash();
    info.schema_version = version;
    info.hw_preset = hw_preset;
    info.options = TrainOptions::from_json(options);
    info.provenance = provenance;
    if (const auto ev = j.find("evidence"); ev != j.end()) info.evidence = Evidence::from_json(*ev);
    return m;
  } catch (const Error& e) {
    if (std::string_view(e.what()).starts_with(origin)) throw;
    throw Error(origin + " is not a valid model file (" + e.what() + ")");
  } catch (const nlohmann::json::exception& e) {
    throw Error(origin + " is not a valid model file (" + e.what() + ")");
  } catch (const std::bad_alloc&) {
    throw;
  } catch (const std::exception& e) {  // std::out_of_range, std::length_error, ... from malformed parameters
    throw Error(origin + " is not a valid model file (" + e.what() + ")");
  }
}

std::unique_ptr<Model> train_model(const Dataset& data, const TrainOptions& options, const Progress& progress) {
  if (data.groups.empty() || data.rows() == 0) throw Error("no training groups in the data");
  TrainOptions o = options;
  o.objective = resolve_objective(o.kind, o.objective);
  if (o.threads < 0) throw Error("--threads must be >= 0");
  o.features = canonical_feature_set(o.features);
  std::unique_ptr<Model> m;
  switch (o.kind) {
    case ModelKind::xgboost: m = models_detail::train_xgboost(data, o, progress); break;
    case ModelKind::ridge: m = models_detail::train_ridge(data, o, progress); break;
    case ModelKind::mlp: m = models_detail::train_mlp(data, o, progress); break;
  }
  const FeatureSchema& schema = FeatureSchema::get();
  ModelInfo& info = m->info();
  // What the trainer reported (e.g. early stopping's best round) joins the provenance.
  const nlohmann::json reported = info.provenance.is_object() ? info.provenance : nlohmann::json::object();
  info.kind = o.kind;
  info.objective = o.objective;
  info.schema_hash = schema.hash();
  info.schema_version = std::string(schema.version());
  info.hw_preset = data.hw_preset;
  info.options = o;
  // Training-data summary (the caller adds where the data came from). data_hash identifies the
  // groups and their measured candidates: fnv1a64 over "key:rows:sum of TFLOP/s" of every group.
  std::string digest;
  for (const auto& g : data.groups) {
    double sum = 0;
    for (size_t r = g.begin; r < g.end; ++r) sum += data.tflops[r];
    digest += g.key + ":" + std::to_string(g.size()) + ":" + format_double(sum) + ";";
  }
  nlohmann::json by_layout = nlohmann::json::object();  // every layout, 0 for the ones not trained on
  for (Layout l : kLayouts) by_layout[std::string(to_string(l))] = 0;
  for (const auto& g : data.groups) {
    auto& n = by_layout[std::string(to_string(g.problem.layout))];
    n = n.get<size_t>() + 1;
  }
  info.provenance = {{"groups", data.groups.size()}, {"groups_by_layout", by_layout}, {"rows", data.rows()},
                     {"data_hash", hex64(fnv1a64(digest))}, {"cks_version", CKS_VERSION}};
  for (const auto& [key, value] : reported.items()) info.provenance[key] = value;
  info.evidence = build_evidence(data);
  return m;
}

std::unique_ptr<Model> average_models(const std::vector<const Model*>& members) {
  if (members.empty()) throw Error("an ensemble needs at least one model");
  const ModelInfo& first = members.front()->info();
  nlohmann::json list = nlohmann::json::array();
  for (size_t i = 0; i < members.size(); ++i) {
    const ModelInfo& m = members[i]->info();
    const std::string which = "model " + std::to_string(i + 1);
    if (m.kind != ModelKind::xgboost) throw Error("an ensemble averages XGBoost models; " + which + " is " + std::string(to_string(m.kind)));
    if (m.objective != first.objective)
      throw Error("an ensemble's models share one objective; " + which + " has " + m.objective + ", model 1 " + first.objective);
    if (m.schema_hash != first.schema_hash) throw Error("an ensemble's models share one feature schema; " + which + " differs");
    if (m.hw_preset != first.hw_preset)
      throw Error("an ensemble's models share one hardware preset; " + which + " has " + m.hw_preset + ", model 1 " + first.hw_preset);
    if (m.options.features != first.options.features) throw Error("an ensemble's models share one feature set; " + which + " differs");
    nlohmann::json entry = {{"seed", m.options.seed}, {"source_hash", hex64(m.source_hash)}};
    for (const char* key : {"data_hash", "groups", "rows", "source"})
      if (m.provenance.is_object() && m.provenance.contains(key)) entry[key] = m.provenance[key];
    entry["evidence_same_as_model_1"] = m.evidence.to_json() == first.evidence.to_json();
    list.push_back(std::move(entry));
  }
  std::unique_ptr<Model> out = models_detail::average_xgboost(members);
  ModelInfo& info = out->info() = first;  // kind, objective, schema, preset, options, evidence
  info.source_hash = 0;                    // made in this process, not read from a file
  if (!info.provenance.is_object()) info.provenance = nlohmann::json::object();
  if (members.size() > 1)
    info.provenance["ensemble"] = {{"method", "mean of the members' scores"}, {"members", std::move(list)}};
  return out;
}

namespace models_detail {
int resolve_threads(int threads) {
  return threads > 0 ? threads : std::max(1, static_cast<int>(std::thread::hardware_concurrency()));
}
}  // namespace models_detail

}  // namespace cks
