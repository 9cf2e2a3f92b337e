// MountainCar-v0: Gymnasium 0.29.1's discrete mountain-car task.
#pragma once

#include <vector>

#include "envs/env.h"

namespace rlx {

// An under-powered car in a valley; push left (0), none (1) or right (2) to reach the flag.
class MountainCarEnv final : public Env {
 public:
  static constexpr int kStateSize = 2;

  MountainCarEnv();

  // The registered spec: Discrete(3), 2 observations, 200 steps, threshold -110.
  static EnvSpec default_spec();

  // Physical state: position, velocity.
  std::vector<double> state() const override;
  // Overwrites position and velocity; throws std::invalid_argument unless 2 values.
  void set_state(const std::vector<double>& state, float* obs) override;

 protected:
  void reset_episode(Rng& rng, float* obs) override;
  StepResult step_episode(const Action& action, float* obs) override;

 private:
  void write_obs(float* obs) const;

  double position_ = 0.0;
  double velocity_ = 0.0;
};

}  // namespace rlx
