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

Walker2dEnv::Walker2dEnv() : PlanarWalkerEnv(make_spec(), kAsset, 9, 9) {}

bool Walker2dEnv::is_healthy() const {
  const double z = data().qpos[1];
  const double angle = data().qpos[2];
  return kMinHealthyZ < z && z < kMaxHealthyZ && -kMaxHealthyAngle < angle && angle < kMaxHealthyAngle;
}

}  // namespace rlx
