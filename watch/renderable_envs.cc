// The built-in envs with renderers (classic control: Cairo; MuJoCo), and the check of an env
// that draws itself (MinAtar, plugins, Python envs).
#include "watch/renderable_envs.h"

#include <algorithm>
#include <memory>
#include <vector>

#include "envs/python_env.h"
#include "envs/registry.h"

namespace rlx {

std::vector<std::string> renderable_env_ids() {
  return {"Acrobot-v1", "Ant-v4", "CartPole-v1", "CartPoleNoVel-v1", "HalfCheetah-v4", "Hopper-v4",
          "InvertedPendulum-v4", "MountainCar-v0", "MountainCarContinuous-v0", "MountainCarContinuousNoVel-v0",
          "Pendulum-v1", "PendulumNoVel-v1", "Walker2d-v4"};
}

bool is_renderable_env(const std::string& env_id) {
  const std::vector<std::string> ids = renderable_env_ids();
  return std::find(ids.begin(), ids.end(), env_id) != ids.end();
}

bool can_film_env(const std::string& env_id) {
  if (is_renderable_env(env_id)) return true;
  const ScopedPythonRenderMode render_mode;
  const std::unique_ptr<Env> env = global_env_registry().make(env_id);
  std::vector<float> floats(static_cast<size_t>(env->observation_layout().float_slots));
  std::vector<uint8_t> bytes(static_cast<size_t>(env->observation_layout().byte_slots));
  env->reset(0, ObsRow(floats.data(), bytes.data()));
  return env->render().has_value();
}

}  // namespace rlx
