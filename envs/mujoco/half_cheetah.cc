#include "envs/mujoco/half_cheetah.h"

namespace rlx {

EnvSpec HalfCheetahEnv::make_spec() {
  EnvSpec spec;
  spec.id = kId;
  spec.observation_space = Space::box({17}, -kInf, kInf);
  spec.action_space = Space::box({6}, -1.0f, 1.0f);
  spec.max_episode_steps = 1000;
  spec.reward_threshold = 4800.0;
  return spec;
}

HalfCheetahEnv::HalfCheetahEnv() : MujocoEnv(make_spec(), kAsset, kFrameSkip, 9, 9) {}

void HalfCheetahEnv::reset_episode(Rng& rng, ObsSpan obs) {
  reset_with_noise(rng, kResetNoiseScale, /*normal_qvel_noise=*/true);
  write_observation(obs);
}

StepResult HalfCheetahEnv::step_episode(const Action& action, ObsSpan obs) {
  const double forward_reward = simulate_with_forward_reward(action, kForwardRewardWeight);
  StepResult result;
  result.reward = forward_reward - control_cost(action, kCtrlCostWeight);
  write_observation(obs);
  return result;
}

void HalfCheetahEnv::write_observation(ObsSpan obs) const { write_qpos_qvel(obs, 1, kInf); }

}  // namespace rlx
