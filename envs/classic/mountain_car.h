// MountainCar-v0: Gymnasium 0.29.1's discrete mountain-car task.
#pragma once

#include <vector>

#include "envs/classic/classic_env.h"

namespace rlx {

// An under-powered car in a valley; push left (0), none (1) or right (2) to reach the flag.
class MountainCarEnv final : public ClassicEnv {
 public:
  static constexpr int kStateSize = 2;

  MountainCarEnv();

  // The registered spec: Discrete(3), 2 observations, 200 steps, threshold -110.
  static EnvSpec default_spec();

  // Physical state: position, velocity.
  std::vector<double> state() const override;

 protected:
  // set_state: overwrites position and velocity; throws std::invalid_argument unless 2 values.
  void set_physical_state(const std::vector<double>& state, ObsSpan obs) override;
  void reset_episode(Rng& rng, ObsSpan obs) override;
  StepResult step_episode(const Action& action, ObsSpan obs) override;

 private:
  void write_obs(ObsSpan obs) const;

  double position_ = 0.0;
  double velocity_ = 0.0;
};

}  // namespace rlx
