#include "envs/mujoco/walker2d.h"

namespace rlx {

EnvSpec Walker2dEnv::make_spec() {
  EnvSpec spec;
  spec.id = kId;
  spec.observation_space = Space::box({17}, -kInf, kInf);
  spec.action_space = Space::box({6}, -1.0f, 1.0f);
  spec.max_episode_steps = 1000;
  return spec;
}

Walker2dEnv::Walker2dEnv() : MujocoEnv(make_spec(), kAsset, kFrameSkip, 9, 9) {}

bool Walker2dEnv::is_healthy() const {
  const double z = data().qpos[1];
  const double angle = data().qpos[2];
  return kMinHealthyZ < z && z < kMaxHealthyZ && -kMaxHealthyAngle < angle && angle < kMaxHealthyAngle;
}

void Walker2dEnv::reset_episode(Rng& rng, float* obs) {
  reset_with_noise(rng, kResetNoiseScale, /*normal_qvel_noise=*/false);
  write_observation(obs);
}

StepResult Walker2dEnv::step_episode(const Action& action, float* obs) {
  const double forward_reward = simulate_with_forward_reward(action, kForwardRewardWeight);
  StepResult result;
  result.reward = (forward_reward + kHealthyReward) - control_cost(action, kCtrlCostWeight);
  result.terminated = !is_healthy();
  write_observation(obs);
  return result;
}

void Walker2dEnv::write_observation(float* obs) const { write_qpos_qvel(obs, 1, kQvelObsLimit); }

}  // namespace rlx
