// The concrete rankers behind cks::Model (one file each) and what model.cpp needs of them.
#pragma once
#include <memory>

#include <nlohmann/json.hpp>

#include "cks/models.hpp"

namespace cks::models_detail {

std::unique_ptr<Model> train_xgboost(const Dataset& data, const TrainOptions& options, const Progress& progress);
std::unique_ptr<Model> load_xgboost(const nlohmann::json& parameters);
// XGBoost's own prediction (libxgboost's in-place dense predict, one thread) for an XGBoost
// model, the reference the native inference is tested against. Throws Error without libxgboost
// or for another kind of model.
void xgboost_library_predict(const Model& model, const FeatureMatrix& x, std::span<float> out);
bool xgboost_library_available();

std::unique_ptr<Model> train_ridge(const Dataset& data, const TrainOptions& options, const Progress& progress);
std::unique_ptr<Model> load_ridge(const nlohmann::json& parameters);

std::unique_ptr<Model> train_mlp(const Dataset& data, const TrainOptions& options, const Progress& progress);
std::unique_ptr<Model> load_mlp(const nlohmann::json& parameters);

int resolve_threads(int threads);  // 0 -> every core

}  // namespace cks::models_detail
