// Each module's subcommands, registered on the root app by src/cli/main.cpp.
#pragma once
#include <CLI/CLI.hpp>

namespace cks::cli {
void register_hw(CLI::App& app);         // cmd_hw.cpp
void register_catalogue(CLI::App& app);  // cmd_catalogue.cpp
void register_features(CLI::App& app);   // cmd_features.cpp
void register_shapes(CLI::App& app);     // cmd_shapes.cpp
void register_sample(CLI::App& app);     // cmd_sample.cpp
void register_data(CLI::App& app);       // cmd_data.cpp   (registry: merge/stats/export)
void register_codegen(CLI::App& app);    // cmd_build.cpp  (codegen + compile pool)
void register_bundle(CLI::App& app);     // cmd_bundle.cpp (kernel bundles for the GEMM runtime)
void register_collect(CLI::App& app);    // cmd_collect.cpp (monitor)
void register_bench(CLI::App& app);      // cmd_bench.cpp
void register_pool(CLI::App& app);       // cmd_pool.cpp   (compiled-kernel pools)
void register_models(CLI::App& app);     // cmd_models.cpp (train, eval, select)
void register_analyze(CLI::App& app);    // cmd_analyze.cpp (feature and sampling studies)
}  // namespace cks::cli
