#include "core/rlx_program.h"

#include <unistd.h>

#include <cstdlib>

namespace rlx {

namespace {

bool is_executable_file(const std::filesystem::path& path) {
  std::error_code error;
  return std::filesystem::is_regular_file(path, error) && ::access(path.c_str(), X_OK) == 0;
}

}  // namespace

std::string rlx_program_beside(const std::filesystem::path& executable) {
  if (executable.filename() != "rlx-torch") return executable.string();
  const std::filesystem::path dir = executable.parent_path();
  // A build tree keeps both side by side; an install has rlx-torch in libexec/rlx/ and rlx in bin/.
  for (const std::filesystem::path& candidate : {dir / "rlx", dir.parent_path().parent_path() / "bin" / "rlx"}) {
    if (is_executable_file(candidate)) return candidate.string();
  }
  return executable.string();
}

std::string rlx_program_path() {
  const char* program = std::getenv(kRlxProgramVariable);
  if (program != nullptr && *program != '\0') return program;
  return rlx_program_beside(std::filesystem::read_symlink("/proc/self/exe"));
}

}  // namespace rlx
