// The C API boundary pattern of libcks.so and libcks_runtime.so (the pattern of XGBoost's c_api):
// a function body between API_BEGIN and API_END catches every exception and turns it into -1 plus
// a thread-local message, set through the `set_error(const char*)` visible where the macros are
// used (each library keeps its own message: cks_last_error, cks_runtime_last_error).
#pragma once
#include <exception>

#define API_BEGIN try {
#define API_END                                      \
  }                                                  \
  catch (const std::exception& e) {                  \
    set_error(e.what());                             \
    return -1;                                       \
  }                                                  \
  catch (...) {                                      \
    set_error("unknown exception in the cks C API"); \
    return -1;                                       \
  }                                                  \
  return 0;
