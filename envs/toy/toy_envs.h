// Toy envs that teach structured spaces: an action mask (Toy/IllegalMoves-v0) and a Dict
// observation with a MultiDiscrete action (Toy/DictSensors-v0). Python twins of both are in
// examples/python_env/ (illegal_moves.py, dict_sensors.py).
#pragma once

#include "envs/registry.h"

namespace rlx {

// Registers Toy/IllegalMoves-v0 and Toy/DictSensors-v0.
void register_toy_envs(EnvRegistrar& registrar);

}  // namespace rlx
