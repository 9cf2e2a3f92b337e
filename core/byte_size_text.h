// Byte counts for people: "834 KiB", "853 MiB", "1.5 GiB".
#pragma once

#include <cstdint>
#include <cstdio>
#include <string>

namespace rlx {

// `bytes` in the largest binary unit (B, KiB, MiB, GiB, TiB) that keeps the figure at least 1,
// with one decimal below 10 of that unit and none above.
inline std::string byte_size_text(uint64_t bytes) {
  static const char* const kUnits[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  double value = static_cast<double>(bytes);
  size_t unit = 0;
  while (value >= 1024.0 && unit + 1 < sizeof(kUnits) / sizeof(kUnits[0])) {
    value /= 1024.0;
    ++unit;
  }
  char text[32];
  std::snprintf(text, sizeof(text), unit > 0 && value < 10.0 ? "%.1f %s" : "%.0f %s", value, kUnits[unit]);
  return text;
}

}  // namespace rlx
