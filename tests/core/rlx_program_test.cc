#include <catch2/catch.hpp>

#include <cstdlib>
#include <filesystem>

#include "core/rlx_program.h"

TEST_CASE("rlx_program_path is RLX_PROGRAM when set and this executable otherwise", "[core]") {
  ::setenv(rlx::kRlxProgramVariable, "/opt/rlx/bin/rlx", 1);
  CHECK(rlx::rlx_program_path() == "/opt/rlx/bin/rlx");
  ::setenv(rlx::kRlxProgramVariable, "", 1);  // empty counts as unset
  CHECK(rlx::rlx_program_path() == std::filesystem::read_symlink("/proc/self/exe").string());
  ::unsetenv(rlx::kRlxProgramVariable);
  CHECK(rlx::rlx_program_path() == std::filesystem::read_symlink("/proc/self/exe").string());
}
