// LocalSampler: one VectorEnv and one RolloutPolicy in the learner's process; collect() steps
// them synchronously, so a seed fixes the whole run (num_workers: 0).
#pragma once

#include <memory>

#include "algorithms/sampler.h"
#include "envs/vector_env.h"
#include "models/rollout_policy.h"
#include "rollout/weight_delay.h"
#include "rollout/worker_setup.h"

namespace rlx {

class LocalSampler : public Sampler {
 public:
  // Builds the envs and policy from the setup (as a worker would from its Welcome); throws
  // std::invalid_argument for an unknown env or a bad network.
  explicit LocalSampler(const WorkerSetup& setup);

  // The sampler is reused by name in messages.
  static constexpr const char* kName = "in-process sampler (num_workers: 0)";

  void publish(std::shared_ptr<const Weights> weights) override;
  // Steps fragments until min_transitions; throws StopRequested between fragments once a stop
  // signal is overdue (core/stop_signal.h), and the env's errors named with this sampler.
  std::vector<SampleBatch> collect(int64_t min_transitions) override;
  std::vector<FinishedEpisode> take_episodes() override;
  SamplerStats stats() const override { return stats_; }
  // {"env_id", "num_envs", "collector": {...}, "episodes_dropped_nonfinite"}; null when an env
  // cannot snapshot itself.
  nlohmann::json checkpoint_state() const override;
  void restore(const nlohmann::json& state) override;

 private:
  WorkerSetup setup_;
  SamplerStats stats_;
  std::unique_ptr<RolloutPolicy> policy_;
  std::unique_ptr<FragmentCollector> collector_;
  WeightDelay weight_delay_;  // the setup's weight_delay
};

}  // namespace rlx
