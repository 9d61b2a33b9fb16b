// The concrete rankers behind cks::Model (one file each) and what model.cpp needs of them.
#pragma once
#include <functional>
#include <memory>

#include <nlohmann/json.hpp>

#include "cks/models.hpp"

namespace cks {
class BinaryWriter;
class BinaryReader;
}  // namespace cks

namespace cks::models_detail {

std::unique_ptr<Model> train_xgboost(const Dataset& data, const TrainOptions& options, const Progress& progress);
std::unique_ptr<Model> load_xgboost(const nlohmann::json& parameters);
// XGBoost's own prediction (libxgboost's in-place dense predict, one thread) for an XGBoost
// model, the reference the native inference is tested against. Throws Error without libxgboost
// or for another kind of model.
void xgboost_library_predict(const Model& model, const FeatureMatrix& x, std::span<float> out);
bool xgboost_library_available();
// An XGBoost model as a cache payload (its feature columns, the parsed ensemble, then the
// booster's hash and bytes) and back; write returns false for another kind of model, read throws
// CacheCorrupt. The model read back gets the booster's bytes on first use from blob_source (they
// are needed only to save the model or to predict through libxgboost), given where they are in
// the payload.
struct BlobRef {
  uint64_t hash = 0;
  size_t offset = 0, size = 0;  // in the payload
};
bool write_xgboost_cache(const Model& model, BinaryWriter& w);
std::unique_ptr<Model> read_xgboost_cache(BinaryReader& r, const std::function<std::string(const BlobRef&)>& blob_source);
// An XGBoost model's booster bytes (throws Error for another kind of model).
std::string xgboost_blob(const Model& model);

// One XGBoost model scoring the mean of the members' scores: the members' trees in member order,
// leaves scaled by 1/K, base score the members' mean (needs libxgboost; throws Error for another
// kind of model or members of different feature sets).
std::unique_ptr<Model> average_xgboost(const std::vector<const Model*>& members);

std::unique_ptr<Model> train_ridge(const Dataset& data, const TrainOptions& options, const Progress& progress);
std::unique_ptr<Model> load_ridge(const nlohmann::json& parameters);

std::unique_ptr<Model> train_mlp(const Dataset& data, const TrainOptions& options, const Progress& progress);
std::unique_ptr<Model> load_mlp(const nlohmann::json& parameters);

int resolve_threads(int threads);  // 0 -> every core

// A model file's text parsed into a model (Model::deserialize without source_hash).
std::unique_ptr<Model> parse_model_file(std::string_view text, const std::string& origin);
// Model::load through the model cache (model_cache.cpp): the model of a file whose bytes were
// parsed before is read back from cache_dir(), else parsed and written there.
std::unique_ptr<Model> load_model_file(const std::string& path);
// The hash of a model file's bytes (ModelInfo::source_hash).
uint64_t model_source_hash(std::string_view text);

}  // namespace cks::models_detail
