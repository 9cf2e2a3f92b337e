// Acrobot-v1: Gymnasium 0.29.1's two-link swing-up task ("book" dynamics, one RK4 step).
#pragma once

#include <array>
#include <vector>

#include "envs/classic/classic_env.h"

namespace rlx {

// Two links hanging from a pivot; torque -1, 0 or +1 on the middle joint swings the tip up.
class AcrobotEnv final : public ClassicEnv {
 public:
  static constexpr int kStateSize = 4;
  using State = std::array<double, kStateSize>;  // theta1, theta2, dtheta1, dtheta2

  AcrobotEnv();

  // The registered spec: Discrete(3), 6 observations, 500 steps, threshold -100.
  static EnvSpec default_spec();

  // Physical state: theta1, theta2, dtheta1, dtheta2.
  std::vector<double> state() const override;

  // Time derivative of s under torque on the middle joint (Sutton and Barto's equations).
  static State derivatives(const State& s, double torque);
  // One RK4 step of length dt from s under a constant torque, as Gymnasium's rk4() does.
  static State rk4_step(const State& s, double torque, double dt);

 protected:
  // set_state: overwrites the 4 state values; throws std::invalid_argument unless 4 values.
  void set_physical_state(const std::vector<double>& state, ObsSpan obs) override;
  void reset_episode(Rng& rng, ObsSpan obs) override;
  StepResult step_episode(const Action& action, ObsSpan obs) override;

 private:
  void write_obs(ObsSpan obs) const;

  State s_{};
};

}  // namespace rlx
