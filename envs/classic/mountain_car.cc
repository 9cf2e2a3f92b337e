#include "envs/classic/mountain_car.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

namespace rlx {
namespace {

constexpr double kMinPosition = -1.2;
constexpr double kMaxPosition = 0.6;
constexpr double kMaxSpeed = 0.07;
constexpr double kGoalPosition = 0.5;
constexpr double kGoalVelocity = 0.0;
constexpr double kForce = 0.001;
constexpr double kGravity = 0.0025;

}  // namespace

MountainCarEnv::MountainCarEnv() : ClassicEnv(default_spec()) {}

EnvSpec MountainCarEnv::default_spec() {
  EnvSpec spec;
  spec.id = "MountainCar-v0";
  spec.observation_space = Space::box({2}, {static_cast<float>(kMinPosition), static_cast<float>(-kMaxSpeed)},
                                      {static_cast<float>(kMaxPosition), static_cast<float>(kMaxSpeed)});
  spec.action_space = Space::discrete(3);
  spec.max_episode_steps = 200;
  spec.reward_threshold = -110.0;
  return spec;
}

std::vector<double> MountainCarEnv::state() const { return {position_, velocity_}; }

void MountainCarEnv::set_physical_state(const std::vector<double>& state, ObsSpan obs) {
  if (state.size() != kStateSize) {
    throw std::invalid_argument("MountainCar-v0 state needs 2 values, got " + std::to_string(state.size()));
  }
  position_ = state[0];
  velocity_ = state[1];
  write_obs(obs);
}

void MountainCarEnv::reset_episode(Rng& rng, ObsSpan obs) {
  position_ = rng.uniform(-0.6, -0.4);
  velocity_ = 0.0;
  write_obs(obs);
}

StepResult MountainCarEnv::step_episode(const Action& action, ObsSpan obs) {
  if (action.index < 0 || action.index > 2) {
    throw std::invalid_argument("MountainCar-v0 action must be 0, 1 or 2, got " + std::to_string(action.index));
  }
  velocity_ += static_cast<double>(action.index - 1) * kForce + std::cos(3 * position_) * (-kGravity);
  velocity_ = std::min(std::max(velocity_, -kMaxSpeed), kMaxSpeed);
  position_ += velocity_;
  position_ = std::min(std::max(position_, kMinPosition), kMaxPosition);
  if (position_ == kMinPosition && velocity_ < 0) velocity_ = 0.0;
  write_obs(obs);

  StepResult result;
  result.terminated = position_ >= kGoalPosition && velocity_ >= kGoalVelocity;
  result.reward = -1.0;
  return result;
}

void MountainCarEnv::write_obs(ObsSpan obs) const {
  obs[0] = static_cast<float>(position_);
  obs[1] = static_cast<float>(velocity_);
}

}  // namespace rlx
