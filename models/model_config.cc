#include "models/model_config.h"

#include <stdexcept>

namespace rlx {

PolicyModelConfig PolicyModelConfig::for_env(const EnvSpec& spec) {
  PolicyModelConfig config;
  config.obs_size = spec.observation_space.size();
  config.action_space = spec.action_space;
  return config;
}

int64_t PolicyModelConfig::policy_output_size() const {
  return action_space.is_discrete() ? action_space.n : action_space.size();
}

void PolicyModelConfig::validate() const {
  if (obs_size <= 0) throw std::invalid_argument("policy model needs obs_size > 0, got " + std::to_string(obs_size));
  action_space.validate();
  for (int64_t width : hidden_sizes) {
    if (width <= 0) throw std::invalid_argument("policy model hidden size must be positive, got " + std::to_string(width));
  }
  if (activation != "tanh" && activation != "relu") {
    throw std::invalid_argument("unknown activation '" + activation + "' (expected tanh or relu)");
  }
}

}  // namespace rlx
