// DqnConfig: DQN hyperparameters and their schedules (torch-free). Defaults follow
// Stable-Baselines3's DQN except double_q (on; SB3 has no double Q).
//
// Units. Every interval counts env steps (transitions received), as SB3 and RL Zoo do:
// learning_starts, train_freq, target_update_interval, the exploration and beta horizons.
// The target network is updated every target_update_interval env steps with
// target <- tau * online + (1 - tau) * target (tau = 1: a hard copy). Updates that fall due
// while the online net is fixed (between training rounds) are folded into one:
// k due updates with tau give tau_k = 1 - (1 - tau)^k, which is exactly what SB3 computes
// when it applies them one env step at a time. Observations are used raw (no normalisation).
#pragma once

#include <cstdint>

namespace rlx {

struct DqnConfig {
  double lr = 1e-4;
  bool anneal_lr = false;               // lr * (1 - timesteps / total_timesteps), floored at 0 (lr_schedule: linear)
  double gamma = 0.99;
  int n_step = 1;                       // n-step returns (windows cut at episode ends)
  bool n_step_carry = true;             // complete windows with the worker's next fragment (else cut at the fragment end)
  int64_t batch_size = 32;
  bool double_q = true;                 // select a' with the online net, evaluate with the target net
  double tau = 1.0;                     // target update factor; 1 = hard copy
  int64_t target_update_interval = 10000;  // env steps between target updates
  double huber_delta = 1.0;             // Huber loss threshold (1 = smooth L1)
  double max_grad_norm = 10.0;          // global gradient-norm clip; 0 = off
  double adam_eps = 1e-8;
  bool prioritized = false;             // proportional prioritized replay
  double per_alpha = 0.6;
  double per_beta0 = 0.4;               // annealed linearly to 1
  int64_t per_beta_timesteps = 0;       // horizon of the beta annealing; 0 = total_timesteps
  double per_eps = 1e-6;                // priority = |td| + per_eps
  int64_t buffer_capacity = 1000000;
  int64_t learning_starts = 100;        // stored transitions before the first training round
  int64_t train_freq = 4;               // env steps received per training round
  int gradient_steps = 1;               // gradient steps per training round
  double initial_eps = 1.0;             // epsilon-greedy exploration, linear schedule
  double final_eps = 0.05;
  double exploration_fraction = 0.1;    // of total_timesteps over which epsilon decays
  int64_t total_timesteps = 1000000;    // horizon of the schedules

  // Throws std::invalid_argument naming the first bad field.
  void validate() const;
  // Exploration rate after timesteps env steps: initial_eps -> final_eps linearly over
  // exploration_fraction * total_timesteps, then final_eps.
  double epsilon(int64_t timesteps) const;
  // The learning rate after timesteps env steps.
  double lr_at(int64_t timesteps) const;
  // Prioritized replay's importance exponent after timesteps env steps: per_beta0 -> 1.
  double beta(int64_t timesteps) const;
  // The annealing horizon of beta in env steps.
  int64_t beta_horizon() const { return per_beta_timesteps > 0 ? per_beta_timesteps : total_timesteps; }
};

}  // namespace rlx
