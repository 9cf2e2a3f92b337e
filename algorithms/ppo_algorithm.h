// PpoAlgorithm: PPO's iteration (collect train_batch_size transitions, one PpoLearner update
// of num_epochs over minibatches, publish the new weights) and its checkpoint state.
#pragma once

#include <memory>

#include "algorithms/algorithm.h"
#include "learner/ppo_learner.h"

namespace rlx {

// The PpoConfig an experiment asks for.
PpoConfig ppo_config_from(const Experiment& experiment);

class PpoAlgorithm : public Algorithm {
 public:
  explicit PpoAlgorithm(const Experiment& experiment);

  WorkerSetup worker_setup() const override { return setup_; }
  std::shared_ptr<Weights> current_weights() const override { return learner_->weights(version_); }
  IterationResult train_iteration(Sampler& sampler, int64_t timesteps_done) override;
  std::vector<CheckpointFile> checkpoint_files() const override;
  nlohmann::json checkpoint_state() const override;
  void restore(const Checkpoint& checkpoint) override;
  std::unique_ptr<RolloutPolicy> evaluation_policy(bool deterministic, uint64_t seed) const override;

  PpoLearner& learner() { return *learner_; }

 private:
  WorkerSetup setup_;
  EnvSpec spec_;
  int64_t train_batch_size_;
  std::unique_ptr<PpoLearner> learner_;
  uint64_t version_ = 1;
};

}  // namespace rlx
