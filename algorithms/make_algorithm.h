// The factory of every algorithm rlx trains, LibTorch's learners included (the torch-free
// `rlx` builds only native ones: algorithms/native_algorithms.h).
#pragma once

#include <memory>

#include "algorithms/algorithm.h"

namespace rlx {

// PPO, APPO, DQN or SAC for the experiment, learning on its `device` (learner_backend: native
// builds the torch-free PPO learner, and SAC always has its torch-free one); with num_learners > 1 the driver starts the data-parallel group
// (options.program) and a member in options makes this a learner rank >= 1. Throws ConfigError /
// std::invalid_argument on settings the algorithm cannot use.
std::unique_ptr<Algorithm> make_algorithm(const Experiment& experiment, const DataParallelOptions& options = {});

// A learner rank >= 1 (`rlx learner`): builds the algorithm from the driver's payload and
// follows its commands until it says stop. Throws CommunicatorError when the driver is gone.
void run_learner_rank(LearnerGroupMember& member);

}  // namespace rlx
