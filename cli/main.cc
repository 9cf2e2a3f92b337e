// The `rlx` executable: links no LibTorch. It runs --help, --version, envs, keys and worker
// itself, trains learner_backend: native experiments and serves .rlxp files itself, and hands the
// other trainings, serving a checkpoint, tune, evaluate, export, bench, envs bench and the hidden
// learner command to rlx-torch, and plot to rlx-plot (cli/forward_to_torch.h), so starting a
// worker, listing envs or training a small PPO policy costs milliseconds of start-up instead of
// LibTorch's second.
#include <string>
#include <vector>

#include "algorithms/native_algorithms.h"
#include "cli/dispatch.h"
#include "cli/envs_subcommands.h"
#include "cli/forward_to_torch.h"
#include "cli/serve_command.h"
#include "cli/train_command.h"

namespace {

// `rlx train`: natively when the experiment asks for it, else by rlx-torch.
int run_native_train_command(const std::vector<std::string>& args) {
  rlx::cli::TrainBackend backend;
  backend.runs = rlx::uses_native_learner;
  backend.hand_over = rlx::cli::forward_to_torch;
  backend.make_algorithm = [](const rlx::Experiment& experiment, const rlx::DataParallelOptions& options) {
    return rlx::make_native_algorithm(experiment, options);
  };
  return rlx::cli::run_train(args, backend);
}

// `rlx serve`: `.rlxp` files here, checkpoints and trials by rlx-torch.
int run_light_serve_command(const std::vector<std::string>& args) {
  rlx::cli::ServeBackend backend;
  backend.hand_over = rlx::cli::forward_to_torch;
  return rlx::cli::run_serve(args, backend);
}

}  // namespace

namespace rlx::cli {

// `rlx envs bench` measures with the benchmark library, which rlx-torch carries.
int run_envs_bench(const std::vector<std::string>& args) { return forward_to_torch(args); }

}  // namespace rlx::cli

int main(int argc, char** argv) {
  using rlx::cli::forward_to_torch;
  rlx::cli::remember_command_line(argc, argv);
  const rlx::cli::TorchCommands commands{run_native_train_command, forward_to_torch, forward_to_torch,
                                         forward_to_torch, forward_to_torch, forward_to_torch, run_light_serve_command};
  return rlx::cli::run_rlx(argc, argv, rlx::cli::rlx_commands(commands));
}
