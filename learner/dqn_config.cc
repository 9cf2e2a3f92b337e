#include "learner/dqn_config.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

#include "learner/prioritized_replay.h"

namespace rlx {

namespace {

void require(bool ok, const char* field, const std::string& expected, double value) {
  if (!ok) {
    throw std::invalid_argument(std::string("DqnConfig.") + field + " must be " + expected + ", got " + std::to_string(value));
  }
}

bool unit(double x) { return x >= 0.0 && x <= 1.0; }

}  // namespace

void DqnConfig::validate() const {
  require(lr > 0.0 && std::isfinite(lr), "lr", "> 0", lr);
  require(unit(gamma), "gamma", "in [0, 1]", gamma);
  require(n_step >= 1, "n_step", ">= 1", n_step);
  require(batch_size >= 1, "batch_size", ">= 1", static_cast<double>(batch_size));
  require(tau > 0.0 && tau <= 1.0, "tau", "in (0, 1]", tau);
  require(target_update_interval >= 1, "target_update_interval", ">= 1", static_cast<double>(target_update_interval));
  require(huber_delta > 0.0, "huber_delta", "> 0", huber_delta);
  require(max_grad_norm >= 0.0, "max_grad_norm", ">= 0", max_grad_norm);
  require(adam_eps > 0.0, "adam_eps", "> 0", adam_eps);
  require(per_alpha >= 0.0, "per_alpha", ">= 0", per_alpha);
  require(unit(per_beta0), "per_beta0", "in [0, 1]", per_beta0);
  require(per_beta_timesteps >= 0, "per_beta_timesteps", ">= 0", static_cast<double>(per_beta_timesteps));
  require(per_eps > 0.0, "per_eps", "> 0", per_eps);
  require(buffer_capacity >= 1, "buffer_capacity", ">= 1", static_cast<double>(buffer_capacity));
  require(buffer_capacity >= batch_size, "buffer_capacity", ">= batch_size", static_cast<double>(buffer_capacity));
  require(learning_starts >= 0, "learning_starts", ">= 0", static_cast<double>(learning_starts));
  require(learning_starts <= buffer_capacity, "learning_starts", "<= buffer_capacity", static_cast<double>(learning_starts));
  require(train_freq >= 1, "train_freq", ">= 1", static_cast<double>(train_freq));
  require(gradient_steps >= 1, "gradient_steps", ">= 1", gradient_steps);
  require(unit(initial_eps), "initial_eps", "in [0, 1]", initial_eps);
  require(unit(final_eps), "final_eps", "in [0, 1]", final_eps);
  require(unit(exploration_fraction), "exploration_fraction", "in [0, 1]", exploration_fraction);
  require(total_timesteps >= 1, "total_timesteps", ">= 1", static_cast<double>(total_timesteps));
}

double DqnConfig::epsilon(int64_t timesteps) const {
  const double horizon = exploration_fraction * static_cast<double>(total_timesteps);
  if (!(horizon > 0.0)) return final_eps;
  const double progress = std::clamp(static_cast<double>(timesteps) / horizon, 0.0, 1.0);
  return initial_eps + progress * (final_eps - initial_eps);
}

double DqnConfig::lr_at(int64_t timesteps) const {
  if (!anneal_lr) return lr;
  return lr * std::max(0.0, 1.0 - static_cast<double>(timesteps) / static_cast<double>(total_timesteps));
}

double DqnConfig::beta(int64_t timesteps) const { return annealed_beta(per_beta0, timesteps, beta_horizon()); }

}  // namespace rlx
