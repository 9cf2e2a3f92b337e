// Random actions for any action space, as Gymnasium's Space.sample() draws them.
#pragma once

#include <cstdint>

#include "core/rng.h"
#include "core/space.h"

namespace rlx {

// Fills count actions: indices [count] for Discrete, values [count, space.size()] for Box
// (uniform within finite bounds, standard normal on an unbounded side, as Gymnasium does).
void sample_actions(const Space& space, Rng& rng, int64_t count, int64_t* indices, float* values);

}  // namespace rlx
