// Hopper-v4: Gymnasium's one-legged planar hopper (rlx's own MJCF model, assets/hopper.xml).
#pragma once

#include "envs/mujoco/planar_walker.h"

namespace rlx {

// Observation (11): qpos[1:] (z, torso angle, 3 joint angles), then qvel (6) clipped to [-10, 10].
// Action (3): thigh, leg, foot torques in [-1, 1]. Reward: forward velocity + 1 - 1e-3 * |a|^2.
// Terminates when unhealthy (see is_healthy); truncated at 1000 steps.
class HopperEnv final : public PlanarWalkerEnv {
 public:
  static constexpr const char* kId = "Hopper-v4";
  static constexpr const char* kAsset = "hopper.xml";
  static constexpr double kHealthyStateLimit = 100.0;  // |qpos[2:], qvel| < 100
  static constexpr double kMinHealthyZ = 0.7;
  static constexpr double kMaxHealthyAngle = 0.2;  // |torso angle| < 0.2

  // The registered spec: Box(11) observations, Box(-1, 1, (3,)) actions, 1000 steps, threshold 3800.
  static EnvSpec make_spec();

  // Uses the process-wide shared model; throws std::runtime_error if it fails to load.
  HopperEnv();

  // Gymnasium's test on the current state: -100 < qpos[2:], qvel < 100, z > 0.7, |angle| < 0.2.
  bool is_healthy() const override;
};

}  // namespace rlx
