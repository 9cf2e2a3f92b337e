#include "models/rollout_policy.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

#include "models/action_sampling.h"

namespace rlx {

namespace {

void check_act_args(const ObsBatch& obs, const ObservationLayout& layout, int num_envs, bool discrete,
                    const ActOutput& out, bool policy_outputs, bool values) {
  if (num_envs < 1) throw std::invalid_argument("RolloutPolicy::act needs num_envs >= 1, got " + std::to_string(num_envs));
  if ((layout.float_slots > 0 && obs.floats == nullptr) || (layout.byte_slots > 0 && obs.bytes == nullptr)) {
    throw std::invalid_argument("RolloutPolicy::act got a null observation buffer");
  }
  if (discrete ? out.action_indices == nullptr : out.action_values == nullptr) {
    throw std::invalid_argument(std::string("RolloutPolicy::act needs an ") +
                                (discrete ? "action_indices" : "action_values") + " buffer");
  }
  if (policy_outputs && out.log_probs == nullptr) throw std::invalid_argument("RolloutPolicy::act needs a log_probs buffer");
  if (values && out.values == nullptr) throw std::invalid_argument("RolloutPolicy::act needs a values buffer");
}

// Throws std::invalid_argument unless count is the layout's parameter count.
void check_weight_count(size_t count, size_t expected) {
  if (count != expected) {
    throw std::invalid_argument("flat parameter vector holds " + std::to_string(count) + " values, the model has " +
                                std::to_string(expected));
  }
}

}  // namespace

// ---- ObsNormalizer ----

void ObsNormalizer::set(int64_t obs_size, const std::vector<float>& mean, const std::vector<float>& var, double count) {
  const auto size = static_cast<size_t>(obs_size);
  if (mean.size() != size || var.size() != size) {
    throw std::invalid_argument("observation normalizer needs " + std::to_string(size) + " means and variances, got " +
                                std::to_string(mean.size()) + " and " + std::to_string(var.size()));
  }
  std::vector<float> stddev(size);
  for (size_t i = 0; i < size; ++i) {
    if (!(var[i] >= 0.0f)) throw std::invalid_argument("observation normalizer variance " + std::to_string(i) + " is negative or NaN");
    // Same float arithmetic as normalize_observations(): sqrt(var + 1e-8) in float32.
    stddev[i] = std::sqrt(var[i] + static_cast<float>(kObsNormEpsilon));
  }
  mean_ = mean;
  var_ = var;
  std_ = std::move(stddev);
  count_ = count;
}

void ObsNormalizer::clear() {
  mean_.clear();
  var_.clear();
  std_.clear();
  count_ = 0.0;
}

void ObsNormalizer::apply(const float* in, int64_t rows, float* out) const {
  if (!active()) throw std::logic_error("ObsNormalizer::apply without statistics");
  const auto size = static_cast<int64_t>(mean_.size());
  const auto clip = static_cast<float>(kObsNormClip);
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t i = 0; i < size; ++i) {
      const float z = (in[r * size + i] - mean_[i]) / std_[i];
      out[r * size + i] = std::min(std::max(z, -clip), clip);
    }
  }
}

// ---- RolloutPolicy ----

RolloutPolicy::RolloutPolicy(ModelSpec config, ModelKind kind, uint64_t seed) : config_(std::move(config)), rng_(seed) {
  config_.kind = kind;
  config_.validate();
  layout_ = config_.observation_layout();
}

const float* RolloutPolicy::prepare_obs(const ObsBatch& obs, int num_envs) {
  if (layout_.flat_is_floats && !normalizer_.active()) return obs.floats;
  normalized_obs_.resize(static_cast<size_t>(num_envs * config_.obs_size));  // grows once, then reused
  const float* flat = obs.floats;
  if (!layout_.flat_is_floats) {
    flatten_observations(layout_, obs.floats, obs.bytes, num_envs, normalized_obs_.data());
    flat = normalized_obs_.data();
  }
  if (normalizer_.active()) normalizer_.apply(flat, num_envs, normalized_obs_.data());
  return normalized_obs_.data();
}

void RolloutPolicy::reset_state(int k) {
  if (state_size_ == 0 || k < 0 || static_cast<size_t>(k + 1) * state_size_ > states_.size()) return;
  std::fill(states_.begin() + k * state_size_, states_.begin() + (k + 1) * state_size_, 0.0f);
}

void RolloutPolicy::set_states(const std::vector<float>& states, int num_envs) {
  if (num_envs < 1 || states.size() != static_cast<size_t>(num_envs * state_size_)) {
    throw std::invalid_argument("recurrent states hold " + std::to_string(states.size()) + " floats, expected " +
                                std::to_string(num_envs) + " envs x " + std::to_string(state_size_));
  }
  states_ = states;
}

