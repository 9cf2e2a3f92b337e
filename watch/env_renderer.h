// Pictures of an env's state for videos: rlx evaluate --record. A renderer draws what an env's
// exact_state() holds (Env::snapshot()), so envs stay free of drawing code and workers never
// load a graphics library.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "core/rgb_image.h"
#include "watch/renderable_envs.h"

namespace rlx {

class EnvRenderer {
 public:
  virtual ~EnvRenderer() = default;

  // Draws the state (the env's exact_state()) into a new frame of the renderer's size.
  // std::invalid_argument when the state has the wrong size.
  virtual RgbImage render(const std::vector<double>& state) = 0;

  // The env's own frame rate (Gymnasium's render_fps: 1 / the time one step covers).
  virtual double fps() const = 0;
};

// The renderer of a built-in env (classic control: Cairo drawings like Gymnasium's; MuJoCo:
// MuJoCo's renderer offscreen with a tracking camera), for frames of width x height pixels
// (0: the env's default size). std::invalid_argument naming the env when it has no renderer.
std::unique_ptr<EnvRenderer> make_env_renderer(const std::string& env_id, int width, int height);

}  // namespace rlx
