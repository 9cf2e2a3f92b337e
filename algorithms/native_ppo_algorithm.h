// NativePpoAlgorithm: PPO with the torch-free learner (native/native_ppo_learner.h), for
// experiments with learner_backend: native. The same iteration as PpoAlgorithm (collect
// train_batch_size transitions, one update of num_epochs over minibatches, publish the weights)
// on one CPU learner, so `rlx` runs it without loading LibTorch. Its checkpoints are
// PpoAlgorithm's (native/ppo_state_file.h): either learner resumes or evaluates the other's.
#pragma once

#include <memory>
#include <optional>
#include <string>

#include "algorithms/algorithm.h"
#include "native/native_ppo_learner.h"

namespace rlx {

class NativePpoAlgorithm : public Algorithm {
 public:
  // Throws ConfigError / std::invalid_argument on settings the native learner cannot use.
  explicit NativePpoAlgorithm(const Experiment& experiment);

  WorkerSetup worker_setup() const override { return setup_; }
  std::shared_ptr<Weights> current_weights() const override { return learner_->weights(version_); }
  IterationResult train_iteration(Sampler& sampler, int64_t timesteps_done) override;
  std::vector<CheckpointFile> checkpoint_files() const override;
  nlohmann::json checkpoint_state() const override;
  void restore(const Checkpoint& checkpoint) override;
  std::unique_ptr<RolloutPolicy> evaluation_policy(bool deterministic, uint64_t seed) const override;
  // There are no learner ranks to follow: throws std::logic_error.
  void follow(const LearnerCommand& command) override;
  // 0 unless the failure came in the middle of an update (then nullopt), as PpoAlgorithm: an
  // update abandoned for an overdue stop was undone, and so consumed nothing.
  std::optional<int64_t> steps_of_failed_iteration() const override {
    return mid_update_ ? std::nullopt : std::optional<int64_t>(0);
  }

  NativePpoLearner& learner() { return *learner_; }

 private:
  WorkerSetup setup_;
  EnvSpec spec_;
  int64_t train_batch_size_;
  std::unique_ptr<NativePpoLearner> learner_;
  uint64_t version_ = 1;
  bool mid_update_ = false;  // an update began and neither finished nor was undone
};

}  // namespace rlx
