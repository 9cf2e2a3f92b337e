#include "envs/mujoco/hopper.h"

namespace rlx {

EnvSpec HopperEnv::make_spec() {
  EnvSpec spec;
  spec.id = kId;
  spec.observation_space = Space::box({11}, -kInf, kInf);
  spec.action_space = Space::box({3}, -1.0f, 1.0f);
  spec.max_episode_steps = 1000;
  spec.reward_threshold = 3800.0;
  return spec;
}

HopperEnv::HopperEnv() : PlanarWalkerEnv(make_spec(), kAsset, 6, 6) {}

bool HopperEnv::is_healthy() const {
  const mjModel& m = model();
  const mjData& d = data();
  for (int i = 2; i < m.nq; ++i) {
    if (!(-kHealthyStateLimit < d.qpos[i] && d.qpos[i] < kHealthyStateLimit)) return false;
  }
  for (int i = 0; i < m.nv; ++i) {
    if (!(-kHealthyStateLimit < d.qvel[i] && d.qvel[i] < kHealthyStateLimit)) return false;
  }
  const double z = d.qpos[1];
  const double angle = d.qpos[2];
  return kMinHealthyZ < z && -kMaxHealthyAngle < angle && angle < kMaxHealthyAngle;
}

}  // namespace rlx
