// Classic-control tasks with Gymnasium 0.29's ids and dynamics.
#pragma once

#include "envs/registry.h"

namespace rlx {

// Registers CartPole-v1, Acrobot-v1, MountainCar-v0, MountainCarContinuous-v0, Pendulum-v1, and
// RL Zoo's partially observable CartPoleNoVel-v1, PendulumNoVel-v1 and
// MountainCarContinuousNoVel-v0 (envs/classic/mask_velocity.h).
void register_classic_control(EnvRegistrar& registrar);

}  // namespace rlx
