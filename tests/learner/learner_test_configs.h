// The learners' configs as their tests were tuned with: the learners' former built-in defaults.
// The schema's defaults (what rlx train uses) differ: PPO's lr is constant there, and DQN's
// follow RLlib rather than Stable-Baselines3.
#pragma once

#include "core/algorithm_config.h"

namespace rlx::test {

// PpoConfig at the schema's defaults with lr annealed linearly (CleanRL's setting).
inline PpoConfig ppo_test_config() {
  PpoConfig config;
  config.lr_schedule = Schedule::kLinear;
  return config;
}

// DqnConfig at Stable-Baselines3's DQN defaults (with double Q on).
inline DqnConfig dqn_test_config() {
  DqnConfig config;
  config.lr = 1e-4;
  config.batch_size = 32;
  config.target_update_interval = 10000;
  config.grad_clip = 10.0;
  config.adam_eps = 1e-8;
  config.buffer_size = 1000000;
  config.learning_starts = 100;
  return config;
}

}  // namespace rlx::test
