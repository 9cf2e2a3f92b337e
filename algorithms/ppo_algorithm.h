// PpoAlgorithm: PPO's iteration (collect train_batch_size transitions, one PpoLearner update
// of num_epochs over minibatches, publish the new weights) and its checkpoint state.
#pragma once

#include <chrono>
#include <memory>

#include "algorithms/algorithm.h"
#include "algorithms/data_parallel_link.h"
#include "learner/data_parallel.h"
#include "learner/parameter_server.h"
#include "learner/ppo_learner.h"

namespace rlx {

class PpoAlgorithm : public Algorithm {
 public:
  // With num_learners > 1 (or a member in options) the update runs data-parallel: the driver
  // scales the rewards of the whole batch, gives each rank consecutive fragments (split by envs
  // when there are fewer fragments than ranks) and every rank runs its share of the update.
  explicit PpoAlgorithm(const Experiment& experiment, const DataParallelOptions& options = {});

  WorkerSetup worker_setup() const override { return setup_; }
  std::shared_ptr<Weights> current_weights() const override { return learner_->weights(version_); }
  IterationResult train_iteration(Sampler& sampler, int64_t timesteps_done) override;
  std::vector<CheckpointFile> checkpoint_files() const override;
  nlohmann::json checkpoint_state() const override;
  void restore(const Checkpoint& checkpoint) override;
  std::unique_ptr<RolloutPolicy> evaluation_policy(bool deterministic, uint64_t seed) const override;
  void follow(const LearnerCommand& command) override;

  PpoLearner& learner() { return *learner_; }

  // 0 unless the failure came in the middle of an update (then nullopt): a failed update that
  // the learner undid (non-finite loss or gradient, or abandoned for an overdue stop), or a failed
  // collection, consumed nothing.
  std::optional<int64_t> steps_of_failed_iteration() const override {
    return mid_update_ ? std::nullopt : std::optional<int64_t>(0);
  }

 protected:
  // With the learner's hyperparameters given (APPO's carry its V-trace and KL settings).
  PpoAlgorithm(const Experiment& experiment, const DataParallelOptions& options, PpoConfig config);

  // One learner update on the fragments, data-parallel when the run is; tracks mid_update_.
  // scatter_s: time the driver took to shard and send them (0 on one learner).
  PpoUpdateMetrics update_learner(const std::vector<SampleBatch>& batches, int64_t timesteps_done, double& scatter_s);
  // The learner columns of a results row (ppo_learner_columns, plus the data-parallel ones).
  nlohmann::json learner_columns(const PpoUpdateMetrics& m, double scatter_s) const;

  // The driver's side of a data-parallel update (scatter_s: time to shard and send); an elastic
  // group's is redone on the re-formed group after a rank is lost.
  PpoUpdateMetrics data_parallel_update(const std::vector<SampleBatch>& batches, int64_t timesteps_done, double& scatter_s);
  // learner_sync: parameter_server (ppo_server_update.cc): the driver serves the update's tasks
  // to every rank (itself too, from a thread with a learner of its own) and applies each gradient
  // to its learner, the master, as it arrives.
  PpoUpdateMetrics server_update(const std::vector<SampleBatch>& batches, int64_t timesteps_done, double& scatter_s);
  // Any rank: computes the tasks the server hands out for `iteration` on `learner`.
  void run_server_tasks(PpoLearner& learner, const std::vector<SampleBatch>& batches, int64_t timesteps_done,
                        int64_t iteration);
  // The server (driver) or this rank's client, made on first use.
  void start_parameter_server();
  ParameterClient& parameter_client();
  // One attempt: the ranks synced to this generation, the scaled batch sharded, sent and trained on.
  PpoUpdateMetrics sharded_update(const std::vector<SampleBatch>& scaled, int64_t timesteps_done, double& scatter_s);

  WorkerSetup setup_;
  EnvSpec spec_;
  int64_t train_batch_size_;
  std::unique_ptr<PpoLearner> learner_;
  uint64_t version_ = 1;
  std::unique_ptr<DataParallelLink> link_;
  int64_t synced_generation_ = -1;  // the group generation whose ranks hold the driver's weights and state
  int64_t elastic_retries_ = 0;     // updates redone after the elastic group lost a rank
  // learner_sync: parameter_server.
  bool parameter_server_ = false;
  bool remote_ranks_ = false;       // an engine placed the ranks on hosts of their own
  std::string server_host_;         // then: rank 0's address, where the server listens
  int64_t max_staleness_ = 0;
  std::chrono::milliseconds timeout_{60000};
  PpoConfig learner_config_;        // the learners' (the driver's own computing rank gets one too)
  Straggler straggler_;
  std::unique_ptr<zmq::context_t> ps_context_;
  std::unique_ptr<ParameterServer> server_;
  std::unique_ptr<PpoLearner> task_learner_;  // the driver's own computing rank
  std::unique_ptr<ParameterClient> client_;
  int64_t ps_iteration_ = 0;
  ParameterServerIteration last_iteration_;
  bool mid_update_ = false;  // an update began and neither finished nor was undone
};

}  // namespace rlx
