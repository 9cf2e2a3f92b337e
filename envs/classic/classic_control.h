// Classic-control tasks with Gymnasium 0.29's ids and dynamics.
#pragma once

#include "envs/registry.h"

namespace rlx {

// Registers CartPole-v1, Acrobot-v1, MountainCar-v0, MountainCarContinuous-v0, Pendulum-v1.
void register_classic_control(EnvRegistrar& registrar);

}  // namespace rlx
