// Reading a text file from its end, a block at a time: what a long run's results files need on
// each resume (the last row, the rows after a checkpoint) without reading them whole.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>

namespace rlx {

// Calls visit(line, offset) for each line of the file at `path`, the last first, without its
// '\n' (offset: where the line starts), until visit returns false or the first line was
// visited. An unterminated last line is visited too. Memory: one block and the longest line. A
// missing file has no lines; std::system_error naming the path when it cannot be read.
void for_each_line_backwards(const std::filesystem::path& path,
                             const std::function<bool(const std::string& line, uintmax_t offset)>& visit);

// The size of the file at `path` up to and with its last '\n' (0 when it has none): where an
// unterminated last line begins.
uintmax_t size_through_last_newline(const std::filesystem::path& path);

// The first line of the file at `path`, without its '\n' ("" when it is empty or missing).
std::string first_line(const std::filesystem::path& path);

}  // namespace rlx
