// Helpers for the training tests: a run in-process, quietly, as trial "trial".
#pragma once

#include <filesystem>
#include <optional>
#include <string>

#include "algorithms/make_algorithm.h"
#include "algorithms/trainer.h"

namespace rlx::test {

// An experiment of `algorithm` on `env` with the schema's defaults, from source "test.yaml".
inline Experiment experiment_on(const std::string& env, AlgorithmKind algorithm = AlgorithmKind::kPPO) {
  Experiment experiment;
  experiment.name = "test";
  experiment.source = "test.yaml";
  experiment.env = env;
  experiment.algorithm = algorithm;
  experiment.config.apply_algorithm_defaults(algorithm);
  return experiment;
}

// Trains `experiment` into OUTPUT/<experiment>/trial (or continues `resume`), without the
// progress line; worker processes, if any, run this build's `rlx worker`.
inline TrainOutcome train_quietly(const Experiment& experiment, const std::filesystem::path& output,
                                  std::optional<std::filesystem::path> resume = std::nullopt) {
  TrainOptions options;
  options.make_algorithm = [](const Experiment& e, const DataParallelOptions& o) { return make_algorithm(e, o); };
  options.experiment = experiment;
  options.output_root = output;
  options.trial_name = "trial";
  options.progress = false;
  options.resume = std::move(resume);
  options.worker_program = std::string(RLX_BINARY_DIR) + "/rlx";
  return run_training(options);
}

}  // namespace rlx::test
