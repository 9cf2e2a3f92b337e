#include "models/policy.h"

#include <algorithm>

#include "models/policy_file.h"
#include "models/rollout_policy.h"

namespace rlx {

namespace {

// The worker policy a file's kind runs (models/rollout_policy.h), with the file's weights and
// observation statistics: deterministic (argmax / mean / greedy) or sampling.
std::unique_ptr<RolloutPolicy> make_policy(const PolicyFile& file, bool deterministic, uint64_t seed) {
  std::unique_ptr<RolloutPolicy> policy;
  switch (file.model.kind) {
    case ModelKind::kActorCritic:
      policy = std::make_unique<ActorCriticPolicy>(file.model, seed, deterministic, /*values=*/false);
      break;
    case ModelKind::kQNetwork:
      policy = std::make_unique<EpsilonGreedyQPolicy>(file.model, deterministic ? 0.0 : file.epsilon, seed);
      break;
    case ModelKind::kSquashedGaussian:
      policy = std::make_unique<SquashedGaussianPolicy>(file.model, 0.0, seed, deterministic);
      break;
  }
  policy->load_weights(file.parameters.data(), file.parameters.size(), 0);
  if (!file.obs_mean.empty()) policy->set_obs_normalizer(file.obs_mean, file.obs_var, file.obs_count);
  return policy;
}

}  // namespace

struct Policy::Impl {
  std::string env_id, algorithm;
  Space action_space;
  std::unique_ptr<RolloutPolicy> deterministic, stochastic;
  // act()'s scratch: the sampled log-probability an actor-critic reports, and raw Box actions.
  float log_prob = 0;
  std::vector<float> values;
};

Policy::Policy(const std::string& path, uint64_t seed) : impl_(std::make_unique<Impl>()) {
  const PolicyFile file = read_policy_file(path);
  impl_->env_id = file.env_id;
  impl_->algorithm = file.algorithm;
  impl_->action_space = file.model.action_space;
  try {
    impl_->deterministic = make_policy(file, true, seed);
    impl_->stochastic = make_policy(file, false, seed);
  } catch (const std::invalid_argument& error) {
    throw PolicyFileError(path + ": " + error.what());
  }
  impl_->values.resize(impl_->action_space.is_box() ? static_cast<size_t>(impl_->action_space.size()) : 0);
}

Policy::~Policy() = default;
Policy::Policy(Policy&&) noexcept = default;
Policy& Policy::operator=(Policy&&) noexcept = default;

PolicyAction Policy::act(const std::vector<float>& observation, bool deterministic) {
  return act(observation.data(), observation.size(), deterministic);
}

PolicyAction Policy::act(const float* observation, size_t size, bool deterministic) {
  if (observation == nullptr || size != static_cast<size_t>(observation_size())) {
    throw std::invalid_argument("Policy::act needs an observation of " + std::to_string(observation_size()) +
                                " floats, got " + std::to_string(size));
  }
  RolloutPolicy& policy = deterministic ? *impl_->deterministic : *impl_->stochastic;
  PolicyAction action;
  ActOutput out{&action.index, impl_->values.data(), policy.has_policy_outputs() ? &impl_->log_prob : nullptr, nullptr};
  policy.act(observation, 1, out);
  const Space& space = impl_->action_space;
  if (space.is_box()) {  // what rlx evaluate sends the env: the action clipped to the Box
    action.values.resize(impl_->values.size());
    for (size_t j = 0; j < impl_->values.size(); ++j) {
      action.values[j] = std::clamp(impl_->values[j], space.low[j], space.high[j]);
    }
  }
  return action;
}

int64_t Policy::observation_size() const { return impl_->deterministic->obs_size(); }

bool Policy::discrete_actions() const { return impl_->action_space.is_discrete(); }

int64_t Policy::action_size() const {
  return impl_->action_space.is_discrete() ? impl_->action_space.n : impl_->action_space.size();
}

const std::vector<float>& Policy::action_low() const { return impl_->action_space.low; }

const std::vector<float>& Policy::action_high() const { return impl_->action_space.high; }

const std::string& Policy::env_id() const { return impl_->env_id; }

const std::string& Policy::algorithm() const { return impl_->algorithm; }

}  // namespace rlx
