// How an algorithm joins a data-parallel learner group, and the command a rank >= 1 follows:
// the torch-free part of algorithms/data_parallel_link.h, so that the trainer and the Algorithm
// interface build without LibTorch.
#pragma once

#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/process_launcher.h"
#include "core/rank_placement.h"
#include "core/sample_batch.h"
#include "learner/rank_commands.h"

namespace rlx {

class LearnerGroupMember;  // learner/learner_group.h
class DataParallelLink;    // algorithms/data_parallel_link.h

// The file in a trial directory where an elastic group's rank 0 writes HOST:PORT for ranks that
// join later (`rlx learner --join-file TRIAL/learner_endpoint`).
constexpr const char* kLearnerJoinFileName = "learner_endpoint";

// How make_algorithm joins a data-parallel group.
struct DataParallelOptions {
  std::string program;                   // the rlx binary for ranks >= 1 (default: this executable)
  LearnerGroupMember* member = nullptr;  // set on ranks >= 1 (`rlx learner`)
  std::filesystem::path log_dir;         // the driver's ranks log to log_dir/learner_rank_<r>.log (empty: inherit)
  ProcessLauncher* launcher = nullptr;   // starts the driver's ranks (null: local fork/exec)
  // The driver's place in a group an engine started (srun, torchrun): no rank is spawned.
  std::optional<RankPlacement> placement;
  // A multi-agent run's driver: the link that started the group its policies share, and the
  // policy this algorithm learns for (its commands go to the ranks' learner of that policy).
  std::shared_ptr<DataParallelLink> shared_link;
  int policy = -1;
};

// One command from the driver to a rank.
struct LearnerCommand {
  RankCommand command;
  std::vector<SampleBatch> fragments;
};

}  // namespace rlx
