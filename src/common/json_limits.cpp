#include "common/json_limits.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "cks/common.hpp"

namespace cks {

namespace {

using nlohmann::json;

std::string mib(size_t bytes) { return std::to_string(bytes >> 20) + " MiB"; }

// nlohmann's DOM builder behind a depth counter: start_object/start_array beyond max_depth stop
// the parse before the recursion of the UBJSON reader (or of any later copy or dump) can
// overflow the stack.
class DepthLimitedSax {
 public:
  DepthLimitedSax(json& root, size_t max_depth) : dom_(root, /*allow_exceptions=*/true), max_depth_(max_depth) {}
  bool null() { return dom_.null(); }
  bool boolean(bool v) { return dom_.boolean(v); }
  bool number_integer(json::number_integer_t v) { return dom_.number_integer(v); }
  bool number_unsigned(json::number_unsigned_t v) { return dom_.number_unsigned(v); }
  bool number_float(json::number_float_t v, const json::string_t& s) { return dom_.number_float(v, s); }
  bool string(json::string_t& v) { return dom_.string(v); }
  bool binary(json::binary_t& v) { return dom_.binary(v); }
  bool start_object(std::size_t n) { return enter() && dom_.start_object(n); }
  bool key(json::string_t& v) { return dom_.key(v); }
  bool end_object() { return --depth_, dom_.end_object(); }
  bool start_array(std::size_t n) { return enter() && dom_.start_array(n); }
  bool end_array() { return --depth_, dom_.end_array(); }
  template <class Exception>
  bool parse_error(std::size_t pos, const std::string& token, const Exception& ex) {
    return dom_.parse_error(pos, token, ex);  // throws ex
  }
  bool too_deep() const { return too_deep_; }

 private:
  bool enter() {
    if (++depth_ > max_depth_) too_deep_ = true;
    return !too_deep_;
  }
  nlohmann::detail::json_sax_dom_parser<json> dom_;
  size_t max_depth_;
  size_t depth_ = 0;
  bool too_deep_ = false;
};

template <class Input>
json parse_limited(Input&& input, nlohmann::detail::input_format_t format, std::string_view origin, size_t max_depth) {
  json root;
  DepthLimitedSax sax(root, max_depth);
  bool ok = false;
  try {
    ok = json::sax_parse(std::forward<Input>(input), &sax, format, /*strict=*/true);
  } catch (const json::exception& e) {
    throw Error(std::string(origin) + ": invalid " +
                (format == nlohmann::detail::input_format_t::json ? "JSON" : "UBJSON") + " (" + e.what() + ")");
  }
  if (sax.too_deep())
    throw Error(std::string(origin) + ": JSON nested deeper than " + std::to_string(max_depth) + " levels");
  if (!ok) throw Error(std::string(origin) + ": invalid JSON");
  return root;
}

}  // namespace

void check_input_file(const std::string& path, std::string_view what, size_t max_bytes) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0)
    throw Error("cannot read " + std::string(what) + " '" + path + "': " + std::strerror(errno));
  if (S_ISDIR(st.st_mode)) throw Error("cannot read " + std::string(what) + " '" + path + "': it is a directory");
  if (!S_ISREG(st.st_mode))
    throw Error("cannot read " + std::string(what) + " '" + path + "': not a regular file (a device, pipe or socket)");
  if (static_cast<unsigned long long>(st.st_size) > max_bytes)
    throw Error(std::string(what) + " '" + path + "' is too large (" + mib(static_cast<size_t>(st.st_size)) +
                ", at most " + mib(max_bytes) + ")");
}

std::string read_file_limited(const std::string& path, std::string_view what, size_t max_bytes) {
  check_input_file(path, what, max_bytes);
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw Error("cannot read " + std::string(what) + " '" + path + "': " + std::strerror(errno));
  // Read straight into the string, sized by fstat (one allocation for a 26 MB model, not a
  // doubling series of copies); grown if the file grows meanwhile.
  struct stat st {};
  std::string out(::fstat(fd, &st) == 0 && S_ISREG(st.st_mode) ? std::min<size_t>(st.st_size, max_bytes) + 1 : 1 << 16,
                  '\0');
  size_t used = 0;
  for (;;) {
    if (used == out.size()) out.resize(out.size() * 2);
    const ssize_t n = ::read(fd, out.data() + used, out.size() - used);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      const int err = errno;
      ::close(fd);
      throw Error("cannot read " + std::string(what) + " '" + path + "': " + std::strerror(err));
    }
    if (n == 0) break;
    used += static_cast<size_t>(n);
    if (used > max_bytes) {  // the file grew after stat()
      ::close(fd);
      throw Error(std::string(what) + " '" + path + "' is too large (more than " + mib(max_bytes) + ")");
    }
  }
  ::close(fd);
  out.resize(used);
  return out;
}

json parse_json_limited(std::string_view text, std::string_view origin, size_t max_depth) {
  return parse_limited(text, nlohmann::detail::input_format_t::json, origin, max_depth);
}

json parse_ubjson_limited(std::string_view bytes, std::string_view origin, size_t max_depth) {
  return parse_limited(bytes, nlohmann::detail::input_format_t::ubjson, origin, max_depth);
}

}  // namespace cks
