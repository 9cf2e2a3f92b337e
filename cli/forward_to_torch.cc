#include "cli/forward_to_torch.h"

#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <stdexcept>

#include "cli/envs_subcommands.h"
#include "core/rlx_program.h"

namespace rlx::cli {

namespace {

constexpr const char* kTorchProgram = "rlx-torch";

std::vector<std::string>& remembered() {
  static std::vector<std::string> command_line;
  return command_line;
}

// rlx-torch beside this executable (a build tree, or bin/ of an install), or in libexec/rlx/.
std::vector<std::filesystem::path> torch_program_candidates(const std::filesystem::path& self) {
  const std::filesystem::path dir = self.parent_path();
  return {dir / kTorchProgram, dir.parent_path() / "libexec" / "rlx" / kTorchProgram};
}

}  // namespace

void remember_command_line(int argc, char** argv) { remembered().assign(argv, argv + argc); }

int forward_to_torch(const std::vector<std::string>& /*args: the remembered line is handed over whole*/) {
  const std::filesystem::path self = std::filesystem::read_symlink("/proc/self/exe");
  const std::vector<std::filesystem::path> candidates = torch_program_candidates(self);
  std::vector<char*> argv;
  for (std::string& arg : remembered()) argv.push_back(arg.data());
  argv.push_back(nullptr);
  if (::setenv(kRlxProgramVariable, self.c_str(), 1) != 0) throw std::runtime_error("cannot set RLX_PROGRAM");
  std::string tried;
  for (const std::filesystem::path& candidate : candidates) {
    ::execv(candidate.c_str(), argv.data());  // returns only on failure
    tried += (tried.empty() ? "" : ", ") + candidate.string() + " (" + std::strerror(errno) + ")";
  }
  throw std::runtime_error("this command needs rlx-torch, the half of rlx that links LibTorch, and it could not be "
                           "started: tried " + tried + "; is rlx fully built or installed?");
}

// `rlx envs bench` measures with the benchmark library, which rlx-torch carries.
int run_envs_bench(const std::vector<std::string>& args) { return forward_to_torch(args); }

}  // namespace rlx::cli
