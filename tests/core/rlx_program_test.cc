#include <catch2/catch.hpp>

#include <cstdlib>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "core/rlx_program.h"

TEST_CASE("rlx_program_path is RLX_PROGRAM when set and this executable otherwise", "[core]") {
  ::setenv(rlx::kRlxProgramVariable, "/opt/rlx/bin/rlx", 1);
  CHECK(rlx::rlx_program_path() == "/opt/rlx/bin/rlx");
  ::setenv(rlx::kRlxProgramVariable, "", 1);  // empty counts as unset
  CHECK(rlx::rlx_program_path() == std::filesystem::read_symlink("/proc/self/exe").string());
  ::unsetenv(rlx::kRlxProgramVariable);
  CHECK(rlx::rlx_program_path() == std::filesystem::read_symlink("/proc/self/exe").string());
}

TEST_CASE("rlx-torch run directly starts its processes through the rlx beside it", "[core]") {
  namespace fs = std::filesystem;
  const fs::path root = fs::temp_directory_path() / ("rlx-program-test-" + std::to_string(::getpid()));
  fs::create_directories(root / "build");
  fs::create_directories(root / "prefix/libexec/rlx");
  fs::create_directories(root / "prefix/bin");
  const auto touch_executable = [](const fs::path& path) {
    std::ofstream(path) << "#!/bin/sh\n";
    fs::permissions(path, fs::perms::owner_all);
  };
  // Without an rlx beside it, rlx-torch itself.
  CHECK(rlx::rlx_program_beside(root / "build/rlx-torch") == (root / "build/rlx-torch").string());
  touch_executable(root / "build/rlx");
  CHECK(rlx::rlx_program_beside(root / "build/rlx-torch") == (root / "build/rlx").string());
  touch_executable(root / "prefix/bin/rlx");
  CHECK(rlx::rlx_program_beside(root / "prefix/libexec/rlx/rlx-torch") == (root / "prefix/bin/rlx").string());
  // Any other executable (a test binary, rlx itself) is its own program.
  CHECK(rlx::rlx_program_beside(root / "build/rlx_core_tests") == (root / "build/rlx_core_tests").string());
  fs::remove_all(root);
}
