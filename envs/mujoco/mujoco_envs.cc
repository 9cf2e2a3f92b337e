// Scaffold: replaced by the MuJoCo implementation.
#include "envs/mujoco/mujoco_envs.h"
namespace rlx {
void register_mujoco_envs(EnvRegistrar&) {}
}  // namespace rlx
