// rlx's list of commands, apart from dispatch.cc's run_rlx so that an executable that runs
// one command alone (rlx-plot) links none of the others.
#include "cli/command.h"
#include "cli/dispatch.h"
#include "cli/forward_to_torch.h"

namespace rlx::cli {

std::vector<Subcommand> rlx_commands(const TorchCommands& torch) {
  return {
      {"train", "train an experiment file (PPO, DQN) until its stop criterion", torch.train},
      {"tune", "tune hyperparameters: search spaces, ASHA, population-based training", torch.tune},
      {"evaluate", "run a saved policy (a checkpoint) for some episodes", torch.evaluate},
      {"export", "write a checkpoint's policy to one file for applications (C++, Python)", torch.export_policy},
      {"serve", "answer requests for actions from trained policies over HTTP and ZeroMQ", torch.serve},
      {"envs", "list, describe, roll out and benchmark environments", run_envs_command},
      {"worker", "run a rollout worker that joins a learner (--connect ENDPOINT)", run_worker_command},
      {"keys", "CURVE keys for authenticated remote workers (init, add-worker)", run_keys_command},
      {"plot", "draw learning curves of runs and PBT family trees (PNG, SVG)", forward_to_plot},
      {"bench", "benchmarks: transport, sampling, scale, learner, recurrent, startup, serve", torch.bench},
      {"learner", "a data-parallel learner rank that joins a running elastic group (--join HOST:PORT)", torch.learner},
  };
}

}  // namespace rlx::cli
