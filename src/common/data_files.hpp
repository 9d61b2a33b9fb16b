// Where the library and `cks` find the files they read at run time (docs/library.md, "Data
// files"): the hardware presets, the LLM shape files and the shipped default model.
//
// A data file `rel` (e.g. "hw/presets.json", "models/default.json") is looked up, first hit wins:
//   1. $CKS_DATA_DIR/<rel>                      (an explicit data folder);
//   2. <dir of this module>/../share/cks/<rel>  (an installed copy: the folder beside lib/ or bin/
//                                                that `cmake --install` fills; "this module" is
//                                                libcks.so for the library, the executable for cks);
//   3. the source tree the build was configured from (CKS_SOURCE_DIR, compiled in): data/<rel>,
//      or <rel> itself for models/ (the build tree's case);
//   4. a relocated build tree: <executable>/../../data/<rel> (build/bin/cks carried to the GPU host
//      with the repository around it).
// The default model is $CKS_MODEL before all of these (Selector::default_model_path).
#pragma once
#include <string>
#include <vector>

namespace cks {

// The candidate paths of `rel`, in lookup order (existing or not; for messages and tests).
std::vector<std::string> data_file_candidates(const std::string& rel);
// The first existing candidate of `rel`; "" when none exists.
std::string find_data_file(const std::string& rel);
// <dir of the module holding this code>/../share/cks, normalised ("" when the module's path is
// unknown). Exists or not.
std::string installed_data_dir();

}  // namespace cks
