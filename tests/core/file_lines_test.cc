// Reading a text file from its end: lines across block boundaries, long lines, an unterminated
// last line, empty and missing files.
#include <catch2/catch.hpp>

#include <fstream>
#include <string>
#include <utility>
#include <vector>

#include "core/file_lines.h"
#include "core/temp_dir.h"

namespace {

std::vector<std::pair<std::string, uintmax_t>> all_backwards(const std::filesystem::path& path) {
  std::vector<std::pair<std::string, uintmax_t>> lines;
  rlx::for_each_line_backwards(path, [&](const std::string& line, uintmax_t offset) {
    lines.emplace_back(line, offset);
    return true;
  });
  return lines;
}

}  // namespace

TEST_CASE("Lines read from the end come back last first, with their offsets, across blocks", "[core][results]") {
  rlx::TempDir dir;
  const auto path = dir / "rows.txt";
  std::vector<std::string> written;
  std::string text;
  std::vector<uintmax_t> offsets;
  for (int i = 0; i < 5000; ++i) {  // ~ 200 KB: several 64 KiB blocks, lines split across them
    written.push_back(std::string(static_cast<size_t>(i % 70), 'a' + static_cast<char>(i % 26)) + std::to_string(i));
    offsets.push_back(text.size());
    text += written.back() + "\n";
  }
  written.push_back(std::string(200000, 'L'));  // longer than a block
  offsets.push_back(text.size());
  text += written.back() + "\n";
  std::ofstream(path, std::ios::binary) << text;
  const auto lines = all_backwards(path);
  REQUIRE(lines.size() == written.size());
  for (size_t i = 0; i < lines.size(); ++i) {
    const size_t k = written.size() - 1 - i;
    REQUIRE(lines[i].first == written[k]);
    REQUIRE(lines[i].second == offsets[k]);
  }
  CHECK(rlx::size_through_last_newline(path) == text.size());
  CHECK(rlx::first_line(path) == written[0]);
  // Stopping early reads no further.
  int visited = 0;
  rlx::for_each_line_backwards(path, [&](const std::string&, uintmax_t) { return ++visited < 3; });
  CHECK(visited == 3);
}

TEST_CASE("An unterminated last line is a line, and ends where the complete lines end", "[core][results]") {
  rlx::TempDir dir;
  const auto path = dir / "rows.txt";
  std::ofstream(path, std::ios::binary) << "one\n\ntwo\n{\"partial";
  const auto lines = all_backwards(path);
  REQUIRE(lines.size() == 4);
  CHECK(lines[0] == std::make_pair(std::string("{\"partial"), uintmax_t{9}));
  CHECK(lines[1] == std::make_pair(std::string("two"), uintmax_t{5}));
  CHECK(lines[2] == std::make_pair(std::string(""), uintmax_t{4}));
  CHECK(lines[3] == std::make_pair(std::string("one"), uintmax_t{0}));
  CHECK(rlx::size_through_last_newline(path) == 9);
  std::ofstream(dir / "none.txt", std::ios::binary) << "no newline at all";
  CHECK(rlx::size_through_last_newline(dir / "none.txt") == 0);
  std::ofstream(dir / "empty.txt", std::ios::binary);
  CHECK(all_backwards(dir / "empty.txt").empty());
  CHECK(all_backwards(dir / "missing.txt").empty());
  CHECK(rlx::first_line(dir / "missing.txt").empty());
}
