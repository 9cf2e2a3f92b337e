// SacAlgorithm: SAC's iteration on the torch-free learner (native/sac_learner.h), so `rlx` trains
// it without loading LibTorch. Fragments go into the replay; as each arrives, the gradient steps
// due at utd_ratio per env step past learning_starts are taken, and the new policy is published
// (workers act with the current weights, as DQN's do). Until learning_starts transitions are
// stored the workers act uniformly at random (the published exploration rate is 1, then 0).
#pragma once

#include <memory>
#include <optional>

#include "algorithms/algorithm.h"
#include "native/sac_learner.h"

namespace rlx {

// Env steps per SAC training iteration (one results row).
constexpr int64_t kSacStepsPerIteration = 1000;

class SacAlgorithm : public Algorithm {
 public:
  // Throws ConfigError on settings SAC cannot use (another device, several learners, Discrete
  // actions), std::invalid_argument on a bad model config.
  explicit SacAlgorithm(const Experiment& experiment);

  WorkerSetup worker_setup() const override { return setup_; }
  std::shared_ptr<Weights> current_weights() const override;
  IterationResult train_iteration(Sampler& sampler, int64_t timesteps_done) override;
  std::vector<CheckpointFile> checkpoint_files() const override;
  nlohmann::json write_replay_segments(const std::filesystem::path& replay_dir) override;
  nlohmann::json checkpoint_state() const override;
  void restore(const Checkpoint& checkpoint) override;
  std::unique_ptr<RolloutPolicy> evaluation_policy(bool deterministic, uint64_t seed) const override;
  // There are no learner ranks to follow: throws std::logic_error.
  void follow(const LearnerCommand& command) override;
  // The learner stops before a step whose loss or gradient is not finite, and between whole steps
  // for an overdue stop (the steps not taken stay due), so the transitions this iteration stored
  // are a sound state.
  std::optional<int64_t> steps_of_failed_iteration() const override { return iteration_steps_; }

  NativeSacLearner& learner() { return *learner_; }

 private:
  // 1 while the replay holds fewer than learning_starts transitions (uniform actions), then 0.
  double exploration_rate() const;

  WorkerSetup setup_;
  EnvSpec spec_;
  std::unique_ptr<NativeSacLearner> learner_;
  uint64_t version_ = 1;
  int64_t received_ = 0;         // transitions received, the clock of gradient steps
  int64_t iteration_steps_ = 0;  // env steps stored in the current iteration
  double published_rate_ = -1;   // the exploration rate last published (-1: none yet)
  static constexpr const char* kLearnerFileName = "sac_learner.bin";
  static constexpr const char* kReplayFileName = "replay_buffer.bin";
};

}  // namespace rlx
