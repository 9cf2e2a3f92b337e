// HalfCheetah-v4: Gymnasium's planar running cheetah (rlx's own MJCF model, assets/half_cheetah.xml).
#pragma once

#include "envs/mujoco/mujoco_env.h"

namespace rlx {

// Observation (17): qpos[1:] (z, torso angle, 6 joint angles), then qvel (9), unclipped.
// Action (6): back then front thigh, shin, foot torques in [-1, 1].
// Reward: forward velocity - 0.1 * |a|^2. Never terminates; truncated at 1000 steps.
class HalfCheetahEnv final : public MujocoEnv {
 public:
  static constexpr const char* kId = "HalfCheetah-v4";
  static constexpr const char* kAsset = "half_cheetah.xml";
  static constexpr int kFrameSkip = 5;
  static constexpr double kForwardRewardWeight = 1.0;
  static constexpr double kCtrlCostWeight = 0.1;
  static constexpr double kResetNoiseScale = 0.1;

  // The registered spec: Box(17) observations, Box(-1, 1, (6,)) actions, 1000 steps, threshold 4800.
  static EnvSpec make_spec();

  // Uses the process-wide shared model; throws std::runtime_error if it fails to load.
  HalfCheetahEnv();

 protected:
  void reset_episode(Rng& rng, ObsSpan obs) override;
  StepResult step_episode(const Action& action, ObsSpan obs) override;
  void write_observation(ObsSpan obs) const override;
};

}  // namespace rlx
