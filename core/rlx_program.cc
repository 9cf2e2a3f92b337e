#include "core/rlx_program.h"

#include <cstdlib>
#include <filesystem>

namespace rlx {

std::string rlx_program_path() {
  const char* program = std::getenv(kRlxProgramVariable);
  if (program != nullptr && *program != '\0') return program;
  return std::filesystem::read_symlink("/proc/self/exe").string();
}

}  // namespace rlx
