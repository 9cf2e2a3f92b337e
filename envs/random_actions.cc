#include "envs/random_actions.h"

#include <cmath>
#include <stdexcept>

namespace rlx {

namespace {

// One Box element: uniform when bounded on both sides, shifted exponential when bounded on
// one side, normal when unbounded (Gymnasium's Box.sample rules).
float sample_box_element(float low, float high, Rng& rng) {
  const bool has_low = std::isfinite(low), has_high = std::isfinite(high);
  if (has_low && has_high) return static_cast<float>(rng.uniform(low, high));
  if (!has_low && !has_high) return static_cast<float>(rng.normal());
  const double exponential = -std::log(1.0 - rng.uniform());
  return static_cast<float>(has_low ? low + exponential : high - exponential);
}

}  // namespace

void sample_actions(const Space& space, Rng& rng, int64_t count, int64_t* indices, float* values) {
  if (space.is_discrete()) {
    if (!indices) throw std::invalid_argument("sample_actions: a Discrete space needs an index buffer");
    for (int64_t i = 0; i < count; ++i) indices[i] = rng.uniform_int(space.n);
    return;
  }
  if (!values) throw std::invalid_argument("sample_actions: a Box space needs a value buffer");
  const int64_t size = space.size();
  for (int64_t i = 0; i < count; ++i) {
    for (int64_t j = 0; j < size; ++j) values[i * size + j] = sample_box_element(space.low[j], space.high[j], rng);
  }
}

}  // namespace rlx
