#include "envs/mujoco/mujoco_envs.h"

#include <memory>

#include "envs/mujoco/ant.h"
#include "envs/mujoco/half_cheetah.h"
#include "envs/mujoco/hopper.h"
#include "envs/mujoco/inverted_pendulum.h"
#include "envs/mujoco/walker2d.h"

namespace rlx {

// Specs are built from constants (no model is compiled at registration); each env checks at
// construction that its compiled model agrees with the spec.
void register_mujoco_envs(EnvRegistrar& registrar) {
  registrar.add(HopperEnv::make_spec(), [] { return std::make_unique<HopperEnv>(); });
  registrar.add(HalfCheetahEnv::make_spec(), [] { return std::make_unique<HalfCheetahEnv>(); });
  registrar.add(Walker2dEnv::make_spec(), [] { return std::make_unique<Walker2dEnv>(); });
  registrar.add(AntEnv::make_spec(), [] { return std::make_unique<AntEnv>(); });
  registrar.add(InvertedPendulumEnv::make_spec(), [] { return std::make_unique<InvertedPendulumEnv>(); });
}

}  // namespace rlx
