// MountainCarContinuous-v0: Gymnasium 0.29.1's continuous-force mountain-car task.
#pragma once

#include <vector>

#include "envs/classic/classic_env.h"

namespace rlx {

// The mountain car with a force in [-1, 1]; reaching the flag pays 100, force costs 0.1 a^2.
class MountainCarContinuousEnv final : public ClassicEnv {
 public:
  static constexpr int kStateSize = 2;

  MountainCarContinuousEnv();

  // The registered spec: Box(-1, 1, (1,)), 2 observations, 999 steps, threshold 90.
  static EnvSpec default_spec();

  // Physical state: position, velocity (float32 values after any step, as in Gymnasium).
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
