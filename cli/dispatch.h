// rlx's command-line front end, shared by the two executables: `rlx` (no LibTorch; runs the
// commands that need none and hands the others to `rlx-torch`) and `rlx-torch` (every command).
#pragma once

#include <exception>
#include <string>
#include <vector>

namespace rlx::cli {

// One command: its name, a line of help (empty: hidden), and the function that runs it.
struct Subcommand {
  const char* name;
  const char* summary;
  int (*run)(const std::vector<std::string>& args);
};

// How the commands that need LibTorch are run: by rlx-torch itself, or by handing over to it.
struct TorchCommands {
  int (*train)(const std::vector<std::string>& args);
  int (*tune)(const std::vector<std::string>& args);
  int (*evaluate)(const std::vector<std::string>& args);
  int (*export_policy)(const std::vector<std::string>& args);
  int (*bench)(const std::vector<std::string>& args);
  int (*learner)(const std::vector<std::string>& args);
  int (*serve)(const std::vector<std::string>& args);
};

// rlx's commands in the order --help lists them: envs, worker and keys run here, plot in
// rlx-plot (cli/forward_to_torch.h), the others as `torch` says; learner is hidden (a data-parallel rank, started by `rlx train --learners M`).
std::vector<Subcommand> rlx_commands(const TorchCommands& torch);

// Parses --log-level, --help and --version, then runs the named command with args after its
// name, mapping each kind of error to its message and exit status (bad input 2: usage, config
// and env plugin errors, refused checkpoints, env contract errors; others 1; LibTorch's errors
// without their stack trace). Returns the process's exit status.
int run_rlx(int argc, char** argv, const std::vector<Subcommand>& commands);

}  // namespace rlx::cli
