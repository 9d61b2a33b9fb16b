// STUB: replaced by the module's owner.
#include "cli/commands.hpp"
namespace cks::cli {
void register_data(CLI::App& app) { (void)app; }
}  // namespace cks::cli