float* RolloutPolicy::states_for(int num_envs) {
  if (state_size_ == 0) return nullptr;
  const auto size = static_cast<size_t>(num_envs * state_size_);
  if (states_.size() != size) states_.assign(size, 0.0f);
  return states_.data();
}

// ---- ActorCriticPolicy ----

ActorCriticPolicy::ActorCriticPolicy(const ModelSpec& config, uint64_t seed, bool deterministic, bool values)
    : RolloutPolicy(config, ModelKind::kActorCritic, seed),
      kernel_(actor_critic_layout(config_)),
      categories_(config_.action_categories()),
      deterministic_(deterministic),
      values_wanted_(values) {
  weights_ = initial_parameters(kernel_.layout(), seed);
  kernel_.load(weights_.data());
  state_size_ = kernel_.layout().state_size;
}

void ActorCriticPolicy::act(const ObsBatch& obs, int num_envs, const ActOutput& out) {
  const bool discrete = kernel_.layout().discrete;
  check_act_args(obs, observation_layout(), num_envs, discrete, out, true, values_wanted_);
  const float* input = prepare_obs(obs, num_envs);
  const int64_t width = kernel_.layout().policy_outputs;
  policy_out_.resize(static_cast<size_t>(num_envs * width));  // grows once, then reused
  const ActorCriticLayout& layout = kernel_.layout();
  if (layout.sde) latent_.resize(static_cast<size_t>(num_envs * layout.latent_size));
  kernel_.forward(input, num_envs, policy_out_.data(), values_wanted_ ? out.values : nullptr, states_for(num_envs),
                  layout.sde ? latent_.data() : nullptr);
  if (layout.sde && !deterministic_) advance_sde_noise(num_envs);
  const int64_t sde_matrix_size = layout.latent_size * width;
  const auto elements = static_cast<int64_t>(categories_.size());
  for (int k = 0; k < num_envs; ++k) {
    const float* row = policy_out_.data() + k * width;
    if (discrete && elements == 1 && config_.action_space.is_discrete()) {
      out.action_indices[k] = sample_categorical(row, width, rng_, deterministic_, &out.log_probs[k], mask_of(obs, k));
    } else if (discrete) {
      out.log_probs[k] = sample_multi_categorical(row, categories_.data(), elements, rng_, deterministic_,
                                                  out.action_indices + k * elements, mask_of(obs, k));
    } else if (layout.sde) {
      out.log_probs[k] = sample_state_dependent_gaussian(
          row, latent_.data() + k * layout.latent_size, layout.latent_size, kernel_.std().data(),
          deterministic_ ? nullptr : sde_matrices_.data() + k * sde_matrix_size, width, deterministic_,
          out.action_values + k * width);
    } else {
      out.log_probs[k] = sample_diagonal_gaussian(row, kernel_.std().data(), kernel_.log_std().data(), width, rng_,
                                                  deterministic_, out.action_values + k * width);
    }
  }
}

void ActorCriticPolicy::advance_sde_noise(int num_envs) {
  const int64_t matrix_size = kernel_.layout().latent_size * kernel_.layout().policy_outputs;
  const auto size = static_cast<size_t>(num_envs * matrix_size);
  const int64_t every = config_.sde_sample_freq;
  const bool due = every > 0 ? sde_steps_ % every == 0 : sde_steps_ == 0;
  if (due || sde_matrices_.size() != size) {
    sde_matrices_.resize(size);
    for (int k = 0; k < num_envs; ++k) {
      draw_sde_matrix(kernel_.std().data(), matrix_size, rng_, sde_matrices_.data() + k * matrix_size);
    }
  }
  ++sde_steps_;
}

void ActorCriticPolicy::load_weights(const float* params, size_t count, uint64_t version) {
  check_weight_count(count, weights_.size());
  if (count > 0 && params == nullptr) throw std::invalid_argument("load_weights got a null buffer");
  weights_.assign(params, params + count);
  kernel_.load(weights_.data());
  set_version(version);
}

size_t ActorCriticPolicy::num_parameters() const { return weights_.size(); }

std::vector<float> ActorCriticPolicy::weights() const { return weights_; }

// ---- EpsilonGreedyQPolicy ----

EpsilonGreedyQPolicy::EpsilonGreedyQPolicy(const ModelSpec& config, double epsilon, uint64_t seed)
    : RolloutPolicy(config, ModelKind::kQNetwork, seed), kernel_(q_network_layout(config_)) {
  set_epsilon(epsilon);
  weights_ = initial_parameters(kernel_.layout(), seed);
  kernel_.load(weights_.data());
}

void EpsilonGreedyQPolicy::set_epsilon(double epsilon) {
  if (!(epsilon >= 0.0 && epsilon <= 1.0)) {
    throw std::invalid_argument("epsilon must lie in [0, 1], got " + std::to_string(epsilon));
  }
  epsilon_ = epsilon;
}

