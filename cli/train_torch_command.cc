// rlx-torch's `rlx train`: every experiment, LibTorch's learners included, and the learner ranks
// >= 1 that srun or torchrun start.
#include <unistd.h>

#include <chrono>
#include <memory>

#include "algorithms/make_algorithm.h"
#include "cli/command.h"
#include "cli/train_command.h"
#include "core/log.h"
#include "core/stop_signal.h"
#include "core/version.h"
#include "learner/learner_group.h"
#include "transport/sockets.h"

namespace rlx::cli {

namespace {

// How long a rank >= 1 waits for rank 0 to serve the rendezvous (rank 0 may first read its
// checkpoints and build its workers).
constexpr std::chrono::milliseconds kPlacedRendezvousTimeout{300000};

// A rank >= 1 that an engine started: joins rank 0's group and follows it until it says stop.
int run_placed_rank(const RankPlacement& placement) {
  const std::string name = "learner rank " + std::to_string(placement.rank);
  set_log_role(name, "rlx train (" + name + ")");
  logger().info("rlx {} {} of {} on {}, pid {}: joining rank 0 at {}:{} ({})", kRlxVersion, name, placement.world_size,
                local_host_name(), ::getpid(), placement.master_addr, placement.master_port, placement.origin);
  // Carries on through SIGTERM/SIGINT (Slurm signals every task): rank 0 checkpoints, then stops the group.
  const StopSignals stop_signals(stop_grace_from_env(), "carrying on until learner rank 0 stops the group");
  std::unique_ptr<LearnerGroupMember> member = join_placed_learner_group(placement, kPlacedRendezvousTimeout);
  std::unique_ptr<LogFile> log;
  if (const std::string dir = member->log_dir(); !dir.empty()) {
    log = std::make_unique<LogFile>(learner_rank_log(dir, placement.rank));
  }
  logger().info("joined the group of {} learners on {}", placement.world_size, member->device().str());
  run_learner_rank(*member);
  return kExitOk;
}

}  // namespace

int run_train_command(const std::vector<std::string>& args) {
  TrainBackend backend;
  backend.make_algorithm = [](const Experiment& experiment, const DataParallelOptions& options) {
    return make_algorithm(experiment, options);
  };
  backend.follow_placed_rank = run_placed_rank;
  return run_train(args, backend);
}

}  // namespace rlx::cli
