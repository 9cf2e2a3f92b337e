// MuJoCo pictures: MuJoCo's own renderer drawing offscreen in an EGL context with no display
// (Mesa's surfaceless platform and software rasterizer, so it needs no GPU and no X server), a
// camera tracking the body as Gymnasium's does, and a checkered floor so motion shows.
#pragma once

#include <memory>
#include <optional>
#include <string>

#include "watch/env_renderer.h"

namespace rlx {

// The renderer of a MuJoCo env (Hopper-v4, HalfCheetah-v4, Walker2d-v4, Ant-v4,
// InvertedPendulum-v4); nullopt for any other id. Width or height 0: 480. std::runtime_error
// when no EGL display or OpenGL context can be had (naming what failed).
std::optional<std::unique_ptr<EnvRenderer>> make_mujoco_renderer(const std::string& env_id, int width, int height);

}  // namespace rlx
