#include "envs/mujoco/ant.h"

#include <stdexcept>

namespace rlx {

EnvSpec AntEnv::make_spec() {
  EnvSpec spec;
  spec.id = kId;
  spec.observation_space = Space::box({27}, -kInf, kInf);
  spec.action_space = Space::box({8}, -1.0f, 1.0f);
  spec.max_episode_steps = 1000;
  spec.reward_threshold = 6000.0;
  return spec;
}

AntEnv::AntEnv() : MujocoEnv(make_spec(), kAsset, kFrameSkip, 15, 14) {
  torso_body_ = mj_name2id(&model(), mjOBJ_BODY, "torso");
  if (torso_body_ < 0) throw std::runtime_error(std::string(kId) + ": model '" + kAsset + "' has no body 'torso'");
}

double AntEnv::torso_x() const { return data().xpos[3 * torso_body_]; }

bool AntEnv::is_healthy() const {
  const double z = data().qpos[2];
  return state_is_finite() && kMinHealthyZ <= z && z <= kMaxHealthyZ;
}

void AntEnv::reset_episode(Rng& rng, ObsSpan obs) {
  reset_with_noise(rng, kResetNoiseScale, /*normal_qvel_noise=*/true);
  write_observation(obs);
}

StepResult AntEnv::step_episode(const Action& action, ObsSpan obs) {
  const double x_before = torso_x();
  do_simulation(action);
  const double x_after = torso_x();
  const double forward_reward = (x_after - x_before) / dt();
  StepResult result;
  result.reward = (forward_reward + kHealthyReward) - control_cost(action, kCtrlCostWeight);
  result.terminated = !is_healthy();
  write_observation(obs);
  return result;
}

void AntEnv::write_observation(ObsSpan obs) const { write_qpos_qvel(obs, 2, kInf); }

}  // namespace rlx
