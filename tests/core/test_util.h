// Helpers for the core tests: a scratch directory and "what() of the thrown error".
#pragma once

#include <stdlib.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/temp_dir.h"

namespace rlx::test {

// A fresh directory under the system temp dir, removed with everything in it on destruction.
using TempDir = rlx::TempDir;

// Writes `text` to `path` (plain, for setting up fixtures).
inline void write_text(const std::filesystem::path& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary);
  out << text;
}

// The names in `dir` (not recursive), sorted.
inline std::vector<std::string> names_in(const std::filesystem::path& dir) {
  std::vector<std::string> names;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) names.push_back(entry.path().filename().string());
  std::sort(names.begin(), names.end());
  return names;
}

// The message of the exception of type E that `body` throws; "" when it throws none.
template <typename E, typename F>
std::string error_of(F&& body) {
  try {
    body();
  } catch (const E& error) {
    return error.what();
  }
  return "";
}

}  // namespace rlx::test
