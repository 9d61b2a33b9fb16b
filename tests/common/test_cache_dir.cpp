// Every test process keeps the model and selector set-up caches (docs/models.md, "Start-up") in
// the build tree, "<build>/test-cache", never in the user's ~/.cache/cks, unless CKS_CACHE_DIR is
// set already; the cks processes that tests start inherit it.
#include <stdlib.h>

namespace {

const bool kCacheDirSet = [] {
  setenv("CKS_CACHE_DIR", CKS_BUILD_DIR "/test-cache", 0);
  return true;
}();

}  // namespace
