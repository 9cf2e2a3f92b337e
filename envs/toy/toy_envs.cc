#include "envs/toy/toy_envs.h"

#include <memory>

#include "envs/toy/dict_sensors.h"
#include "envs/toy/illegal_moves.h"
#include "envs/toy/pixel_quadrants.h"

namespace rlx {

void register_toy_envs(EnvRegistrar& registrar) {
  registrar.add(IllegalMovesEnv::default_spec(), [] { return std::make_unique<IllegalMovesEnv>(); });
  registrar.add(DictSensorsEnv::default_spec(), [] { return std::make_unique<DictSensorsEnv>(); });
  registrar.add(PixelQuadrantsEnv::default_spec(), [] { return std::make_unique<PixelQuadrantsEnv>(); });
}

}  // namespace rlx
