// The `rlx` executable: links no LibTorch. It runs --help, --version, envs, keys and worker
// itself, and hands train, tune, evaluate, bench, envs bench and the hidden learner command to
// rlx-torch (cli/forward_to_torch.h), so starting a worker or listing envs costs milliseconds.
#include <exception>
#include <string>

#include "cli/dispatch.h"
#include "cli/forward_to_torch.h"

namespace {

std::string plain_error_text(const std::exception& error) { return error.what(); }

}  // namespace

int main(int argc, char** argv) {
  using rlx::cli::forward_to_torch;
  rlx::cli::remember_command_line(argc, argv);
  const rlx::cli::TorchCommands handed_over{forward_to_torch, forward_to_torch, forward_to_torch, forward_to_torch,
                                            forward_to_torch};
  return rlx::cli::run_rlx(argc, argv, rlx::cli::rlx_commands(handed_over), plain_error_text);
}
