// Reading untrusted files and JSON with limits (issue 18): a bounded size, regular files only,
// and a bounded nesting depth, so a hostile input (/dev/zero, a 200,000-level document) is one
// clear cks::Error instead of std::bad_alloc or a stack overflow.
#pragma once
#include <cstddef>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

namespace cks {

inline constexpr size_t kMaxInputFileBytes = size_t{1} << 30;  // 1 GiB
inline constexpr size_t kMaxJsonDepth = 64;

// Throws cks::Error unless `path` is a regular file (after symlinks) of at most max_bytes.
// `what` names the file in the message ("model file", "plan", ...).
void check_input_file(const std::string& path, std::string_view what, size_t max_bytes = kMaxInputFileBytes);
// The whole content of such a file; reads at most max_bytes + 1 bytes whatever the file claims.
std::string read_file_limited(const std::string& path, std::string_view what, size_t max_bytes = kMaxInputFileBytes);

// Parses JSON text (or UBJSON bytes) whose arrays and objects nest at most max_depth levels.
// Errors are cks::Error "<origin>: <what>" (invalid JSON with its position, or too deep).
nlohmann::json parse_json_limited(std::string_view text, std::string_view origin, size_t max_depth = kMaxJsonDepth);
nlohmann::json parse_ubjson_limited(std::string_view bytes, std::string_view origin, size_t max_depth = kMaxJsonDepth);

}  // namespace cks
