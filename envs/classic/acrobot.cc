#include "envs/classic/acrobot.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

namespace rlx {
namespace {

// Constants and derived quantities computed in Gymnasium's order so rounding matches.
constexpr double kPi = 3.141592653589793;
constexpr double kDt = 0.2;
constexpr double kM1 = 1.0;
constexpr double kM2 = 1.0;
constexpr double kL1 = 1.0;
constexpr double kLc1 = 0.5;
constexpr double kLc2 = 0.5;
constexpr double kI1 = 1.0;
constexpr double kI2 = 1.0;
constexpr double kG = 9.8;
constexpr double kMaxVel1 = 4 * kPi;
constexpr double kMaxVel2 = 9 * kPi;
constexpr double kTorques[3] = {-1.0, 0.0, 1.0};

// Gymnasium's wrap(): shifts x by whole periods into [low, high] (non-finite x passes through).
double wrap(double x, double low, double high) {
  if (!std::isfinite(x)) return x;
  const double diff = high - low;
  while (x > high) x = x - diff;
  while (x < low) x = x + diff;
  return x;
}

}  // namespace

AcrobotEnv::AcrobotEnv() : ClassicEnv(default_spec()) {}

EnvSpec AcrobotEnv::default_spec() {
  EnvSpec spec;
  spec.id = "Acrobot-v1";
  const float v1 = static_cast<float>(kMaxVel1);
  const float v2 = static_cast<float>(kMaxVel2);
  spec.observation_space = Space::box({6}, {-1.0f, -1.0f, -1.0f, -1.0f, -v1, -v2}, {1.0f, 1.0f, 1.0f, 1.0f, v1, v2});
  spec.action_space = Space::discrete(3);
  spec.max_episode_steps = 500;
  spec.reward_threshold = -100.0;
  return spec;
}

std::vector<double> AcrobotEnv::state() const { return {s_.begin(), s_.end()}; }

void AcrobotEnv::set_physical_state(const std::vector<double>& state, ObsSpan obs) {
  if (state.size() != kStateSize) {
    throw std::invalid_argument("Acrobot-v1 state needs 4 values, got " + std::to_string(state.size()));
  }
  std::copy(state.begin(), state.end(), s_.begin());
  write_obs(obs);
}

void AcrobotEnv::reset_episode(Rng& rng, ObsSpan obs) {
  // Gymnasium draws in float64 and stores the reset state as float32.
  for (double& value : s_) value = static_cast<float>(rng.uniform(-0.1, 0.1));
  write_obs(obs);
}

AcrobotEnv::State AcrobotEnv::derivatives(const State& s, double a) {
  const double theta1 = s[0];
  const double theta2 = s[1];
  const double dtheta1 = s[2];
  const double dtheta2 = s[3];
  const double cos2 = std::cos(theta2);
  const double sin2 = std::sin(theta2);
  const double d1 = kM1 * (kLc1 * kLc1) + kM2 * ((kL1 * kL1) + (kLc2 * kLc2) + 2 * kL1 * kLc2 * cos2) + kI1 + kI2;
  const double d2 = kM2 * ((kLc2 * kLc2) + kL1 * kLc2 * cos2) + kI2;
  const double phi2 = kM2 * kLc2 * kG * std::cos(theta1 + theta2 - kPi / 2.0);
  const double phi1 = -kM2 * kL1 * kLc2 * (dtheta2 * dtheta2) * sin2 -
                      2 * kM2 * kL1 * kLc2 * dtheta2 * dtheta1 * sin2 +
                      (kM1 * kLc1 + kM2 * kL1) * kG * std::cos(theta1 - kPi / 2) + phi2;
  const double ddtheta2 = (a + d2 / d1 * phi1 - kM2 * kL1 * kLc2 * (dtheta1 * dtheta1) * sin2 - phi2) /
                          (kM2 * (kLc2 * kLc2) + kI2 - (d2 * d2) / d1);
  const double ddtheta1 = -(d2 * ddtheta2 + phi1) / d1;
  return {dtheta1, dtheta2, ddtheta1, ddtheta2};
}

AcrobotEnv::State AcrobotEnv::rk4_step(const State& s, double torque, double dt) {
  const double half = dt / 2.0;
  const auto shifted = [&s](const State& k, double h) {
    return State{s[0] + h * k[0], s[1] + h * k[1], s[2] + h * k[2], s[3] + h * k[3]};
  };
  const State k1 = derivatives(s, torque);
  const State k2 = derivatives(shifted(k1, half), torque);
  const State k3 = derivatives(shifted(k2, half), torque);
  const State k4 = derivatives(shifted(k3, dt), torque);
  const double scale = dt / 6.0;
  State next;
  for (int i = 0; i < kStateSize; ++i) next[i] = s[i] + scale * (k1[i] + 2 * k2[i] + 2 * k3[i] + k4[i]);
  return next;
}

StepResult AcrobotEnv::step_episode(const Action& action, ObsSpan obs) {
  if (action.index < 0 || action.index > 2) {
    throw std::invalid_argument("Acrobot-v1 action must be 0, 1 or 2, got " + std::to_string(action.index));
  }
  State next = rk4_step(s_, kTorques[action.index], kDt);
  next[0] = wrap(next[0], -kPi, kPi);
  next[1] = wrap(next[1], -kPi, kPi);
  next[2] = std::min(std::max(next[2], -kMaxVel1), kMaxVel1);
  next[3] = std::min(std::max(next[3], -kMaxVel2), kMaxVel2);
  s_ = next;
  write_obs(obs);

  StepResult result;
  result.terminated = -std::cos(s_[0]) - std::cos(s_[1] + s_[0]) > 1.0;
  result.reward = result.terminated ? 0.0 : -1.0;
  return result;
}

void AcrobotEnv::write_obs(ObsSpan obs) const {
  obs[0] = static_cast<float>(std::cos(s_[0]));
  obs[1] = static_cast<float>(std::sin(s_[0]));
  obs[2] = static_cast<float>(std::cos(s_[1]));
  obs[3] = static_cast<float>(std::sin(s_[1]));
  obs[4] = static_cast<float>(s_[2]);
  obs[5] = static_cast<float>(s_[3]);
}

}  // namespace rlx
