// cks — the cutlass-kernel-selector command line. Subcommands mirror src/ modules.
#include <cstdio>
#include <exception>
#include <iostream>

#include "cks/common.hpp"
#include "cli/commands.hpp"

int main(int argc, char** argv) {
  CLI::App app{"cks: hardware-aware CUTLASS kernel selection for BF16 GEMM on Hopper"};
  app.require_subcommand(1);
  app.set_version_flag("--version", std::string("cks ") + CKS_VERSION);
  cks::cli::register_hw(app);
  cks::cli::register_catalogue(app);
  cks::cli::register_features(app);
  cks::cli::register_shapes(app);
  cks::cli::register_sample(app);
  cks::cli::register_data(app);
  cks::cli::register_codegen(app);
  cks::cli::register_collect(app);
  cks::cli::register_bench(app);
  cks::cli::register_pool(app);
  cks::cli::register_models(app);
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    std::fprintf(stderr, "cks: error: %s\n", e.what());
    return 2;
  } catch (const cks::Error& e) {
    std::fprintf(stderr, "cks: error: %s\n", e.what());
    return 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "cks: internal error: %s\n", e.what());
    return 3;
  }
  return 0;
}
