// CartPole-v1: Gymnasium 0.29.1's cart-pole balancing task (euler integrator).
#pragma once

#include <vector>

#include "envs/classic/classic_env.h"

namespace rlx {

// A pole hinged on a cart; push left (0) or right (1) to keep it upright.
class CartPoleEnv final : public ClassicEnv {
 public:
  static constexpr int kStateSize = 4;

  CartPoleEnv();

  // The registered spec: Discrete(2), 4 observations, 500 steps, threshold 475.
  static EnvSpec default_spec();

  // Physical state: x, x_dot, theta, theta_dot.
  std::vector<double> state() const override;

  // True when the cart or pole is outside Gymnasium's failure thresholds.
  static bool is_failure(double x, double theta);

 protected:
  // set_state: overwrites x, x_dot, theta, theta_dot; throws std::invalid_argument unless 4 values.
  void set_physical_state(const std::vector<double>& state, ObsSpan obs) override;
  void reset_episode(Rng& rng, ObsSpan obs) override;
  StepResult step_episode(const Action& action, ObsSpan obs) override;

 private:
  void write_obs(ObsSpan obs) const;

  double x_ = 0.0;
  double x_dot_ = 0.0;
  double theta_ = 0.0;
  double theta_dot_ = 0.0;
  bool terminated_ = false;  // a step already reported termination (later steps pay 0)
};

}  // namespace rlx
