#include "envs/classic/classic_control.h"

#include <memory>
#include <string>
#include <vector>

#include "envs/classic/acrobot.h"
#include "envs/classic/cart_pole.h"
#include "envs/classic/mask_velocity.h"
#include "envs/classic/mountain_car.h"
#include "envs/classic/mountain_car_continuous.h"
#include "envs/classic/pendulum.h"

namespace rlx {
namespace {

// Registers T under its default spec with a factory making fresh instances.
template <typename T>
void add_env(EnvRegistrar& registrar) {
  registrar.add(T::default_spec(), [] { return std::make_unique<T>(); });
}

// Registers T's partially observable variant `id` (RL Zoo's <Name>NoVel-v<N>): T with the
// observation entries at `velocities` hidden.
template <typename T>
void add_no_velocity_env(EnvRegistrar& registrar, const std::string& id, const std::vector<int64_t>& velocities) {
  registrar.add(MaskVelocityEnv::masked_spec(T::default_spec(), id),
                [id, velocities] { return std::make_unique<MaskVelocityEnv>(id, std::make_unique<T>(), velocities); });
}

}  // namespace

void register_classic_control(EnvRegistrar& registrar) {
  add_env<CartPoleEnv>(registrar);
  add_env<AcrobotEnv>(registrar);
  add_env<MountainCarEnv>(registrar);
  add_env<MountainCarContinuousEnv>(registrar);
  add_env<PendulumEnv>(registrar);
  // RL Zoo's velocity indices (MaskVelocityWrapper.velocity_indices).
  add_no_velocity_env<CartPoleEnv>(registrar, "CartPoleNoVel-v1", {1, 3});  // x_dot, theta_dot
  add_no_velocity_env<PendulumEnv>(registrar, "PendulumNoVel-v1", {2});     // theta_dot
  add_no_velocity_env<MountainCarContinuousEnv>(registrar, "MountainCarContinuousNoVel-v0", {1});  // velocity
}

}  // namespace rlx
