// Reading a whole file, with the reason when it cannot be read. Header-only, so that the
// libraries that link none of rlx_common (rlx::policy, transport) read users' files the same way
// and say the same things about them.
#pragma once

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <filesystem>
#include <string>
#include <system_error>

namespace rlx {

// The whole content of a file. std::system_error when it cannot be read: code() says why
// (ENOENT, EISDIR, EACCES, ...; file_error_reason words it) and what() names the path ("cannot
// open PATH: No such file or directory", "cannot read PATH: Is a directory").
inline std::string read_file(const std::filesystem::path& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw std::system_error(errno, std::generic_category(), "cannot open " + path.string());
  std::string content;
  char buffer[1 << 16];
  while (true) {
    const ssize_t got = ::read(fd, buffer, sizeof buffer);
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) {
      const int error = errno;
      ::close(fd);
      throw std::system_error(error, std::generic_category(), "cannot read " + path.string());
    }
    if (got == 0) break;
    content.append(buffer, static_cast<size_t>(got));
  }
  ::close(fd);
  return content;
}

// Why a file could not be read, for a message that has named it already: "no such file",
// "it is a directory", "permission denied", else the system's words for the error.
inline std::string file_error_reason(const std::system_error& error) {
  switch (error.code().value()) {
    case ENOENT: return "no such file";
    case EISDIR: return "it is a directory";
    case EACCES: return "permission denied";
    default: return error.code().message();
  }
}

}  // namespace rlx
