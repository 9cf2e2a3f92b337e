// Helpers for the training tests: a run in-process, quietly, as trial "trial".
#pragma once

#include <filesystem>
#include <optional>

#include "algorithms/make_algorithm.h"
#include "algorithms/trainer.h"

namespace rlx::test {

// Trains `experiment` into OUTPUT/<experiment>/trial (or continues `resume`), without the
// progress line.
inline TrainOutcome train_quietly(const Experiment& experiment, const std::filesystem::path& output,
                                  std::optional<std::filesystem::path> resume = std::nullopt) {
  TrainOptions options;
  options.make_algorithm = [](const Experiment& e, const DataParallelOptions& o) { return make_algorithm(e, o); };
  options.experiment = experiment;
  options.output_root = output;
  options.trial_name = "trial";
  options.progress = false;
  options.resume = std::move(resume);
  return run_training(options);
}

}  // namespace rlx::test
