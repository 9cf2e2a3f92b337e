// Random actions for any action space, as Gymnasium's Space.sample() draws them.
#pragma once

#include <cstdint>

#include "core/rng.h"
#include "core/space.h"

namespace rlx {

// Fills count actions: indices [count, D] for indexed spaces (Discrete D = 1, MultiDiscrete and
// MultiBinary D = space.size()), each uniform from 0 (the space's start is added by VectorEnv),
// or values [count, space.size()] for Box (uniform within finite bounds, standard normal on an
// unbounded side, as Gymnasium does). With masks ([count, sum of categories] bytes, nonzero =
// legal; null: none), each element is uniform among its legal actions, as Gymnasium's
// sample(mask=...) draws.
void sample_actions(const Space& space, Rng& rng, int64_t count, int64_t* indices, float* values,
                    const uint8_t* masks = nullptr, int64_t mask_stride = 0);

}  // namespace rlx
