// Pendulum-v1: Gymnasium 0.29.1's inverted-pendulum swing-up task.
#pragma once

#include <vector>

#include "envs/classic/classic_env.h"

namespace rlx {

// A pendulum on a frictionless pivot; a torque in [-2, 2] should swing it up and hold it.
class PendulumEnv final : public ClassicEnv {
 public:
  static constexpr int kStateSize = 2;

  PendulumEnv();

  // The registered spec: Box(-2, 2, (1,)), 3 observations, 200 steps, no threshold.
  static EnvSpec default_spec();

  // Physical state: theta, theta_dot.
  std::vector<double> state() const override;

  // Gymnasium's angle_normalize: ((x + pi) mod 2 pi) - pi with a floored modulo.
  static double angle_normalize(double x);

 protected:
  // set_state: overwrites theta and theta_dot; throws std::invalid_argument unless 2 values.
  void set_physical_state(const std::vector<double>& state, ObsSpan obs) override;
  void reset_episode(Rng& rng, ObsSpan obs) override;
  StepResult step_episode(const Action& action, ObsSpan obs) override;

 private:
  void write_obs(ObsSpan obs) const;

  double theta_ = 0.0;
  double theta_dot_ = 0.0;
};

}  // namespace rlx
