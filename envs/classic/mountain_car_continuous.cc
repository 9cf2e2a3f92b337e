#include "envs/classic/mountain_car_continuous.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

namespace rlx {
namespace {

constexpr double kMinAction = -1.0;
constexpr double kMaxAction = 1.0;
constexpr double kMinPosition = -1.2;
constexpr double kMaxPosition = 0.6;
constexpr double kMaxSpeed = 0.07;
constexpr double kGoalPosition = 0.45;
constexpr double kGoalVelocity = 0.0;
constexpr double kPower = 0.0015;

}  // namespace

MountainCarContinuousEnv::MountainCarContinuousEnv() : ClassicEnv(default_spec()) {}

EnvSpec MountainCarContinuousEnv::default_spec() {
  EnvSpec spec;
  spec.id = "MountainCarContinuous-v0";
  spec.observation_space = Space::box({2}, {static_cast<float>(kMinPosition), static_cast<float>(-kMaxSpeed)},
                                      {static_cast<float>(kMaxPosition), static_cast<float>(kMaxSpeed)});
  spec.action_space = Space::box({1}, static_cast<float>(kMinAction), static_cast<float>(kMaxAction));
  spec.max_episode_steps = 999;
  spec.reward_threshold = 90.0;
  return spec;
}

std::vector<double> MountainCarContinuousEnv::state() const { return {position_, velocity_}; }

void MountainCarContinuousEnv::set_physical_state(const std::vector<double>& state, ObsSpan obs) {
  if (state.size() != kStateSize) {
    throw std::invalid_argument("MountainCarContinuous-v0 state needs 2 values, got " +
                                std::to_string(state.size()));
  }
  position_ = state[0];
  velocity_ = state[1];
  write_obs(obs);
}

void MountainCarContinuousEnv::reset_episode(Rng& rng, ObsSpan obs) {
  position_ = rng.uniform(-0.6, -0.4);  // float64 until the first step, as in Gymnasium
  velocity_ = 0.0;
  write_obs(obs);
}

StepResult MountainCarContinuousEnv::step_episode(const Action& action, ObsSpan obs) {
  if (action.values == nullptr) throw std::invalid_argument("MountainCarContinuous-v0 needs an action value");
  const double raw = action.values[0];
  const double force = std::min(std::max(raw, kMinAction), kMaxAction);

  double velocity = velocity_ + (force * kPower - 0.0025 * std::cos(3 * position_));
  velocity = std::min(std::max(velocity, -kMaxSpeed), kMaxSpeed);
  double position = position_ + velocity;
  position = std::min(std::max(position, kMinPosition), kMaxPosition);
  if (position == kMinPosition && velocity < 0) velocity = 0.0;

  StepResult result;
  result.terminated = position >= kGoalPosition && velocity >= kGoalVelocity;
  // Gymnasium charges the unclipped action.
  result.reward = (result.terminated ? 100.0 : 0.0) - raw * raw * 0.1;
  // Gymnasium keeps the state as a float32 array after every step.
  position_ = static_cast<float>(position);
  velocity_ = static_cast<float>(velocity);
  write_obs(obs);
  return result;
}

void MountainCarContinuousEnv::write_obs(ObsSpan obs) const {
  obs[0] = static_cast<float>(position_);
  obs[1] = static_cast<float>(velocity_);
}

}  // namespace rlx
