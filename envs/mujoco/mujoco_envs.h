// MuJoCo locomotion tasks following Gymnasium's v4 tasks, on MJCF models written for rlx.
#pragma once

#include "envs/registry.h"

namespace rlx {

// Registers Hopper-v4, HalfCheetah-v4, Walker2d-v4, Ant-v4, InvertedPendulum-v4.
void register_mujoco_envs(EnvRegistrar& registrar);

}  // namespace rlx
