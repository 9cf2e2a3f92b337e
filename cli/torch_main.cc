// The rlx-torch executable: every rlx command, LibTorch linked. `rlx` execs it for the commands
// that need LibTorch (cli/forward_to_torch.h); it also runs the light ones when called directly.
#include "cli/command.h"
#include "cli/dispatch.h"
#include "cli/forward_to_torch.h"
#include "learner/malloc_settings.h"

int main(int argc, char** argv) {
  rlx::tune_malloc_for_tensors();
  rlx::cli::remember_command_line(argc, argv);  // `plot` is handed to rlx-plot
  const rlx::cli::TorchCommands own{rlx::cli::run_train_command, rlx::cli::run_tune_command,
                                    rlx::cli::run_evaluate_command, rlx::cli::run_export_command,
                                    rlx::cli::run_bench_command,
                                    rlx::cli::run_learner_command, rlx::cli::run_serve_command};
  return rlx::cli::run_rlx(argc, argv, rlx::cli::rlx_commands(own));
}
