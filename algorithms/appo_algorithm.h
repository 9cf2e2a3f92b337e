// AppoAlgorithm: asynchronous PPO (APPO; IMPALA's V-trace with PPO's clipped surrogate, as
// RLlib's APPO). Workers never wait for an update: each may hold enough fragments in flight or
// queued for its share of learner_queue_size train batches, the learner trains on whatever has
// arrived (up to max_policy_lag versions old) and publishes its weights every
// broadcast_interval updates. V-trace corrects for the lag between the workers' policy mu and
// the learner's pi; an optional KL term pulls pi towards a target network. Every fragment's lag
// (learner version - fragment's version) is recorded: mean, max and a histogram per iteration.
#pragma once

#include <cstdint>
#include <vector>

#include <nlohmann/json.hpp>

#include "algorithms/ppo_algorithm.h"

namespace rlx {

// PPO's learner hyperparameters with APPO's V-trace and KL settings (algorithms read `ppo`
// and `appo` from an experiment's config).
PpoConfig appo_learner_config(const PpoConfig& ppo, const AppoConfig& appo);

// Per-iteration lag statistics of the fragments trained on: {"mean", "max", "histogram"}, the
// histogram a list of {"lag", "fragments"} over the buckets "0", "1", "2-3", "4-7", "8-15",
// "16-31", "32-63", "64+" in that order.
nlohmann::json policy_lag_json(const std::vector<uint64_t>& lags);

class AppoAlgorithm : public PpoAlgorithm {
 public:
  explicit AppoAlgorithm(const Experiment& experiment, const DataParallelOptions& options = {});

  // Trains on the next train_batch_size transitions that arrive, whatever their lag; publishes
  // when broadcast_interval updates have passed since the last publication.
  IterationResult train_iteration(Sampler& sampler, int64_t timesteps_done) override;
  int worker_credits(int64_t num_workers) const override;
  void restore(const Checkpoint& checkpoint) override;

 private:
  AppoConfig appo_;
  uint64_t last_published_ = 1;    // the version workers were sent last
};

}  // namespace rlx
