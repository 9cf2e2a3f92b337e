#include "rollout/policy_factory.h"

namespace rlx {

std::unique_ptr<RolloutPolicy> make_rollout_policy(const WorkerSetup& setup, const EnvSpec& spec) {
  const PolicyModelConfig config = setup.model_config(spec);
  if (setup.policy_kind == RolloutPolicyKind::kActorCritic) {
    return std::make_unique<ActorCriticPolicy>(config, setup.worker_seed(), setup.deterministic, setup.behaviour_values);
  }
  if (setup.policy_kind == RolloutPolicyKind::kSquashedGaussian) {
    return std::make_unique<SquashedGaussianPolicy>(config, setup.deterministic ? 0.0 : setup.epsilon,
                                                    setup.worker_seed(), setup.deterministic);
  }
  return std::make_unique<EpsilonGreedyQPolicy>(config, setup.initial_epsilon(), setup.worker_seed());
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
