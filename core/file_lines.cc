#include "core/file_lines.h"

#include <algorithm>
#include <fstream>
#include <system_error>

namespace rlx {

namespace {

constexpr uintmax_t kBlockBytes = uintmax_t{1} << 16;

// `size` bytes at `offset` of an open file.
std::string read_at(std::ifstream& in, uintmax_t offset, uintmax_t size, const std::filesystem::path& path) {
  std::string bytes(static_cast<size_t>(size), '\0');
  in.seekg(static_cast<std::streamoff>(offset));
  if (!in.read(bytes.data(), static_cast<std::streamsize>(size))) {
    throw std::system_error(std::make_error_code(std::errc::io_error), "cannot read " + path.string());
  }
  return bytes;
}

}  // namespace

void for_each_line_backwards(const std::filesystem::path& path,
                             const std::function<bool(const std::string& line, uintmax_t offset)>& visit) {
  std::error_code missing;
  const uintmax_t size = std::filesystem::file_size(path, missing);
  if (missing || size == 0) return;
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::system_error(std::make_error_code(std::errc::io_error), "cannot open " + path.string());
  // pending holds the bytes [pending_start, end of the line being assembled).
  uintmax_t pending_start = size;
  std::string pending;
  if (read_at(in, size - 1, 1, path) == "\n") {
    pending_start = size - 1;  // the last line's '\n' is no line of its own
  }
  for (;;) {
    const size_t newline = pending.rfind('\n');
    if (newline != std::string::npos) {
      if (!visit(pending.substr(newline + 1), pending_start + newline + 1)) return;
      pending.resize(newline);
      continue;
    }
    if (pending_start == 0) {
      visit(pending, 0);
      return;
    }
    const uintmax_t block = std::min(kBlockBytes, pending_start);
    pending_start -= block;
    pending.insert(0, read_at(in, pending_start, block, path));
  }
}

uintmax_t size_through_last_newline(const std::filesystem::path& path) {
  std::error_code missing;
  const uintmax_t size = std::filesystem::file_size(path, missing);
  if (missing || size == 0) return 0;
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::system_error(std::make_error_code(std::errc::io_error), "cannot open " + path.string());
  for (uintmax_t end = size; end > 0;) {
    const uintmax_t block = std::min(kBlockBytes, end);
    const std::string bytes = read_at(in, end - block, block, path);
    const size_t newline = bytes.rfind('\n');
    if (newline != std::string::npos) return end - block + newline + 1;
    end -= block;
  }
  return 0;
}

std::string first_line(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::string line;
  if (in) std::getline(in, line);
  return line;
}

}  // namespace rlx
