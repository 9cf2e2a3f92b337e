// Crash-safe file I/O: whole-file replacement, durable appends, and directories that appear
// complete or not at all. Errors throw std::system_error naming the path.
#pragma once

#include <filesystem>
#include <functional>
#include <string>
#include <string_view>

#include "core/file_read.h"  // read_file (header-only there, for rlx::policy)

namespace rlx {

// Replaces `path` by `bytes` atomically: a temp file in the same folder, fsync, rename, fsync
// of the folder. A crash leaves the old content or the new, never a mix.
void write_file_atomic(const std::filesystem::path& path, std::string_view bytes);

// Writes `bytes` to `path` (truncating) and fsyncs it; not atomic (for files inside a
// directory that write_directory_atomic publishes).
void write_file_durable(const std::filesystem::path& path, std::string_view bytes);

// Appends `bytes` to `path` (created if missing) in one write, then fsyncs. When that fails
// (a full disk), the file is cut back to its length before, leaving no torn tail.
void append_durable(const std::filesystem::path& path, std::string_view bytes);

// Appends `line` and a newline to `path` (created if missing) in one write, then fsyncs. When
// that fails (a full disk), the file is cut back to its length before, leaving no torn line.
void append_line_durable(const std::filesystem::path& path, std::string_view line);

// Flushes a file or directory to disk (fsync).
void fsync_path(const std::filesystem::path& path);

// Builds a directory by calling fill(temp_dir) on `target.tmp-XXXXXX` beside it, fsyncs every
// file in it, then puts it at `target`. An existing `target` is swapped out atomically
// (renameat2 RENAME_EXCHANGE, or where unsupported renamed aside to `target.old-XXXXXX`
// first) and removed. If fill throws, the temp dir is removed and the exception propagates.
void write_directory_atomic(const std::filesystem::path& target,
                            const std::function<void(const std::filesystem::path& temp_dir)>& fill);

// Cleans what interrupted writes left in `folder`: removes `*.tmp-XXXXXX` entries, and puts a
// `X.old-XXXXXX` directory back at X when X is missing (else removes it).
void recover_interrupted_writes(const std::filesystem::path& folder);

}  // namespace rlx
