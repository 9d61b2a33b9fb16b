// xz (LZMA2) of an in-memory buffer, for the compressed blobs of model files.
#pragma once
#include <string>
#include <string_view>

namespace cks::models_detail {

// The .xz stream of `in` (preset 9, CRC64).
std::string xz_compress(std::string_view in);
// The bytes of the .xz stream `in`; throws Error on a corrupt stream or one that decodes to more
// than max_bytes.
std::string xz_decompress(std::string_view in, size_t max_bytes);

}  // namespace cks::models_detail
