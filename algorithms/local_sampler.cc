#include "algorithms/local_sampler.h"

#include "envs/registry.h"
#include "rollout/policy_factory.h"

namespace rlx {

LocalSampler::LocalSampler(const WorkerSetup& setup) {
  auto envs = std::make_unique<VectorEnv>(global_env_registry().factory(setup.env_id), setup.num_envs);
  policy_ = make_rollout_policy(setup, envs->spec());
  collector_ = std::make_unique<FragmentCollector>(std::move(envs), *policy_, setup.fragment_length,
                                                   setup.worker_seed());
}

void LocalSampler::publish(std::shared_ptr<const Weights> weights) { apply_weights(*policy_, *weights); }

std::vector<SampleBatch> LocalSampler::collect(int64_t min_transitions) {
  std::vector<SampleBatch> batches;
  int64_t transitions = 0;
  do {
    batches.emplace_back();
    collector_->collect(batches.back());
    transitions += batches.back().num_transitions();
  } while (transitions < min_transitions);
  return batches;
}

std::vector<FinishedEpisode> LocalSampler::take_episodes() { return collector_->take_finished_episodes(); }

}  // namespace rlx
