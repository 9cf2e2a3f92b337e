// The message of an exception for a user. LibTorch's c10::Error appends a C++ stack trace of
// twenty-odd frames to what() ("\nException raised from ... (most recent call first):\nframe #0
// ..."), which says nothing to someone running rlx; this drops it. Torch-free, so the trainer
// and the `rlx` executable can report LibTorch's errors without linking it.
#pragma once

#include <exception>
#include <string>

namespace rlx {

// what() of `error`, without a c10::Error's stack trace.
inline std::string error_text(const std::exception& error) {
  std::string text = error.what();
  const size_t trace = text.find("\nException raised from ");
  if (trace != std::string::npos) text.erase(trace);
  return text;
}

}  // namespace rlx
