// `rlx train`, shared by both executables: `rlx` trains learner_backend: native experiments
// itself (no LibTorch loaded) and hands every other run to rlx-torch, which trains them all.
#pragma once

#include <string>
#include <vector>

#include "algorithms/algorithm.h"
#include "core/rank_placement.h"

namespace rlx::cli {

// What the executable running `rlx train` can do.
struct TrainBackend {
  // Whether this executable trains the experiment (null: every one); when not, hand_over runs
  // the whole command line instead, before anything is written.
  bool (*runs)(const Experiment& experiment) = nullptr;
  int (*hand_over)(const std::vector<std::string>& args) = nullptr;
  // Builds the run's algorithm.
  AlgorithmFactory make_algorithm;
  // A learner rank >= 1 that srun or torchrun started: joins rank 0 and follows it (null: runs
  // placed in a group of several are handed over).
  int (*follow_placed_rank)(const RankPlacement& placement) = nullptr;
};

// `rlx train FILE.yaml ...` (args exclude "rlx train") run with `backend`; the exit status.
int run_train(const std::vector<std::string>& args, const TrainBackend& backend);

}  // namespace rlx::cli
