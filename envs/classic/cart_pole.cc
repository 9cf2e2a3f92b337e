#include "envs/classic/cart_pole.h"

#include <cmath>
#include <stdexcept>
#include <string>

namespace rlx {
namespace {

// Constants and derived quantities computed in Gymnasium's order so rounding matches.
constexpr double kPi = 3.141592653589793;
constexpr double kGravity = 9.8;
constexpr double kMassCart = 1.0;
constexpr double kMassPole = 0.1;
constexpr double kTotalMass = kMassPole + kMassCart;
constexpr double kLength = 0.5;  // half the pole's length
constexpr double kPoleMassLength = kMassPole * kLength;
constexpr double kForceMag = 10.0;
constexpr double kTau = 0.02;
constexpr double kThetaThreshold = 12 * 2 * kPi / 360;
constexpr double kXThreshold = 2.4;

}  // namespace

CartPoleEnv::CartPoleEnv() : ClassicEnv(default_spec()) {}

EnvSpec CartPoleEnv::default_spec() {
  EnvSpec spec;
  spec.id = "CartPole-v1";
  const float theta_high = static_cast<float>(kThetaThreshold * 2);
  const float x_high = static_cast<float>(kXThreshold * 2);
  spec.observation_space = Space::box({4}, {-x_high, -kInf, -theta_high, -kInf}, {x_high, kInf, theta_high, kInf});
  spec.action_space = Space::discrete(2);
  spec.max_episode_steps = 500;
  spec.reward_threshold = 475.0;
  return spec;
}

bool CartPoleEnv::is_failure(double x, double theta) {
  return x < -kXThreshold || x > kXThreshold || theta < -kThetaThreshold || theta > kThetaThreshold;
}

std::vector<double> CartPoleEnv::state() const { return {x_, x_dot_, theta_, theta_dot_}; }

void CartPoleEnv::set_physical_state(const std::vector<double>& state, ObsSpan obs) {
  if (state.size() != kStateSize) {
    throw std::invalid_argument("CartPole-v1 state needs 4 values, got " + std::to_string(state.size()));
  }
  x_ = state[0];
  x_dot_ = state[1];
  theta_ = state[2];
  theta_dot_ = state[3];
  terminated_ = false;
  write_obs(obs);
}

void CartPoleEnv::reset_episode(Rng& rng, ObsSpan obs) {
  x_ = rng.uniform(-0.05, 0.05);
  x_dot_ = rng.uniform(-0.05, 0.05);
  theta_ = rng.uniform(-0.05, 0.05);
  theta_dot_ = rng.uniform(-0.05, 0.05);
  terminated_ = false;
  write_obs(obs);
}

StepResult CartPoleEnv::step_episode(const Action& action, ObsSpan obs) {
  if (action.index != 0 && action.index != 1) {
    throw std::invalid_argument("CartPole-v1 action must be 0 or 1, got " + std::to_string(action.index));
  }
  const double force = action.index == 1 ? kForceMag : -kForceMag;
  const double costheta = std::cos(theta_);
  const double sintheta = std::sin(theta_);
  const double temp = (force + kPoleMassLength * (theta_dot_ * theta_dot_) * sintheta) / kTotalMass;
  const double thetaacc = (kGravity * sintheta - costheta * temp) /
                          (kLength * (4.0 / 3.0 - kMassPole * (costheta * costheta) / kTotalMass));
  const double xacc = temp - kPoleMassLength * thetaacc * costheta / kTotalMass;

  x_ = x_ + kTau * x_dot_;
  x_dot_ = x_dot_ + kTau * xacc;
  theta_ = theta_ + kTau * theta_dot_;
  theta_dot_ = theta_dot_ + kTau * thetaacc;
  write_obs(obs);

  StepResult result;
  result.terminated = is_failure(x_, theta_);
  // Gymnasium pays 1 up to and including the terminating step, 0 for terminal steps past it.
  result.reward = (result.terminated && terminated_) ? 0.0 : 1.0;
  terminated_ = terminated_ || result.terminated;
  return result;
}

void CartPoleEnv::write_obs(ObsSpan obs) const {
  obs[0] = static_cast<float>(x_);
  obs[1] = static_cast<float>(x_dot_);
  obs[2] = static_cast<float>(theta_);
  obs[3] = static_cast<float>(theta_dot_);
}

}  // namespace rlx
