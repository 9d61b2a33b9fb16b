// Cross-check of the catalogue against CUTLASS's own kernel generator (cutlass_library, run
// without a GPU by tools/cutlass_listing.py): every BF16 SM90 dense kernel CUTLASS emits must be
// in the catalogue, or be excluded by a documented rule (docs/catalogue.md, "Cross-check").
#pragma once
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "cks/catalogue.hpp"
#include "cks/hw.hpp"

namespace cks::catalogue {

// One kernel of the listing, mapped onto our descriptor: stages 0 (CUTLASS's generator always uses
// the auto carve-out), ScheduleAuto resolved as the CollectiveBuilder does (ping-pong for T_M = 64,
// else cooperative; no-smem epilogue), C = bf16 folded onto our C = void kernel.
struct CutlassKernel {
  std::string name;
  KernelDesc desc;
  std::string unmapped;  // why the entry has no descriptor (a schedule we do not model), else empty
};
struct CutlassListing {
  std::string generator;  // provenance line written by the script (CUTLASS version, level, CUDA version)
  std::vector<CutlassKernel> kernels;
};

// Where the cached listing lives for a build: <bin_dir>/../cutlass_listing_sm90_bf16.json.
std::string listing_path_for_bin_dir(std::string_view bin_dir);
// Runs tools/cutlass_listing.py (python3 on PATH; about 80 s) to write the listing to `path`.
void generate_cutlass_listing(const std::string& path);
// Reads a listing; throws Error on a missing file or a kernel whose fields cannot be mapped.
CutlassListing read_cutlass_listing(const std::string& path);
// The listing at `path`, generated first when the file does not exist.
CutlassListing load_or_generate_cutlass_listing(const std::string& path);

// Rules that may exclude a CUTLASS-emitted kernel, each justified in docs/catalogue.md.
const std::vector<std::string_view>& documented_exclusions();

struct CutlassCheck {
  struct Counts {
    long emitted = 0;      // listing entries
    long matched = 0;      // entries whose descriptor is in the catalogue
    long excluded = 0;     // entries excluded by a documented rule
    long unexplained = 0;  // entries missing without a documented rule (must be 0)
    long distinct = 0;     // distinct descriptors the entries map to
    long ours_not_emitted = 0;  // catalogue kernels no entry maps to
    std::map<std::string, long> excluded_by_rule;
  };
  std::map<Layout, Counts> layouts;
  Counts total;
  std::vector<std::string> unexplained;  // "name: why" for each unexplained entry
};
CutlassCheck check_against_cutlass(const CutlassListing& listing, const HardwareDesc& hw);

}  // namespace cks::catalogue
