// LocalSampler: one VectorEnv and one RolloutPolicy in the learner's process; collect() steps
// them synchronously, so a seed fixes the whole run (num_workers: 0).
#pragma once

#include <memory>

#include "algorithms/sampler.h"
#include "envs/vector_env.h"
#include "rollout/rollout_policy.h"
#include "rollout/worker_setup.h"

namespace rlx {

class LocalSampler : public Sampler {
 public:
  // Builds the envs and policy from the setup (as a worker would from its Welcome); throws
  // std::invalid_argument for an unknown env or a bad network.
  explicit LocalSampler(const WorkerSetup& setup);

  void publish(std::shared_ptr<const Weights> weights) override;
  std::vector<SampleBatch> collect(int64_t min_transitions) override;
  std::vector<FinishedEpisode> take_episodes() override;
  SamplerStats stats() const override { return {}; }

 private:
  std::unique_ptr<RolloutPolicy> policy_;
  std::unique_ptr<FragmentCollector> collector_;
};

}  // namespace rlx
