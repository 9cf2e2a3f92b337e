// The message of an exception for a user: LibTorch's c10::Error appends a C++ stack trace of
// twenty-odd frames to what(), which says nothing to someone running rlx; this drops it.
#pragma once

#include <exception>
#include <string>

#include <c10/util/Exception.h>

namespace rlx {

// what() of `error`, without the stack trace when it is a c10::Error.
inline std::string error_text(const std::exception& error) {
  if (const auto* torch_error = dynamic_cast<const c10::Error*>(&error)) return torch_error->what_without_backtrace();
  return error.what();
}

}  // namespace rlx
