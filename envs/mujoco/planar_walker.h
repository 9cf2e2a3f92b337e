// PlanarWalkerEnv: what Hopper-v4 and Walker2d-v4 share (Gymnasium's planar walkers): the
// reward forward velocity + healthy reward - control cost, termination when unhealthy, uniform
// reset noise, and observations qpos[1:] then qvel clipped to [-10, 10]. A task adds its model,
// spec and health test.
#pragma once

#include "envs/mujoco/mujoco_env.h"

namespace rlx {

class PlanarWalkerEnv : public MujocoEnv {
 public:
  static constexpr int kFrameSkip = 4;
  static constexpr double kForwardRewardWeight = 1.0;
  static constexpr double kCtrlCostWeight = 1e-3;
  static constexpr double kHealthyReward = 1.0;
  static constexpr double kResetNoiseScale = 5e-3;
  static constexpr double kQvelObsLimit = 10.0;

  // Gymnasium's health test of the task on the current state (false ends the episode).
  virtual bool is_healthy() const = 0;

 protected:
  // Loads the asset's model (nq / nv coordinates, checked by MujocoEnv) with kFrameSkip.
  PlanarWalkerEnv(EnvSpec spec, const char* asset_name, int nq, int nv);

  void reset_episode(Rng& rng, ObsSpan obs) override;
  StepResult step_episode(const Action& action, ObsSpan obs) override;
  void write_observation(ObsSpan obs) const override;
};

}  // namespace rlx
