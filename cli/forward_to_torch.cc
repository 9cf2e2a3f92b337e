#include "cli/forward_to_torch.h"

#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <stdexcept>

#include "core/rlx_program.h"

namespace rlx::cli {

namespace {

constexpr const char* kTorchProgram = "rlx-torch";
constexpr const char* kPlotProgram = "rlx-plot";

std::vector<std::string>& remembered() {
  static std::vector<std::string> command_line;
  return command_line;
}

// `program` beside this executable (a build tree, or bin/ of an install), or in libexec/rlx/.
std::vector<std::filesystem::path> program_candidates(const std::filesystem::path& self, const char* program) {
  const std::filesystem::path dir = self.parent_path();
  return {dir / program, dir.parent_path() / "libexec" / "rlx" / program};
}

// Replaces this process with `program` run on the remembered command line (RLX_PROGRAM set to
// this executable); throws std::runtime_error naming the paths tried.
[[noreturn]] void hand_over(const char* program, const std::string& purpose) {
  const std::filesystem::path self = std::filesystem::read_symlink("/proc/self/exe");
  const std::vector<std::filesystem::path> candidates = program_candidates(self, program);
  std::vector<char*> argv;
  for (std::string& arg : remembered()) argv.push_back(arg.data());
  argv.push_back(nullptr);
  if (::setenv(kRlxProgramVariable, self.c_str(), 1) != 0) throw std::runtime_error("cannot set RLX_PROGRAM");
  std::string tried;
  for (const std::filesystem::path& candidate : candidates) {
    ::execv(candidate.c_str(), argv.data());  // returns only on failure
    tried += (tried.empty() ? "" : ", ") + candidate.string() + " (" + std::strerror(errno) + ")";
  }
  throw std::runtime_error("this command needs " + std::string(program) + ", " + purpose +
                           ", and it could not be started: tried " + tried + "; is rlx fully built or installed?");
}

}  // namespace

void remember_command_line(int argc, char** argv) { remembered().assign(argv, argv + argc); }

int forward_to_torch(const std::vector<std::string>& /*args: the remembered line is handed over whole*/) {
  hand_over(kTorchProgram, "the half of rlx that links LibTorch");
}

int forward_to_plot(const std::vector<std::string>& /*args: the remembered line is handed over whole*/) {
  hand_over(kPlotProgram, "the part of rlx that links Cairo to draw plots");
}

}  // namespace rlx::cli
