#include "envs/classic/pendulum.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

namespace rlx {
namespace {

constexpr double kPi = 3.141592653589793;
constexpr double kMaxSpeed = 8.0;
constexpr double kMaxTorque = 2.0;
constexpr double kDt = 0.05;
constexpr double kG = 10.0;
constexpr double kM = 1.0;
constexpr double kL = 1.0;
// Gymnasium's 3 * g / (2 * l) and 3.0 / (m * l**2), evaluated in its order.
constexpr double kGravityTerm = 3 * kG / (2 * kL);
constexpr double kTorqueTerm = 3.0 / (kM * (kL * kL));

}  // namespace

PendulumEnv::PendulumEnv() : ClassicEnv(default_spec()) {}

EnvSpec PendulumEnv::default_spec() {
  EnvSpec spec;
  spec.id = "Pendulum-v1";
  const float speed = static_cast<float>(kMaxSpeed);
  spec.observation_space = Space::box({3}, {-1.0f, -1.0f, -speed}, {1.0f, 1.0f, speed});
  spec.action_space = Space::box({1}, static_cast<float>(-kMaxTorque), static_cast<float>(kMaxTorque));
  spec.max_episode_steps = 200;
  return spec;
}

double PendulumEnv::angle_normalize(double x) {
  // numpy's floored remainder: fmod, then shifted into the divisor's sign.
  constexpr double kPeriod = 2 * kPi;
  double mod = std::fmod(x + kPi, kPeriod);
  if (mod != 0.0) {
    if (mod < 0) mod += kPeriod;
  } else {
    mod = 0.0;
  }
  return mod - kPi;
}

std::vector<double> PendulumEnv::state() const { return {theta_, theta_dot_}; }

void PendulumEnv::set_physical_state(const std::vector<double>& state, ObsSpan obs) {
  if (state.size() != kStateSize) {
    throw std::invalid_argument("Pendulum-v1 state needs 2 values, got " + std::to_string(state.size()));
  }
  theta_ = state[0];
  theta_dot_ = state[1];
  write_obs(obs);
}

void PendulumEnv::reset_episode(Rng& rng, ObsSpan obs) {
  theta_ = rng.uniform(-kPi, kPi);
  theta_dot_ = rng.uniform(-1.0, 1.0);
  write_obs(obs);
}

StepResult PendulumEnv::step_episode(const Action& action, ObsSpan obs) {
  if (action.values == nullptr) throw std::invalid_argument("Pendulum-v1 needs an action value");
  const double u = std::min(std::max(static_cast<double>(action.values[0]), -kMaxTorque), kMaxTorque);
  const double angle = angle_normalize(theta_);
  const double cost = angle * angle + 0.1 * (theta_dot_ * theta_dot_) + 0.001 * (u * u);

  double new_theta_dot = theta_dot_ + (kGravityTerm * std::sin(theta_) + kTorqueTerm * u) * kDt;
  new_theta_dot = std::min(std::max(new_theta_dot, -kMaxSpeed), kMaxSpeed);
  theta_ = theta_ + new_theta_dot * kDt;
  theta_dot_ = new_theta_dot;
  write_obs(obs);

  StepResult result;
  result.reward = -cost;
  return result;
}

void PendulumEnv::write_obs(ObsSpan obs) const {
  obs[0] = static_cast<float>(std::cos(theta_));
  obs[1] = static_cast<float>(std::sin(theta_));
  obs[2] = static_cast<float>(theta_dot_);
}

}  // namespace rlx
