#include "rollout/fragment_collector.h"

#include <algorithm>
#include <stdexcept>
#include <string>
#include <utility>

namespace rlx {

namespace {

VectorEnv& checked(const std::unique_ptr<VectorEnv>& envs) {
  if (!envs) throw std::invalid_argument("FragmentCollector got a null VectorEnv");
  return *envs;
}

}  // namespace

FragmentCollector::FragmentCollector(std::unique_ptr<VectorEnv> envs, RolloutPolicy& policy, int fragment_length,
                                     uint64_t seed)
    : FragmentCollector(checked(envs), policy, fragment_length, seed) {
  owned_ = std::move(envs);
}

FragmentCollector::FragmentCollector(VectorEnv& envs, RolloutPolicy& policy, int fragment_length, uint64_t seed)
    : envs_(&envs), policy_(policy), fragment_length_(fragment_length) {
  if (fragment_length < 1) {
    throw std::invalid_argument("fragment length must be at least 1, got " + std::to_string(fragment_length));
  }
  const EnvSpec& spec = envs.spec();
  discrete_ = spec.action_space.is_discrete();
  obs_size_ = envs.obs_size();
  action_size_ = discrete_ ? 0 : envs.action_size();
  if (policy.obs_size() != obs_size_ || policy.action_size() != action_size_ ||
      policy.config().action_space.is_discrete() != discrete_) {
    throw std::invalid_argument("policy (obs " + std::to_string(policy.obs_size()) + ", action " +
                                policy.config().action_space.to_string() + ") does not fit " + spec.id + " (obs " +
                                std::to_string(obs_size_) + ", action " + spec.action_space.to_string() + ")");
  }
  const auto k = static_cast<size_t>(envs.num_envs());
  if (!discrete_) {
    action_low_ = spec.action_space.low;
    action_high_ = spec.action_space.high;
    clipped_actions_.resize(k * static_cast<size_t>(action_size_));
  }
  current_obs_.resize(k * static_cast<size_t>(obs_size_));
  final_obs_.resize(current_obs_.size());
  episode_returns_.resize(k);
  episode_lengths_.resize(k);
  envs.reset(seed, current_obs_.data());
}

void FragmentCollector::collect(SampleBatch& out) {
  const int k = envs_->num_envs();
  const int t_max = fragment_length_;
  const size_t row_obs = static_cast<size_t>(k) * obs_size_;
  const size_t row_act = static_cast<size_t>(k) * action_size_;
  out.resize(t_max, k, obs_size_, action_size_, policy_.has_policy_outputs());
  if (!policy_.has_values()) out.values.clear();
  out.policy_version = policy_.version();
  std::copy(current_obs_.begin(), current_obs_.end(), out.obs.begin());

  for (int t = 0; t < t_max; ++t) {
    const size_t row = static_cast<size_t>(t) * k;
    float* obs = out.obs.data() + t * row_obs;
    // The env writes the next observation straight into the next row (or bootstrap_obs).
    float* next_obs = t + 1 < t_max ? obs + row_obs : out.bootstrap_obs.data();

    ActOutput act;
    ActionBatch actions;
    if (discrete_) {
      act.action_indices = out.action_indices.data() + row;
      actions.indices = act.action_indices;
    } else {
      act.action_values = out.action_values.data() + t * row_act;
      actions.values = clipped_actions_.data();
    }
    if (policy_.has_policy_outputs()) {
      act.log_probs = out.log_probs.data() + row;
      act.values = policy_.has_values() ? out.values.data() + row : nullptr;
    }
    policy_.act(obs, k, act);
    if (!discrete_) {
      // Clip what the env receives; the sampled (unclipped) action stays in the batch.
      for (size_t i = 0; i < row_act; ++i) {
        const size_t j = i % static_cast<size_t>(action_size_);
        clipped_actions_[i] = std::min(std::max(act.action_values[i], action_low_[j]), action_high_[j]);
      }
    }

    VectorStepBuffers step_out;
    step_out.obs = next_obs;
    step_out.rewards = out.rewards.data() + row;
    step_out.terminated = out.terminated.data() + row;
    step_out.truncated = out.truncated.data() + row;
    step_out.final_obs = final_obs_.data();
    step_out.episode_returns = episode_returns_.data();
    step_out.episode_lengths = episode_lengths_.data();
    envs_->step(actions, step_out);

    for (int i = 0; i < k; ++i) {
      if (!(step_out.terminated[i] | step_out.truncated[i])) continue;
      out.final_obs_index.push_back(static_cast<int32_t>(row + i));
      const float* final_row = final_obs_.data() + static_cast<size_t>(i) * obs_size_;
      out.final_obs.insert(out.final_obs.end(), final_row, final_row + obs_size_);
      if (episode_lengths_[static_cast<size_t>(i)] < 0) {
        ++episodes_dropped_;  // ended by a non-finite step: not a real episode
      } else {
        finished_.push_back({episode_returns_[static_cast<size_t>(i)], episode_lengths_[static_cast<size_t>(i)]});
      }
    }
  }
  std::copy(out.bootstrap_obs.begin(), out.bootstrap_obs.end(), current_obs_.begin());
  env_steps_ += static_cast<int64_t>(t_max) * k;
}

std::optional<FragmentCollector::Snapshot> FragmentCollector::snapshot() const {
  std::optional<VectorEnv::Snapshot> envs = envs_->snapshot();
  if (!envs) return std::nullopt;
  return Snapshot{std::move(*envs), current_obs_, policy_.rng_state(), env_steps_};
}

void FragmentCollector::restore(const Snapshot& snapshot) {
  if (snapshot.current_obs.size() != current_obs_.size()) {
    throw std::invalid_argument("collector snapshot holds " + std::to_string(snapshot.current_obs.size()) +
                                " observation values, this collector " + std::to_string(current_obs_.size()));
  }
  envs_->restore(snapshot.envs);
  current_obs_ = snapshot.current_obs;
  policy_.set_rng_state(snapshot.policy_rng);
  env_steps_ = snapshot.env_steps;
}

int64_t FragmentCollector::take_episodes_dropped() {
  const int64_t dropped = episodes_dropped_;
  episodes_dropped_ = 0;
  return dropped;
}

std::vector<FinishedEpisode> FragmentCollector::take_finished_episodes() {
  std::vector<FinishedEpisode> taken;
  taken.swap(finished_);
  return taken;
}

}  // namespace rlx
