// SHA-256 (FIPS 180-4, core/sha256.cc) of buffers and files, as lowercase hex.
#pragma once

#include <cstddef>
#include <filesystem>
#include <memory>
#include <string>
#include <string_view>

namespace rlx {

// An incremental SHA-256 computation.
class Sha256 {
 public:
  Sha256();
  ~Sha256();
  Sha256(const Sha256&) = delete;
  Sha256& operator=(const Sha256&) = delete;

  // Feeds more bytes.
  void update(const void* data, size_t size);
  void update(std::string_view bytes) { update(bytes.data(), bytes.size()); }
  // The digest of everything fed so far, as 64 lowercase hex digits; the object is then spent.
  std::string hex_digest();

 private:
  struct Context;
  std::unique_ptr<Context> context_;
};

// SHA-256 of a buffer, as 64 lowercase hex digits.
std::string sha256_hex(std::string_view bytes);
// SHA-256 of a file read in chunks; std::system_error naming the path when it cannot be read.
std::string sha256_file_hex(const std::filesystem::path& path);

}  // namespace rlx
