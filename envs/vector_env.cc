#include "envs/vector_env.h"

#include <algorithm>
#include <stdexcept>
#include <string>

namespace rlx {

VectorEnv::VectorEnv(const EnvFactory& factory, int num_envs) {
  if (num_envs < 1) throw std::invalid_argument("VectorEnv needs at least one env, got " + std::to_string(num_envs));
  envs_.reserve(static_cast<size_t>(num_envs));
  for (int i = 0; i < num_envs; ++i) envs_.push_back(factory());
  obs_size_ = spec().observation_space.size();
  action_size_ = spec().action_space.size();
  running_returns_.assign(static_cast<size_t>(num_envs), 0.0);
}

void VectorEnv::reset(uint64_t seed, float* obs) {
  for (size_t i = 0; i < envs_.size(); ++i) {
    envs_[i]->reset(seed + i, obs + i * obs_size_);
    running_returns_[i] = 0.0;
  }
}

void VectorEnv::step(const ActionBatch& actions, const VectorStepBuffers& out) {
  const bool discrete = spec().action_space.is_discrete();
  if (discrete ? actions.indices == nullptr : actions.values == nullptr) {
    throw std::invalid_argument("VectorEnv::step for " + spec().id + " needs " +
                                (discrete ? "discrete action indices" : "continuous action values"));
  }
  for (size_t i = 0; i < envs_.size(); ++i) {
    Action action;
    if (discrete) {
      action.index = actions.indices[i];
    } else {
      action.values = actions.values + i * action_size_;
    }
    float* obs = out.obs + i * obs_size_;
    const StepResult result = envs_[i]->step(action, obs);
    running_returns_[i] += result.reward;
    out.rewards[i] = static_cast<float>(result.reward);
    out.terminated[i] = result.terminated;
    out.truncated[i] = result.truncated;
    if (result.terminated || result.truncated) {
      std::copy(obs, obs + obs_size_, out.final_obs + i * obs_size_);
      if (out.episode_returns) out.episode_returns[i] = running_returns_[i];
      if (out.episode_lengths) out.episode_lengths[i] = envs_[i]->elapsed_steps();
      running_returns_[i] = 0.0;
      envs_[i]->reset(std::nullopt, obs);
    }
  }
}

}  // namespace rlx
