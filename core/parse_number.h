// Whole-text integer parsing for names and values users and peers write (config entries, store
// keys, HOST:PORT): the whole text must be the number, with no sign games left to std::stoll.
#pragma once

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>

namespace rlx {

// The integer `text` spells, all of it; nullopt for anything else (empty, trailing characters,
// out of int64's range).
inline std::optional<int64_t> parse_whole_int64(const std::string& text) {
  size_t used = 0;
  int64_t value = 0;
  try {
    value = std::stoll(text, &used);
  } catch (const std::exception&) {
    return std::nullopt;
  }
  if (used == 0 || used != text.size()) return std::nullopt;
  return value;
}

}  // namespace rlx
