// Walker2d-v4: Gymnasium's two-legged planar walker (rlx's own MJCF model, assets/walker2d.xml).
#pragma once

#include "envs/mujoco/planar_walker.h"

namespace rlx {

// Observation (17): qpos[1:] (z, torso angle, 6 joint angles), then qvel (9) clipped to [-10, 10].
// Action (6): right then left thigh, leg, foot torques in [-1, 1].
// Reward: forward velocity + 1 - 1e-3 * |a|^2. Terminates when unhealthy; truncated at 1000 steps.
class Walker2dEnv final : public PlanarWalkerEnv {
 public:
  static constexpr const char* kId = "Walker2d-v4";
  static constexpr const char* kAsset = "walker2d.xml";
  static constexpr double kMinHealthyZ = 0.8;
  static constexpr double kMaxHealthyZ = 2.0;
  static constexpr double kMaxHealthyAngle = 1.0;  // |torso angle| < 1

  // The registered spec: Box(17) observations, Box(-1, 1, (6,)) actions, 1000 steps, no threshold.
  static EnvSpec make_spec();

  // Uses the process-wide shared model; throws std::runtime_error if it fails to load.
  Walker2dEnv();

  // Gymnasium's test on the current state: 0.8 < z < 2 and -1 < torso angle < 1.
  bool is_healthy() const override;
};

}  // namespace rlx
