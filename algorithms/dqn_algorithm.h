// DqnAlgorithm: DQN's iteration (fragments into replay; training rounds of gradient_steps as
// train_freq env steps arrive, counted on received transitions so the replay ratio holds with
// any number of workers; weights published after every round, the exploration rate whenever it moves) and
// its checkpoint state.
#pragma once

#include <memory>

#include "algorithms/algorithm.h"
#include "algorithms/data_parallel_link.h"
#include "learner/dqn_learner.h"

namespace rlx {

// Env steps per DQN training iteration (one results row), as RLlib's
// min_sample_timesteps_per_iteration.
constexpr int64_t kDqnStepsPerIteration = 1000;

class DqnAlgorithm : public Algorithm {
 public:
  // With num_learners > 1 (or a member in options) each rank keeps a replay shard: the driver
  // deals fragments round-robin, every rank samples batch_size / M per gradient step, and the
  // training rounds stay counted on the driver's global env steps (the replay ratio holds).
  explicit DqnAlgorithm(const Experiment& experiment, const DataParallelOptions& options = {});

  WorkerSetup worker_setup() const override { return setup_; }
  std::shared_ptr<Weights> current_weights() const override;
  IterationResult train_iteration(Sampler& sampler, int64_t timesteps_done) override;
  std::vector<CheckpointFile> checkpoint_files() const override;
  nlohmann::json write_replay_segments(const std::filesystem::path& replay_dir) override;
  nlohmann::json checkpoint_state() const override;
  void restore(const Checkpoint& checkpoint) override;
  std::unique_ptr<RolloutPolicy> evaluation_policy(bool deterministic, uint64_t seed) const override;
  void follow(const LearnerCommand& command) override;

  DqnLearner& learner() { return *learner_; }

  // The env steps this iteration stored before it failed, unless a data-parallel step failed
  // between ranks (then nullopt). The learner stops before a non-finite step, and between whole
  // gradient steps for an overdue stop, so after either the state is sound.
  std::optional<int64_t> steps_of_failed_iteration() const override {
    return mid_step_ ? std::nullopt : std::optional<int64_t>(iteration_steps_);
  }

 private:
  WorkerSetup setup_;
  EnvSpec spec_;
  std::unique_ptr<DqnLearner> learner_;
  uint64_t version_ = 1;
  int64_t received_ = 0;  // transitions received, the clock of training rounds and schedules
  std::unique_ptr<DataParallelLink> link_;
  bool synced_ = false;     // the ranks hold the driver's weights and state
  int64_t iteration_steps_ = 0;  // env steps stored in the current iteration
  bool checkpoint_replay_buffer_ = true;
  static constexpr const char* kReplayFileName = "replay_buffer.bin";  // checkpoints from before segments
  std::vector<ReplaySegmentLog> shard_logs_;  // rank 0: what it stored of each rank's replay shard ([0] unused)
  std::vector<CheckpointFile> replay_rests_;  // each shard's n-step windows and priorities, of the last write_replay_segments
  bool mid_step_ = false;        // a data-parallel store-and-train began and neither finished nor failed cleanly
  double published_epsilon_ = -1.0;  // the epsilon last published (-1: none yet)
  uint64_t dealt_ = 0;      // fragments dealt to ranks so far (round-robin)

  // Restores each learner's replay (dqn_replay_checkpoint.cc); a checkpoint of another number of
  // learners leaves it empty, with a warning.
  void restore_replay(const Checkpoint& checkpoint);
  // The training rounds every rank runs (collective when data-parallel); true when they ran.
  bool train_rounds(int64_t rounds, int64_t timesteps, DqnUpdateMetrics& last);
};

}  // namespace rlx
