#include "envs/random_actions.h"

#include <cmath>
#include <stdexcept>
#include <vector>

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

// Uniform among the legal of n categories (all when mask is null; the first when none is legal).
int64_t sample_legal(int64_t n, const uint8_t* mask, Rng& rng) {
  if (mask == nullptr) return rng.uniform_int(n);
  int64_t legal = 0;
  for (int64_t j = 0; j < n; ++j) legal += mask[j] != 0;
  if (legal == 0) return 0;
  int64_t pick = rng.uniform_int(legal);
  for (int64_t j = 0; j < n; ++j) {
    if (mask[j] != 0 && pick-- == 0) return j;
  }
  return 0;
}

}  // namespace

void sample_actions(const Space& space, Rng& rng, int64_t count, int64_t* indices, float* values, const uint8_t* masks,
                    int64_t mask_stride) {
  const std::vector<int64_t> categories = action_categories(space);
  if (!categories.empty()) {
    if (!indices) throw std::invalid_argument("sample_actions: an indexed action space needs an index buffer");
    const auto elements = static_cast<int64_t>(categories.size());
    for (int64_t i = 0; i < count; ++i) {
      const uint8_t* mask = masks == nullptr ? nullptr : masks + i * mask_stride;
      for (int64_t e = 0; e < elements; ++e) {
        indices[i * elements + e] = sample_legal(categories[static_cast<size_t>(e)], mask, rng);
        if (mask != nullptr) mask += categories[static_cast<size_t>(e)];
      }
    }
    return;
  }
  if (!values) throw std::invalid_argument("sample_actions: a Box space needs a value buffer");
  const int64_t size = space.size();
  for (int64_t i = 0; i < count; ++i) {
    for (int64_t j = 0; j < size; ++j) values[i * size + j] = sample_box_element(space.low[j], space.high[j], rng);
  }
}

}  // namespace rlx
