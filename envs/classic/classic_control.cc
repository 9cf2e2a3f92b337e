#include "envs/classic/classic_control.h"

#include <memory>

#include "envs/classic/acrobot.h"
#include "envs/classic/cart_pole.h"
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

}  // namespace

void register_classic_control(EnvRegistrar& registrar) {
  add_env<CartPoleEnv>(registrar);
  add_env<AcrobotEnv>(registrar);
  add_env<MountainCarEnv>(registrar);
  add_env<MountainCarContinuousEnv>(registrar);
  add_env<PendulumEnv>(registrar);
}

}  // namespace rlx
