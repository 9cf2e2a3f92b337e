#include "rollout/policy_factory.h"

namespace rlx {

std::unique_ptr<RolloutPolicy> make_rollout_policy(const WorkerSetup& setup, const EnvSpec& spec) {
  const ModelSpec& model = setup.model_for(spec);
  switch (model.kind) {
    case ModelKind::kActorCritic:
      return std::make_unique<ActorCriticPolicy>(model, setup.worker_seed(), setup.deterministic,
                                                 setup.behaviour_values);
    case ModelKind::kSquashedGaussian:
      return std::make_unique<SquashedGaussianPolicy>(model, setup.deterministic ? 0.0 : setup.epsilon,
                                                      setup.worker_seed(), setup.deterministic);
    case ModelKind::kQNetwork:
      break;
  }
  return std::make_unique<EpsilonGreedyQPolicy>(model, setup.initial_epsilon(), setup.worker_seed());
}

void apply_weights(RolloutPolicy& policy, const Weights& weights) {
  policy.load_weights(weights.params.data(), weights.params.size(), weights.policy_version);
  if (!weights.obs_mean.empty()) {
    policy.set_obs_normalizer(std::vector<float>(weights.obs_mean.begin(), weights.obs_mean.end()),
                              std::vector<float>(weights.obs_var.begin(), weights.obs_var.end()), weights.obs_count);
  }
  if (weights.epsilon) {
    if (auto* greedy = dynamic_cast<EpsilonGreedyQPolicy*>(&policy)) greedy->set_epsilon(*weights.epsilon);
    if (auto* squashed = dynamic_cast<SquashedGaussianPolicy*>(&policy)) squashed->set_epsilon(*weights.epsilon);
  }
}

}  // namespace rlx
