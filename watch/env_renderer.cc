// make_env_renderer: the classic-control drawings, else MuJoCo's renderer.
#include "watch/env_renderer.h"

#include <stdexcept>

#include "watch/classic_renderer.h"
#include "watch/mujoco_renderer.h"

namespace rlx {

std::unique_ptr<EnvRenderer> make_env_renderer(const std::string& env_id, int width, int height) {
  if (width < 0 || height < 0 || width > 8192 || height > 8192) {
    throw std::invalid_argument("a frame of " + std::to_string(width) + " x " + std::to_string(height) +
                                " pixels: width and height must be in [1, 8192] (0: the env's default)");
  }
  if (auto classic = make_classic_renderer(env_id, width, height)) return std::move(*classic);
  if (auto mujoco = make_mujoco_renderer(env_id, width, height)) return std::move(*mujoco);
  std::string known;
  for (const std::string& id : renderable_env_ids()) known += (known.empty() ? "" : ", ") + id;
  throw std::invalid_argument("env '" + env_id + "' has no renderer; rlx draws " + known);
}

}  // namespace rlx
