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
  discrete_ = envs.action_indices() > 0;
  obs_size_ = envs.obs_size();
  obs_bytes_ = envs.obs_bytes();
  action_size_ = discrete_ ? 0 : envs.action_size();
  action_components_ = discrete_ ? envs.action_indices() : 1;
  const ObservationLayout& policy_layout = policy.observation_layout();
  if (policy_layout.float_slots != obs_size_ || policy_layout.byte_slots != obs_bytes_ ||
      policy.action_size() != action_size_ || policy.config().action_space != spec.action_space) {
    throw std::invalid_argument("policy (observations " + policy.config().input_space().to_string() + ", action " +
                                policy.config().action_space.to_string() + ") does not fit " + spec.to_string());
  }
  const auto k = static_cast<size_t>(envs.num_envs());
  if (!discrete_) {
    action_low_ = spec.action_space.low;
    action_high_ = spec.action_space.high;
    clipped_actions_.resize(k * static_cast<size_t>(action_size_));
  }
  current_obs_.resize(k * static_cast<size_t>(obs_size_));
  final_obs_.resize(current_obs_.size());
  current_obs_u8_.resize(k * static_cast<size_t>(obs_bytes_));
  final_obs_u8_.resize(current_obs_u8_.size());
  episode_returns_.resize(k);
  episode_lengths_.resize(k);
  envs.reset(seed, current_obs_.data(), current_obs_u8_.data());
}

void FragmentCollector::collect(SampleBatch& out) {
  const int k = envs_->num_envs();
  const int t_max = fragment_length_;
  const size_t row_obs = static_cast<size_t>(k) * obs_size_;
  const size_t row_bytes = static_cast<size_t>(k) * obs_bytes_;
  const size_t row_act = static_cast<size_t>(k) * action_size_;
  out.state_size = policy_.state_size();
  out.resize(t_max, k, obs_size_, action_size_, policy_.has_policy_outputs(), obs_bytes_, action_components_);
  if (!policy_.has_values()) out.values.clear();
  if (policy_.states().size() == out.initial_states.size()) {
    std::copy(policy_.states().begin(), policy_.states().end(), out.initial_states.begin());
  } else {
    std::fill(out.initial_states.begin(), out.initial_states.end(), 0.0f);  // before the first step: zeros
  }
  out.policy_version = policy_.version();
  policy_.begin_fragment();
  std::copy(current_obs_.begin(), current_obs_.end(), out.obs.begin());
  std::copy(current_obs_u8_.begin(), current_obs_u8_.end(), out.obs_u8.begin());

  for (int t = 0; t < t_max; ++t) {
    const size_t row = static_cast<size_t>(t) * k;
    float* obs = out.obs.data() + t * row_obs;
    uint8_t* obs_u8 = out.obs_u8.data() + t * row_bytes;
    // The env writes the next observation straight into the next row (or bootstrap_obs).
    float* next_obs = t + 1 < t_max ? obs + row_obs : out.bootstrap_obs.data();
    uint8_t* next_obs_u8 = t + 1 < t_max ? obs_u8 + row_bytes : out.bootstrap_obs_u8.data();

    ActOutput act;
    ActionBatch actions;
    if (discrete_) {
      act.action_indices = out.action_indices.data() + row * static_cast<size_t>(action_components_);
      actions.indices = act.action_indices;
    } else {
      act.action_values = out.action_values.data() + t * row_act;
      actions.values = clipped_actions_.data();
    }
    if (policy_.has_policy_outputs()) {
      act.log_probs = out.log_probs.data() + row;
      act.values = policy_.has_values() ? out.values.data() + row : nullptr;
    }
    policy_.act(ObsBatch(obs, obs_u8), k, act);
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
    step_out.obs_bytes = next_obs_u8;
    step_out.final_obs_bytes = final_obs_u8_.data();
    step_out.episode_returns = episode_returns_.data();
    step_out.episode_lengths = episode_lengths_.data();
    envs_->step(actions, step_out);

    for (int i = 0; i < k; ++i) {
      if (!(step_out.terminated[i] | step_out.truncated[i])) continue;
      policy_.reset_state(i);
      out.final_obs_index.push_back(static_cast<int32_t>(row + i));
      const float* final_row = final_obs_.data() + static_cast<size_t>(i) * obs_size_;
      out.final_obs.insert(out.final_obs.end(), final_row, final_row + obs_size_);
      const uint8_t* final_bytes = final_obs_u8_.data() + static_cast<size_t>(i) * obs_bytes_;
      out.final_obs_u8.insert(out.final_obs_u8.end(), final_bytes, final_bytes + obs_bytes_);
      if (episode_lengths_[static_cast<size_t>(i)] < 0) {
        ++episodes_dropped_;  // ended by a non-finite step: not a real episode, and marked so
        out.dropped_index.push_back(static_cast<int32_t>(row + i));
      } else {
        finished_.push_back({episode_returns_[static_cast<size_t>(i)], episode_lengths_[static_cast<size_t>(i)]});
      }
    }
  }
  std::copy(out.bootstrap_obs.begin(), out.bootstrap_obs.end(), current_obs_.begin());
  std::copy(out.bootstrap_obs_u8.begin(), out.bootstrap_obs_u8.end(), current_obs_u8_.begin());
  env_steps_ += static_cast<int64_t>(t_max) * k;
}

std::optional<FragmentCollector::Snapshot> FragmentCollector::snapshot() const {
  std::optional<VectorEnv::Snapshot> envs = envs_->snapshot();
  if (!envs) return std::nullopt;
  return Snapshot{std::move(*envs), current_obs_, policy_.rng_state(), env_steps_, current_obs_u8_, policy_.states()};
}

void FragmentCollector::restore(const Snapshot& snapshot) {
  if (snapshot.current_obs.size() != current_obs_.size() || snapshot.current_obs_u8.size() != current_obs_u8_.size()) {
    throw std::invalid_argument("collector snapshot holds " + std::to_string(snapshot.current_obs.size()) +
                                " observation values, this collector " + std::to_string(current_obs_.size()));
  }
  envs_->restore(snapshot.envs);
  current_obs_ = snapshot.current_obs;
  current_obs_u8_ = snapshot.current_obs_u8;
  policy_.set_rng_state(snapshot.policy_rng);
  if (!snapshot.policy_states.empty()) policy_.set_states(snapshot.policy_states, envs_->num_envs());
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
