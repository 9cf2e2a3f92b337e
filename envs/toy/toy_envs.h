// Toy envs that teach structured spaces: an action mask (Toy/IllegalMoves-v0), a Dict
// observation with a MultiDiscrete action (Toy/DictSensors-v0), and a Dict with an image key for
// the cnn encoder (Toy/PixelQuadrants-v0). Python twins of the first two are in
// examples/python_env/ (illegal_moves.py, dict_sensors.py).
#pragma once

#include "envs/registry.h"

namespace rlx {

// Registers Toy/IllegalMoves-v0, Toy/DictSensors-v0 and Toy/PixelQuadrants-v0.
void register_toy_envs(EnvRegistrar& registrar);

}  // namespace rlx
