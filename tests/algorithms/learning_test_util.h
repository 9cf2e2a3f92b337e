// Training the tuned examples of experiments/ from a test (tests/algorithms/*learning_test.cc).
#pragma once

#include <unistd.h>

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "algorithms/evaluation.h"
#include "algorithms/trainer.h"
#include "core/experiment.h"
#include "tests/algorithms/train_util.h"

namespace rlx {

// Trains experiments/FILE with the overrides into a temporary directory; with evaluation set,
// also evaluates the final checkpoint deterministically over 20 episodes into it.
inline TrainOutcome train_example(const std::string& file, const std::vector<std::string>& overrides,
                                  std::optional<EvaluationResult>* evaluation = nullptr) {
  char pattern[] = "/tmp/rlx-learning-test-XXXXXX";
  const std::filesystem::path output = ::mkdtemp(pattern);
  TrainOutcome outcome = test::train_quietly(
      load_experiment(std::filesystem::path(RLX_SOURCE_DIR) / "experiments" / file, "", overrides), output);
  if (evaluation && outcome.last_checkpoint) {
    EvaluationOptions evaluate;
    evaluate.checkpoint = *outcome.last_checkpoint;
    evaluate.episodes = 20;
    evaluate.deterministic = true;
    *evaluation = evaluate_checkpoint(evaluate);
  }
  std::filesystem::remove_all(output);
  INFO(file << " stopped by " << outcome.stopped_by << ": " << outcome.final_row.dump());
  return outcome;
}

}  // namespace rlx
