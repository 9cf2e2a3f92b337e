// Crash-safe file I/O on POSIX: temp + fsync + rename.
#include "core/atomic_file.h"

#include <fcntl.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <system_error>
#include <vector>

namespace rlx {
namespace fs = std::filesystem;
namespace {

constexpr size_t kSuffixLength = 6;  // the XXXXXX of mkstemp/mkdtemp

[[noreturn]] void throw_errno(const std::string& what, const fs::path& path) {
  throw std::system_error(errno, std::generic_category(), what + " " + path.string());
}

// Owns a file descriptor.
class UniqueFd {
 public:
  explicit UniqueFd(int fd) : fd_(fd) {}
  UniqueFd(const UniqueFd&) = delete;
  UniqueFd& operator=(const UniqueFd&) = delete;
  ~UniqueFd() {
    if (fd_ >= 0) ::close(fd_);
  }
  int get() const { return fd_; }
  // Closes now, reporting errors (close can report a failed delayed write).
  void close(const fs::path& path) {
    const int fd = fd_;
    fd_ = -1;
    if (::close(fd) != 0) throw_errno("cannot close", path);
  }

 private:
  int fd_;
};

void write_all(int fd, std::string_view bytes, const fs::path& path) {
  const char* data = bytes.data();
  size_t left = bytes.size();
  while (left > 0) {
    const ssize_t written = ::write(fd, data, left);
    if (written < 0) {
      if (errno == EINTR) continue;
      throw_errno("cannot write", path);
    }
    data += written;
    left -= static_cast<size_t>(written);
  }
}

void fsync_fd(int fd, const fs::path& path) {
  if (::fsync(fd) != 0 && errno != EINVAL && errno != EROFS) throw_errno("cannot fsync", path);
}

fs::path parent_of(const fs::path& path) {
  const fs::path parent = path.parent_path();
  return parent.empty() ? fs::path(".") : parent;
}

// True when `name` ends in `marker` followed by a mkstemp-style suffix.
bool has_temp_suffix(const std::string& name, const std::string& marker) {
  if (name.size() < marker.size() + kSuffixLength) return false;
  return name.compare(name.size() - kSuffixLength - marker.size(), marker.size(), marker) == 0;
}

fs::path make_temp_dir(const fs::path& near, const std::string& marker) {
  std::string pattern = (parent_of(near) / (near.filename().string() + marker + "XXXXXX")).string();
  std::vector<char> buffer(pattern.begin(), pattern.end());
  buffer.push_back('\0');
  if (!::mkdtemp(buffer.data())) throw_errno("cannot create a temporary directory beside", near);
  return fs::path(buffer.data());
}

void fsync_tree(const fs::path& dir) {
  for (const auto& entry : fs::recursive_directory_iterator(dir)) {
    if (entry.is_regular_file() || entry.is_directory()) fsync_path(entry.path());
  }
  fsync_path(dir);
}

}  // namespace

void fsync_path(const fs::path& path) {
  UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (fd.get() < 0) throw_errno("cannot open", path);
  fsync_fd(fd.get(), path);
}

void write_file_durable(const fs::path& path, std::string_view bytes) {
  UniqueFd fd(::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644));
  if (fd.get() < 0) throw_errno("cannot create", path);
  write_all(fd.get(), bytes, path);
  fsync_fd(fd.get(), path);
  fd.close(path);
}

void write_file_atomic(const fs::path& path, std::string_view bytes) {
  const fs::path parent = parent_of(path);
  std::string pattern = (parent / ("." + path.filename().string() + ".tmp-XXXXXX")).string();
  std::vector<char> buffer(pattern.begin(), pattern.end());
  buffer.push_back('\0');
  UniqueFd fd(::mkstemp(buffer.data()));
  if (fd.get() < 0) throw_errno("cannot create a temporary file beside", path);
  const fs::path temp(buffer.data());
  try {
    ::fchmod(fd.get(), 0644);
    write_all(fd.get(), bytes, temp);
    fsync_fd(fd.get(), temp);
    fd.close(temp);
    if (::rename(temp.c_str(), path.c_str()) != 0) throw_errno("cannot rename into place", path);
  } catch (...) {
    ::unlink(temp.c_str());
    throw;
  }
  fsync_path(parent);
}

void append_durable(const fs::path& path, std::string_view bytes) {
  std::error_code ignored;
  const bool existed = fs::exists(path, ignored);
  UniqueFd fd(::open(path.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644));
  if (fd.get() < 0) throw_errno("cannot open for appending", path);
  struct stat before {};
  if (::fstat(fd.get(), &before) != 0) throw_errno("cannot stat", path);
  try {
    write_all(fd.get(), bytes, path);
    fsync_fd(fd.get(), path);
  } catch (const std::system_error&) {
    // A disk that filled mid-write: cut the torn tail off, so the next append starts clean.
    const int saved = errno;
    if (::ftruncate(fd.get(), before.st_size) == 0) ::fsync(fd.get());
    errno = saved;
    throw;
  }
  fd.close(path);
  if (!existed) fsync_path(parent_of(path));
}

void append_line_durable(const fs::path& path, std::string_view line) {
  std::string text(line);
  text += '\n';
  append_durable(path, text);
}

void write_directory_atomic(const fs::path& target, const std::function<void(const fs::path&)>& fill) {
  const fs::path parent = parent_of(target);
  fs::create_directories(parent);
  const fs::path temp = make_temp_dir(target, ".tmp-");
  try {
    fill(temp);
    fsync_tree(temp);
    if (!fs::exists(target)) {
      if (::rename(temp.c_str(), target.c_str()) != 0) throw_errno("cannot rename into place", target);
    } else if (::renameat2(AT_FDCWD, temp.c_str(), AT_FDCWD, target.c_str(), RENAME_EXCHANGE) == 0) {
      fsync_path(parent);
      fs::remove_all(temp);  // now holds the old directory
    } else if (errno == EINVAL || errno == ENOSYS || errno == ENOTSUP) {
      // No atomic exchange here: move the old one aside first; recover_interrupted_writes
      // puts it back if a crash comes between the two renames.
      const fs::path aside = make_temp_dir(target, ".old-");
      if (::rename(target.c_str(), aside.c_str()) != 0) throw_errno("cannot move aside", target);
      if (::rename(temp.c_str(), target.c_str()) != 0) {
        const int saved = errno;
        ::rename(aside.c_str(), target.c_str());
        errno = saved;
        throw_errno("cannot rename into place", target);
      }
      fsync_path(parent);
      fs::remove_all(aside);
    } else {
      throw_errno("cannot exchange into place", target);
    }
  } catch (...) {
    std::error_code ignored;
    fs::remove_all(temp, ignored);
    throw;
  }
  fsync_path(parent);
}

void recover_interrupted_writes(const fs::path& folder) {
  std::error_code error;
  if (!fs::is_directory(folder, error)) return;
  std::vector<fs::path> entries;
  for (const auto& entry : fs::directory_iterator(folder)) entries.push_back(entry.path());
  for (const auto& path : entries) {
    const std::string name = path.filename().string();
    if (has_temp_suffix(name, ".tmp-")) {
      fs::remove_all(path);
    } else if (has_temp_suffix(name, ".old-") && fs::is_directory(path)) {
      const fs::path original = folder / name.substr(0, name.size() - kSuffixLength - 5);
      if (!fs::exists(original)) {
        fs::rename(path, original);
      } else {
        fs::remove_all(path);
      }
    }
  }
  fsync_path(folder);
}

}  // namespace rlx
