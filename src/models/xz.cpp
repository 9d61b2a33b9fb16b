#include "models/xz.hpp"

#include <lzma.h>

#include "cks/common.hpp"

namespace cks::models_detail {

std::string xz_compress(std::string_view in) {
  std::string out(lzma_stream_buffer_bound(in.size()), '\0');
  size_t pos = 0;
  const lzma_ret r = lzma_easy_buffer_encode(9, LZMA_CHECK_CRC64, nullptr, reinterpret_cast<const uint8_t*>(in.data()),
                                             in.size(), reinterpret_cast<uint8_t*>(out.data()), &pos, out.size());
  if (r != LZMA_OK) throw Error("xz: cannot compress (liblzma error " + std::to_string(static_cast<int>(r)) + ")");
  out.resize(pos);
  return out;
}

std::string xz_decompress(std::string_view in, size_t max_bytes) {
  lzma_stream s = LZMA_STREAM_INIT;
  if (lzma_stream_decoder(&s, UINT64_MAX, 0) != LZMA_OK) throw Error("xz: cannot start the decoder");
  std::string out;
  s.next_in = reinterpret_cast<const uint8_t*>(in.data());
  s.avail_in = in.size();
  lzma_ret r = LZMA_OK;
  while (r == LZMA_OK) {
    if (out.size() >= max_bytes) {
      lzma_end(&s);
      throw Error("xz: the stream decodes to more than " + std::to_string(max_bytes) + " bytes");
    }
    const size_t old = out.size();
    out.resize(std::min(max_bytes, std::max<size_t>(old * 2, 1 << 20)));
    s.next_out = reinterpret_cast<uint8_t*>(out.data() + old);
    s.avail_out = out.size() - old;
    r = lzma_code(&s, LZMA_FINISH);
    out.resize(out.size() - s.avail_out);
  }
  lzma_end(&s);
  if (r != LZMA_STREAM_END) throw Error("xz: corrupt stream (liblzma error " + std::to_string(static_cast<int>(r)) + ")");
  return out;
}

}  // namespace cks::models_detail
