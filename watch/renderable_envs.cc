// The built-in envs with renderers: classic control (Cairo) and MuJoCo.
#include "watch/renderable_envs.h"

#include <algorithm>

namespace rlx {

std::vector<std::string> renderable_env_ids() {
  return {"Acrobot-v1",     "Ant-v4",         "CartPole-v1",              "HalfCheetah-v4", "Hopper-v4",
          "InvertedPendulum-v4", "MountainCar-v0", "MountainCarContinuous-v0", "Pendulum-v1",    "Walker2d-v4"};
}

bool is_renderable_env(const std::string& env_id) {
  const std::vector<std::string> ids = renderable_env_ids();
  return std::find(ids.begin(), ids.end(), env_id) != ids.end();
}

}  // namespace rlx
