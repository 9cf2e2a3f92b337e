// TempDir: a fresh directory under the system's temp dir, removed with everything in it when the
// object goes (RAII, however a run ends).
#pragma once

#include <stdlib.h>

#include <filesystem>
#include <stdexcept>
#include <string>
#include <system_error>
#include <vector>

namespace rlx {

class TempDir {
 public:
  // Makes <parent>/<prefix>XXXXXX (parent: the system's temp dir), mode 0700; std::runtime_error
  // when it cannot.
  explicit TempDir(const std::string& prefix = "rlx-", const std::filesystem::path& parent = {}) {
    const std::filesystem::path base = parent.empty() ? std::filesystem::temp_directory_path() : parent;
    const std::string pattern = (base / (prefix + "XXXXXX")).string();
    std::vector<char> buffer(pattern.begin(), pattern.end());
    buffer.push_back('\0');
    if (!::mkdtemp(buffer.data())) throw std::runtime_error("cannot create a temporary directory like " + pattern);
    path_ = buffer.data();
  }
  ~TempDir() {
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  const std::filesystem::path& path() const { return path_; }
  std::filesystem::path operator/(const std::string& name) const { return path_ / name; }

 private:
  std::filesystem::path path_;
};

}  // namespace rlx
