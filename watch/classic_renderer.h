// Classic-control pictures drawn with Cairo after Gymnasium's: CartPole's cart and pole on its
// track, Pendulum's rod, Acrobot's two links under the target line, and the car on Mountain
// Car's hill with its flag.
#pragma once

#include <memory>
#include <optional>
#include <string>

#include "watch/env_renderer.h"

namespace rlx {

// The renderer of a classic-control env (CartPole-v1, Pendulum-v1, Acrobot-v1, MountainCar-v0,
// MountainCarContinuous-v0, and the NoVel variants of the first, second and last, drawn as their
// base envs); nullopt for any other id. Width or height 0: Gymnasium's size.
std::optional<std::unique_ptr<EnvRenderer>> make_classic_renderer(const std::string& env_id, int width, int height);

}  // namespace rlx
