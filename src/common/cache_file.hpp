// Derived-data cache files (issue 17): what start-up would otherwise recompute from an input file
// (the parsed model, a layout's selector set-up) kept as one binary file per entry in the user's
// cache folder, so that a second process reads it back in milliseconds.
//
// An entry is "<cache_dir()>/<name>": a header (magic "CKSCACHE", the entry format, the entry's
// kind, its key, the payload's size and hash) and the payload. read_cache_entry() returns the
// payload only when every header field matches and the payload hashes to the recorded value; any
// other file (missing, stale key, older format, truncated, corrupt) is a miss and the caller
// rebuilds the entry and writes it again. Entries are written atomically (a temp file beside the
// target, renamed into place: cks/files.hpp), so a reader never sees half an entry; writing is
// best effort (a read-only or full cache folder only costs the speed-up).
//
// The payload is native-endian binary written with BinaryWriter and read back with BinaryReader,
// whose reads are bounds-checked (CacheCorrupt): a payload that does not parse is a miss too.
#pragma once
#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "cks/common.hpp"

namespace cks {

// The cache folder: $CKS_CACHE_DIR when set ("off", "0" or "none": no cache, ""), else
// $XDG_CACHE_HOME/cks (when absolute), else $HOME/.cache/cks; "" when neither is set.
std::string cache_dir();

// A fast non-cryptographic 64-bit hash of bytes (xxHash64's round structure, several GB/s):
// cache keys and payload checksums.
uint64_t hash64(std::string_view bytes, uint64_t seed = 0);

// A payload that does not read back (truncated, or a count beyond the data).
struct CacheCorrupt : Error {
  using Error::Error;
};

class BinaryWriter {
 public:
  void bytes(const void* p, size_t n) { buf_.append(static_cast<const char*>(p), n); }
  template <class T>
  void pod(const T& v) {
    static_assert(std::is_trivially_copyable_v<T>);
    bytes(&v, sizeof v);
  }
  void u64(uint64_t v) { pod(v); }
  void str(std::string_view s) {
    u64(s.size());
    bytes(s.data(), s.size());
  }
  // Element count, then the elements.
  template <class T>
  void vec(const std::vector<T>& v) {
    static_assert(std::is_trivially_copyable_v<T>);
    u64(v.size());
    bytes(v.data(), v.size() * sizeof(T));
  }
  const std::string& data() const { return buf_; }
  std::string take() { return std::move(buf_); }

 private:
  std::string buf_;
};

class BinaryReader {
 public:
  explicit BinaryReader(std::string_view data) : data_(data) {}
  void bytes(void* p, size_t n) {
    if (n > data_.size() - pos_) throw CacheCorrupt("cache entry: truncated payload");
    if (n == 0) return;  // an empty vector's data() may be null: memcpy's arguments must not be (UBSan)
    std::memcpy(p, data_.data() + pos_, n);
    pos_ += n;
  }
  template <class T>
  T pod() {
    static_assert(std::is_trivially_copyable_v<T>);
    T v;
    bytes(&v, sizeof v);
    return v;
  }
  uint64_t u64() { return pod<uint64_t>(); }
  size_t position() const { return pos_; }
  void skip(size_t n) {
    if (n > data_.size() - pos_) throw CacheCorrupt("cache entry: truncated payload");
    pos_ += n;
  }
  // A count of elements of `size` bytes that the rest of the payload can hold.
  size_t count(size_t size) {
    const uint64_t n = u64();
    if (n > (data_.size() - pos_) / std::max<size_t>(size, 1)) throw CacheCorrupt("cache entry: count beyond the payload");
    return static_cast<size_t>(n);
  }
  std::string str() {
    std::string s(count(1), '\0');
    bytes(s.data(), s.size());
    return s;
  }
  template <class T>
  std::vector<T> vec() {
    static_assert(std::is_trivially_copyable_v<T>);
    std::vector<T> v(count(sizeof(T)));
    bytes(v.data(), v.size() * sizeof(T));
    return v;
  }
  bool done() const { return pos_ == data_.size(); }

 private:
  std::string_view data_;
  size_t pos_ = 0;
};

// A regular file mapped read-only (private), unmapped when destroyed; open() is nullopt when the
// file cannot be opened or mapped. (A file truncated by someone else while mapped would fault on
// access; the files mapped here are only ever replaced by rename, never rewritten in place.)
class MappedFile {
 public:
  static std::optional<MappedFile> open(const std::string& path);
  MappedFile(MappedFile&& o) noexcept : data_(o.data_), size_(o.size_) { o.data_ = nullptr, o.size_ = 0; }
  MappedFile& operator=(MappedFile&& o) noexcept;
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;
  ~MappedFile();
  std::string_view bytes() const { return {static_cast<const char*>(data_), size_}; }

 private:
  MappedFile() = default;
  void* data_ = nullptr;
  size_t size_ = 0;
};

// A cache entry read back: its mapping and the payload in it (at payload_offset in the file).
struct CacheEntry {
  MappedFile file;
  std::string_view payload;
  size_t payload_offset = 0;
};
// The entry at `path` when it is a complete entry of `kind` (at most 16 bytes) with `key`;
// nullopt otherwise (missing, stale, corrupt). Never throws except std::bad_alloc.
std::optional<CacheEntry> read_cache_entry(const std::string& path, std::string_view kind, uint64_t key);
// Writes the entry atomically, creating the folder; then keeps the `keep` most recently written
// entries whose names start with `evict_prefix` (none removed when the prefix is empty). Returns
// false, without throwing, when it cannot be written.
bool write_cache_entry(const std::string& path, std::string_view kind, uint64_t key, std::string_view payload,
                       std::string_view evict_prefix = {}, size_t keep = 0);

}  // namespace cks
