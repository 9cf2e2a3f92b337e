#include "envs/mujoco/inverted_pendulum.h"

#include <cmath>

namespace rlx {

EnvSpec InvertedPendulumEnv::make_spec() {
  EnvSpec spec;
  spec.id = kId;
  spec.observation_space = Space::box({4}, -kInf, kInf);
  spec.action_space = Space::box({1}, -3.0f, 3.0f);
  spec.max_episode_steps = 1000;
  spec.reward_threshold = 950.0;
  return spec;
}

InvertedPendulumEnv::InvertedPendulumEnv() : MujocoEnv(make_spec(), kAsset, kFrameSkip, 2, 2) {}

bool InvertedPendulumEnv::is_fallen() const {
  return !state_is_finite() || std::abs(data().qpos[1]) > kMaxUprightAngle;
}

void InvertedPendulumEnv::reset_episode(Rng& rng, ObsSpan obs) {
  reset_with_noise(rng, kResetNoiseScale, /*normal_qvel_noise=*/false);
  write_observation(obs);
}

StepResult InvertedPendulumEnv::step_episode(const Action& action, ObsSpan obs) {
  do_simulation(action);
  StepResult result;
  result.reward = kReward;
  result.terminated = is_fallen();
  write_observation(obs);
  return result;
}

void InvertedPendulumEnv::write_observation(ObsSpan obs) const { write_qpos_qvel(obs, 0, kInf); }

}  // namespace rlx
