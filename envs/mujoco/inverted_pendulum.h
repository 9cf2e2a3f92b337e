// InvertedPendulum-v4: Gymnasium's cart-pole on MuJoCo (rlx's own MJCF model,
// assets/inverted_pendulum.xml).
#pragma once

#include "envs/mujoco/mujoco_env.h"

namespace rlx {

// Observation (4): cart position, pole angle, cart velocity, pole angular velocity.
// Action (1): cart force in [-3, 3]. Reward: 1 every step (v4 also pays it on the terminating
// step). Terminates when the state is not finite or |pole angle| > 0.2; truncated at 1000 steps.
class InvertedPendulumEnv final : public MujocoEnv {
 public:
  static constexpr const char* kId = "InvertedPendulum-v4";
  static constexpr const char* kAsset = "inverted_pendulum.xml";
  static constexpr int kFrameSkip = 2;
  static constexpr double kReward = 1.0;
  static constexpr double kMaxUprightAngle = 0.2;
  static constexpr double kResetNoiseScale = 0.01;

  // The registered spec: Box(4) observations, Box(-3, 3, (1,)) actions, 1000 steps, threshold 950.
  static EnvSpec make_spec();

  // Uses the process-wide shared model; throws std::runtime_error if it fails to load.
  InvertedPendulumEnv();

  // True when the current state is terminal: not finite, or |pole angle| > 0.2.
  bool is_fallen() const;

 protected:
  void reset_episode(Rng& rng, ObsSpan obs) override;
  StepResult step_episode(const Action& action, ObsSpan obs) override;
  void write_observation(ObsSpan obs) const override;
};

}  // namespace rlx
