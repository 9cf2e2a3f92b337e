// Ant-v4: Gymnasium's four-legged walker (rlx's own MJCF model, assets/ant.xml), with v4's
// defaults: use_contact_forces=False, so no contact forces in the observation or the reward.
#pragma once

#include "envs/mujoco/mujoco_env.h"

namespace rlx {

// Observation (27): qpos[2:] (torso z, orientation quaternion, 8 joint angles), then qvel (14).
// Action (8): hip/ankle torques in [-1, 1], in the model's actuator order (hip_4, ankle_4, hip_1,
// ankle_1, hip_2, ankle_2, hip_3, ankle_3). Reward: torso x velocity (from its body frame's xpos,
// as Gymnasium reads it after mj_step) + 1 - 0.5 * |a|^2. Terminates when unhealthy; truncated at
// 1000 steps.
class AntEnv final : public MujocoEnv {
 public:
  static constexpr const char* kId = "Ant-v4";
  static constexpr const char* kAsset = "ant.xml";
  static constexpr int kFrameSkip = 5;
  static constexpr double kCtrlCostWeight = 0.5;
  static constexpr double kHealthyReward = 1.0;
  static constexpr double kMinHealthyZ = 0.2;
  static constexpr double kMaxHealthyZ = 1.0;
  static constexpr double kResetNoiseScale = 0.1;

  // The registered spec: Box(27) observations, Box(-1, 1, (8,)) actions, 1000 steps, threshold 6000.
  static EnvSpec make_spec();

  // Uses the process-wide shared model; throws std::runtime_error if it fails to load.
  AntEnv();

  // Gymnasium's test on the current state: all of qpos and qvel finite and 0.2 <= z <= 1.
  bool is_healthy() const;

  // The torso body's frame position x (data.xpos), which the forward reward differentiates.
  double torso_x() const;

 protected:
  void reset_episode(Rng& rng, ObsSpan obs) override;
  StepResult step_episode(const Action& action, ObsSpan obs) override;
  void write_observation(ObsSpan obs) const override;

 private:
  int torso_body_ = -1;
};

}  // namespace rlx
