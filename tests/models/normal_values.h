// Seeded Gaussian test data for the kernel tests (tests/models/*_test.cc).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "core/rng.h"

namespace rlx_test {

// count floats drawn from N(0, scale^2) by an rlx::Rng seeded with seed.
inline std::vector<float> normal_values(size_t count, uint64_t seed, double scale) {
  rlx::Rng rng(seed);
  std::vector<float> values(count);
  for (float& v : values) v = static_cast<float>(scale * rng.normal());
  return values;
}

}  // namespace rlx_test
