// Derived-data cache files (cache_file.hpp).
#include "common/cache_file.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <bit>
#include <cerrno>
#include <cstdlib>
#include <filesystem>

#include "cks/files.hpp"

namespace cks {

namespace {

namespace fs = std::filesystem;

constexpr char kMagic[8] = {'C', 'K', 'S', 'C', 'A', 'C', 'H', 'E'};
// Bumped when the header changes (a payload's own layout is versioned by its key).
constexpr uint32_t kHeaderFormat = 1;
constexpr uint32_t kEndianMark = 0x01020304;

struct Header {
  char magic[8];
  uint32_t format;
  uint32_t endian;
  char kind[16];
  uint64_t key;
  uint64_t payload_size;
  uint64_t payload_hash;
};
static_assert(sizeof(Header) == 56);

Header make_header(std::string_view kind, uint64_t key, std::string_view payload) {
  Header h{};
  std::memcpy(h.magic, kMagic, sizeof kMagic);
  h.format = kHeaderFormat;
  h.endian = kEndianMark;
  std::memcpy(h.kind, kind.data(), std::min(kind.size(), sizeof h.kind));
  h.key = key;
  h.payload_size = payload.size();
  h.payload_hash = hash64(payload);
  return h;
}

constexpr uint64_t kP1 = 0x9E3779B185EBCA87ull, kP2 = 0xC2B2AE3D27D4EB4Full, kP3 = 0x165667B19E3779F9ull,
                   kP4 = 0x85EBCA77C2B2AE63ull, kP5 = 0x27D4EB2F165667C5ull;

uint64_t load64(const char* p) {
  uint64_t v;
  std::memcpy(&v, p, 8);
  return v;
}
uint64_t round64(uint64_t acc, uint64_t v) { return std::rotl(acc + v * kP2, 31) * kP1; }
uint64_t merge64(uint64_t acc, uint64_t v) { return (acc ^ round64(0, v)) * kP1 + kP4; }

}  // namespace

std::string cache_dir() {
  const char* set = std::getenv("CKS_CACHE_DIR");
  if (set && *set) {
    const std::string_view v = set;
    if (v == "off" || v == "0" || v == "none") return "";
    return set;
  }
  if (const char* xdg = std::getenv("XDG_CACHE_HOME"); xdg && *xdg && fs::path(xdg).is_absolute())
    return (fs::path(xdg) / "cks").string();
  if (const char* home = std::getenv("HOME"); home && *home) return (fs::path(home) / ".cache" / "cks").string();
  return "";
}

uint64_t hash64(std::string_view bytes, uint64_t seed) {
  const char* p = bytes.data();
  const char* const end = p + bytes.size();
  uint64_t h;
  if (bytes.size() >= 32) {
    uint64_t v1 = seed + kP1 + kP2, v2 = seed + kP2, v3 = seed, v4 = seed - kP1;
    for (; end - p >= 32; p += 32) {
      v1 = round64(v1, load64(p));
      v2 = round64(v2, load64(p + 8));
      v3 = round64(v3, load64(p + 16));
      v4 = round64(v4, load64(p + 24));
    }
    h = std::rotl(v1, 1) + std::rotl(v2, 7) + std::rotl(v3, 12) + std::rotl(v4, 18);
    h = merge64(merge64(merge64(merge64(h, v1), v2), v3), v4);
  } else {
    h = seed + kP5;
  }
  h += bytes.size();
  for (; end - p >= 8; p += 8) h = std::rotl(h ^ round64(0, load64(p)), 27) * kP1 + kP4;
  for (; p < end; ++p) h = std::rotl(h ^ (static_cast<uint8_t>(*p) * kP5), 11) * kP1;
  h ^= h >> 33;
  h *= kP2;
  h ^= h >> 29;
  h *= kP3;
  return h ^ (h >> 32);
}

std::optional<MappedFile> MappedFile::open(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return std::nullopt;
  struct stat st {};
  MappedFile f;
  if (::fstat(fd, &st) == 0 && S_ISREG(st.st_mode)) {
    f.size_ = static_cast<size_t>(st.st_size);
    if (f.size_ > 0) {
      void* p = ::mmap(nullptr, f.size_, PROT_READ, MAP_PRIVATE, fd, 0);
      if (p == MAP_FAILED) {
        ::close(fd);
        return std::nullopt;
      }
      f.data_ = p;
    }
    ::close(fd);
    return f;
  }
  ::close(fd);
  return std::nullopt;
}

MappedFile& MappedFile::operator=(MappedFile&& o) noexcept {
  if (this != &o) {
    if (data_) ::munmap(data_, size_);
    data_ = o.data_;
    size_ = o.size_;
    o.data_ = nullptr;
    o.size_ = 0;
  }
  return *this;
}

MappedFile::~MappedFile() {
  if (data_) ::munmap(data_, size_);
}

std::optional<CacheEntry> read_cache_entry(const std::string& path, std::string_view kind, uint64_t key) {
  std::optional<MappedFile> f = MappedFile::open(path);
  if (!f || f->bytes().size() < sizeof(Header)) return std::nullopt;
  Header h{};
  std::memcpy(&h, f->bytes().data(), sizeof h);
  const Header want = make_header(kind, key, {});
  const std::string_view payload = f->bytes().substr(sizeof(Header));
  if (std::memcmp(h.magic, want.magic, sizeof h.magic) != 0 || h.format != want.format || h.endian != want.endian ||
      std::memcmp(h.kind, want.kind, sizeof h.kind) != 0 || h.key != key || h.payload_size != payload.size() ||
      hash64(payload) != h.payload_hash)
    return std::nullopt;
  // Most recently used first when evicting: a hit counts as a use.
  ::utimensat(AT_FDCWD, path.c_str(), nullptr, 0);
  return CacheEntry{std::move(*f), payload, sizeof(Header)};
}

bool write_cache_entry(const std::string& path, std::string_view kind, uint64_t key, std::string_view payload,
                       std::string_view evict_prefix, size_t keep) {
  try {
    const fs::path dir = fs::path(path).parent_path();
    if (!dir.empty()) fs::create_directories(dir);
    const Header h = make_header(kind, key, payload);
    AtomicOutput out(path);
    out.write(std::string_view(reinterpret_cast<const char*>(&h), sizeof h));
    out.write(payload);
    out.commit();
    if (!evict_prefix.empty()) {
      std::vector<std::pair<fs::file_time_type, fs::path>> entries;
      for (const auto& e : fs::directory_iterator(dir.empty() ? fs::path(".") : dir)) {
        const std::string name = e.path().filename().string();
        if (name.starts_with(evict_prefix) && e.is_regular_file()) entries.emplace_back(e.last_write_time(), e.path());
      }
      std::sort(entries.begin(), entries.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
      std::error_code ec;
      for (size_t i = 0; i < entries.size(); ++i)
        if (i >= keep && entries[i].second != fs::path(path)) fs::remove(entries[i].second, ec);
    }
    return true;
  } catch (const std::bad_alloc&) {
    throw;
  } catch (const std::exception&) {
    return false;
  }
}

}  // namespace cks
