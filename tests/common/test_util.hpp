// Small helpers shared by tests: a whole file as a string, the files of a folder by name prefix,
// and an environment variable set for one scope (restored, or unset, when the scope ends).
#pragma once
#include <stdlib.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "cks/selector.hpp"

namespace cks::test {

// The selector's options with the problem's own orientation only: the options before session 31,
// for tests of the ranking's mechanics (prefilter, cascade, caches, ties), which the transposed
// problem's interleaved picks (Orientations::both, the default) would blur.
inline SelectorOptions own_orientation(SelectorOptions o = {}) {
  o.orientations = Orientations::own;
  return o;
}

inline std::string slurp(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// The files of `dir` whose names start with `prefix`, sorted (none when `dir` is missing).
inline std::vector<std::string> files_with_prefix(const std::string& dir, const std::string& prefix) {
  std::vector<std::string> out;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(dir, ec))
    if (e.path().filename().string().starts_with(prefix)) out.push_back(e.path().string());
  std::sort(out.begin(), out.end());
  return out;
}

class ScopedEnv {
 public:
  ScopedEnv(const char* name, const std::string& value) : name_(name) {
    if (const char* old = getenv(name)) old_ = old;
    setenv(name, value.c_str(), 1);
  }
  ~ScopedEnv() {
    if (old_) setenv(name_, old_->c_str(), 1);
    else unsetenv(name_);
  }
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;

 private:
  const char* name_;
  std::optional<std::string> old_;
};

}  // namespace cks::test
