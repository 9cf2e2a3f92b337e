#include "envs/mujoco/planar_walker.h"

#include <utility>

namespace rlx {

PlanarWalkerEnv::PlanarWalkerEnv(EnvSpec spec, const char* asset_name, int nq, int nv)
    : MujocoEnv(std::move(spec), asset_name, kFrameSkip, nq, nv) {}

void PlanarWalkerEnv::reset_episode(Rng& rng, ObsSpan obs) {
  reset_with_noise(rng, kResetNoiseScale, /*normal_qvel_noise=*/false);
  write_observation(obs);
}

StepResult PlanarWalkerEnv::step_episode(const Action& action, ObsSpan obs) {
  const double forward_reward = simulate_with_forward_reward(action, kForwardRewardWeight);
  StepResult result;
  result.reward = (forward_reward + kHealthyReward) - control_cost(action, kCtrlCostWeight);
  result.terminated = !is_healthy();
  write_observation(obs);
  return result;
}

void PlanarWalkerEnv::write_observation(ObsSpan obs) const { write_qpos_qvel(obs, 1, kQvelObsLimit); }

}  // namespace rlx