void EpsilonGreedyQPolicy::act(const ObsBatch& obs, int num_envs, const ActOutput& out) {
  check_act_args(obs, observation_layout(), num_envs, true, out, false, false);
  const float* input = prepare_obs(obs, num_envs);
  const int64_t n = kernel_.layout().num_actions;
  q_values_.resize(static_cast<size_t>(num_envs * n));
  kernel_.forward(input, num_envs, q_values_.data());
  for (int k = 0; k < num_envs; ++k) {
    out.action_indices[k] = epsilon_greedy(q_values_.data() + k * n, n, epsilon_, rng_, mask_of(obs, k));
  }
}

void EpsilonGreedyQPolicy::load_weights(const float* params, size_t count, uint64_t version) {
  check_weight_count(count, weights_.size());
  if (count > 0 && params == nullptr) throw std::invalid_argument("load_weights got a null buffer");
  weights_.assign(params, params + count);
  kernel_.load(weights_.data());
  set_version(version);
}

size_t EpsilonGreedyQPolicy::num_parameters() const { return weights_.size(); }

std::vector<float> EpsilonGreedyQPolicy::weights() const { return weights_; }

// ---- SquashedGaussianPolicy ----

SquashedGaussianPolicy::SquashedGaussianPolicy(const ModelSpec& config, double epsilon, uint64_t seed,
                                               bool deterministic)
    : RolloutPolicy(config, ModelKind::kSquashedGaussian, seed),
      layout_(squashed_gaussian_layout(config_)),
      kernel_(layout_.chain),
      deterministic_(deterministic) {
  set_epsilon(epsilon);
  const Space& space = config_.action_space;
  const auto size = static_cast<size_t>(layout_.action_size);
  if (space.low.size() != size || space.high.size() != size) {
    throw std::invalid_argument("the squashed-Gaussian policy needs the Box's low and high bounds");
  }
  for (size_t j = 0; j < size; ++j) {
    if (!std::isfinite(space.low[j]) || !std::isfinite(space.high[j]) || !(space.low[j] < space.high[j])) {
      throw std::invalid_argument("the squashed-Gaussian policy needs finite Box bounds low < high, got " + space.to_string());
    }
    low_.push_back(space.low[j]);
    half_range_.push_back(0.5f * (space.high[j] - space.low[j]));
  }
  squashed_.resize(size);
  weights_ = initial_parameters(layout_, seed);
  kernel_.load(weights_.data());
}

void SquashedGaussianPolicy::set_epsilon(double epsilon) {
  if (!(epsilon >= 0.0 && epsilon <= 1.0)) {
    throw std::invalid_argument("epsilon must lie in [0, 1], got " + std::to_string(epsilon));
  }
  epsilon_ = epsilon;
}

void SquashedGaussianPolicy::act(const ObsBatch& obs, int num_envs, const ActOutput& out) {
  check_act_args(obs, observation_layout(), num_envs, false, out, false, false);
  const int64_t a = layout_.action_size;
  // Uniform actions need no forward pass (before SAC's learning starts every action is one).
  const float* outputs = epsilon_ >= 1.0 ? nullptr : kernel_.run(prepare_obs(obs, num_envs), num_envs);
  for (int k = 0; k < num_envs; ++k) {
    const bool uniform = epsilon_ > 0.0 && (epsilon_ >= 1.0 || rng_.uniform() < epsilon_);
    if (uniform) {
      for (int64_t j = 0; j < a; ++j) squashed_[j] = static_cast<float>(2.0 * rng_.uniform() - 1.0);
    } else {
      const float* row = outputs + k * 2 * a;
      sample_squashed_gaussian(row, row + a, a, rng_, deterministic_, squashed_.data());
    }
    float* action = out.action_values + k * a;
    for (int64_t j = 0; j < a; ++j) action[j] = low_[j] + (squashed_[j] + 1.0f) * half_range_[j];
  }
}

void SquashedGaussianPolicy::load_weights(const float* params, size_t count, uint64_t version) {
  check_weight_count(count, weights_.size());
  if (count > 0 && params == nullptr) throw std::invalid_argument("load_weights got a null buffer");
  weights_.assign(params, params + count);
  kernel_.load(weights_.data());
  set_version(version);
}

size_t SquashedGaussianPolicy::num_parameters() const { return weights_.size(); }

std::vector<float> SquashedGaussianPolicy::weights() const { return weights_; }

double apex_worker_epsilon(int worker_index, int num_workers, double base, double alpha) {
  if (num_workers < 1 || worker_index < 0 || worker_index >= num_workers) {
    throw std::invalid_argument("apex_worker_epsilon needs 0 <= worker_index < num_workers");
  }
  if (num_workers == 1) return base;
  return std::pow(base, 1.0 + alpha * worker_index / (num_workers - 1));
}

}  // namespace rlx
