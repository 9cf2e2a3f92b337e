#include "envs/vector_env.h"

#include <algorithm>
#include <stdexcept>
#include <string>

namespace rlx {

VectorEnv::VectorEnv(const EnvFactory& factory, int num_envs, NonFinitePolicy non_finite) : non_finite_(non_finite) {
  if (num_envs < 1) throw std::invalid_argument("VectorEnv needs at least one env, got " + std::to_string(num_envs));
  envs_.reserve(static_cast<size_t>(num_envs));
  for (int i = 0; i < num_envs; ++i) envs_.push_back(factory());
  obs_size_ = observation_layout().float_slots;
  obs_bytes_ = observation_layout().byte_slots;
  const Space& actions = spec().action_space;
  if (actions.is_box()) {
    action_size_ = actions.size();
  } else {
    action_indices_ = actions.size();
    action_starts_ = action_starts(actions);
    action_scratch_.resize(action_starts_.size());
  }
  running_returns_.assign(static_cast<size_t>(num_envs), 0.0);
  if (non_finite_ == NonFinitePolicy::kDropEpisode) {
    last_obs_.resize(static_cast<size_t>(num_envs * obs_size_));
    last_obs_bytes_.resize(static_cast<size_t>(num_envs * obs_bytes_));
  }
}

namespace {

// Env i's rows of a [K, floats] and a [K, bytes] buffer.
ObsRow row_of(float* floats, int64_t float_slots, uint8_t* bytes, int64_t byte_slots, size_t i) {
  return ObsRow(floats + i * float_slots, bytes == nullptr ? nullptr : bytes + i * byte_slots);
}

// Copies one observation (both parts).
void copy_row(const ObsRow& from, const ObsRow& to, int64_t float_slots, int64_t byte_slots) {
  std::copy(from.floats, from.floats + float_slots, to.floats);
  if (byte_slots > 0) std::copy(from.bytes, from.bytes + byte_slots, to.bytes);
}

}  // namespace

void VectorEnv::reset(uint64_t seed, float* obs, uint8_t* obs_bytes) {
  if (obs_bytes_ > 0 && obs_bytes == nullptr) {
    throw std::invalid_argument("VectorEnv::reset for " + spec().id + " needs a buffer for its observations' bytes");
  }
  for (size_t i = 0; i < envs_.size(); ++i) {
    try {
      envs_[i]->reset(seed + i, row_of(obs, obs_size_, obs_bytes, obs_bytes_, i));
    } catch (const EnvOutputError& error) {
      throw EnvOutputError(error, "env " + std::to_string(i));
    }
    running_returns_[i] = 0.0;
  }
  if (!last_obs_.empty()) std::copy(obs, obs + last_obs_.size(), last_obs_.begin());
  if (!last_obs_bytes_.empty()) std::copy(obs_bytes, obs_bytes + last_obs_bytes_.size(), last_obs_bytes_.begin());
}

Action VectorEnv::action_of(const ActionBatch& actions, size_t i) {
  Action action;
  if (action_indices_ == 0) {
    action.values = actions.values + i * action_size_;
  } else if (spec().action_space.is_discrete()) {
    action.index = actions.indices[i] + action_starts_[0];
  } else {
    for (size_t d = 0; d < action_scratch_.size(); ++d) {
      action_scratch_[d] = actions.indices[i * action_scratch_.size() + d] + action_starts_[d];
    }
    action.indices = action_scratch_.data();
  }
  return action;
}

void VectorEnv::step(const ActionBatch& actions, const VectorStepBuffers& out) {
  const bool indexed = action_indices_ > 0;
  if (indexed ? actions.indices == nullptr : actions.values == nullptr) {
    throw std::invalid_argument("VectorEnv::step for " + spec().id + " needs " +
                                (indexed ? "discrete action indices" : "continuous action values"));
  }
  if (obs_bytes_ > 0 && (out.obs_bytes == nullptr || out.final_obs_bytes == nullptr)) {
    throw std::invalid_argument("VectorEnv::step for " + spec().id + " needs buffers for its observations' bytes");
  }
  for (size_t i = 0; i < envs_.size(); ++i) {
    const Action action = action_of(actions, i);
    const ObsRow obs = row_of(out.obs, obs_size_, out.obs_bytes, obs_bytes_, i);
    const bool keeps_last = non_finite_ == NonFinitePolicy::kDropEpisode;
    const ObsRow last_obs = !keeps_last ? ObsRow() : row_of(last_obs_.data(), obs_size_, last_obs_bytes_.data(), obs_bytes_, i);
    StepResult result;
    bool dropped = false;
    try {
      result = envs_[i]->step(action, obs);
    } catch (const NonFiniteEnvOutput& error) {
      if (non_finite_ != NonFinitePolicy::kDropEpisode) throw NonFiniteEnvOutput(error, "env " + std::to_string(i));
      // The episode ends here, as a truncation at the last finite observation.
      dropped = true;
      ++episodes_dropped_;
      copy_row(last_obs, obs, obs_size_, obs_bytes_);
      result = StepResult{0.0, false, true};
    } catch (const EnvOutputError& error) {
      throw EnvOutputError(error, "env " + std::to_string(i));
    }
    running_returns_[i] += result.reward;
    out.rewards[i] = static_cast<float>(result.reward);
    out.terminated[i] = result.terminated;
    out.truncated[i] = result.truncated;
    if (result.terminated || result.truncated) {
      copy_row(obs, row_of(out.final_obs, obs_size_, out.final_obs_bytes, obs_bytes_, i), obs_size_, obs_bytes_);
      if (out.episode_returns) out.episode_returns[i] = running_returns_[i];
      if (out.episode_lengths) out.episode_lengths[i] = dropped ? -1 : envs_[i]->elapsed_steps();
      running_returns_[i] = 0.0;
      try {
        envs_[i]->reset(std::nullopt, obs);
      } catch (const EnvOutputError& error) {
        throw EnvOutputError(error, "env " + std::to_string(i));
      }
    }
    if (keeps_last) copy_row(obs, last_obs, obs_size_, obs_bytes_);
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
  snapshot.last_obs_bytes = last_obs_bytes_;
  return snapshot;
}

void VectorEnv::restore(const Snapshot& snapshot) {
  if (snapshot.envs.size() != envs_.size() || snapshot.running_returns.size() != envs_.size() ||
      snapshot.last_obs.size() != last_obs_.size() || snapshot.last_obs_bytes.size() != last_obs_bytes_.size()) {
    throw std::invalid_argument("VectorEnv snapshot of " + std::to_string(snapshot.envs.size()) + " envs does not fit " +
                                std::to_string(envs_.size()) + " envs of " + spec().id);
  }
  for (size_t i = 0; i < envs_.size(); ++i) envs_[i]->restore(snapshot.envs[i]);
  running_returns_ = snapshot.running_returns;
  last_obs_ = snapshot.last_obs;
  last_obs_bytes_ = snapshot.last_obs_bytes;
}

}  // namespace rlx
