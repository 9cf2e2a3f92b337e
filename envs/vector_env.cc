#include "envs/vector_env.h"

#include <algorithm>
#include <stdexcept>
#include <string>

namespace rlx {

VectorEnv::VectorEnv(const EnvFactory& factory, int num_envs, NonFinitePolicy non_finite) : non_finite_(non_finite) {
  if (num_envs < 1) throw std::invalid_argument("VectorEnv needs at least one env, got " + std::to_string(num_envs));
  envs_.reserve(static_cast<size_t>(num_envs));
  for (int i = 0; i < num_envs; ++i) envs_.push_back(factory());
  obs_size_ = spec().observation_space.size();
  action_size_ = spec().action_space.size();
  running_returns_.assign(static_cast<size_t>(num_envs), 0.0);
  if (non_finite_ == NonFinitePolicy::kDropEpisode) last_obs_.resize(static_cast<size_t>(num_envs * obs_size_));
}

void VectorEnv::reset(uint64_t seed, float* obs) {
  for (size_t i = 0; i < envs_.size(); ++i) {
    try {
      envs_[i]->reset(seed + i, obs + i * obs_size_);
    } catch (const EnvOutputError& error) {
      throw EnvOutputError(error, "env " + std::to_string(i));
    }
    running_returns_[i] = 0.0;
  }
  if (!last_obs_.empty()) std::copy(obs, obs + last_obs_.size(), last_obs_.begin());
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
    float* last_obs = last_obs_.empty() ? nullptr : last_obs_.data() + i * obs_size_;
    StepResult result;
    bool dropped = false;
    try {
      result = envs_[i]->step(action, obs);
    } catch (const NonFiniteEnvOutput& error) {
      if (non_finite_ != NonFinitePolicy::kDropEpisode) throw NonFiniteEnvOutput(error, "env " + std::to_string(i));
      // The episode ends here, as a truncation at the last finite observation.
      dropped = true;
      ++episodes_dropped_;
      std::copy(last_obs, last_obs + obs_size_, obs);
      result = StepResult{0.0, false, true};
    } catch (const EnvOutputError& error) {
      throw EnvOutputError(error, "env " + std::to_string(i));
    }
    running_returns_[i] += result.reward;
    out.rewards[i] = static_cast<float>(result.reward);
    out.terminated[i] = result.terminated;
    out.truncated[i] = result.truncated;
    if (result.terminated || result.truncated) {
      std::copy(obs, obs + obs_size_, out.final_obs + i * obs_size_);
      if (out.episode_returns) out.episode_returns[i] = running_returns_[i];
      if (out.episode_lengths) out.episode_lengths[i] = dropped ? -1 : envs_[i]->elapsed_steps();
      running_returns_[i] = 0.0;
      try {
        envs_[i]->reset(std::nullopt, obs);
      } catch (const EnvOutputError& error) {
        throw EnvOutputError(error, "env " + std::to_string(i));
      }
    }
    if (last_obs) std::copy(obs, obs + obs_size_, last_obs);
  }
}

std::optional<VectorEnv::Snapshot> VectorEnv::snapshot() const {
  Snapshot snapshot;
  for (const auto& env : envs_) {
    std::optional<EnvSnapshot> one = env->snapshot();
    if (!one) return std::nullopt;
    snapshot.envs.push_back(std::move(*one));
  }
  snapshot.running_returns = running_returns_;
  snapshot.last_obs = last_obs_;
  return snapshot;
}

void VectorEnv::restore(const Snapshot& snapshot) {
  if (snapshot.envs.size() != envs_.size() || snapshot.running_returns.size() != envs_.size() ||
      snapshot.last_obs.size() != last_obs_.size()) {
    throw std::invalid_argument("VectorEnv snapshot of " + std::to_string(snapshot.envs.size()) + " envs does not fit " +
                                std::to_string(envs_.size()) + " envs of " + spec().id);
  }
  for (size_t i = 0; i < envs_.size(); ++i) envs_[i]->restore(snapshot.envs[i]);
  running_returns_ = snapshot.running_returns;
  last_obs_ = snapshot.last_obs;
}

}  // namespace rlx
