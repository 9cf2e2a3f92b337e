#include "learner/replay_segment_tree.h"

namespace rlx {

int64_t SumTree::find_prefix_sum(double mass) const {
  if (!(total() > 0.0)) throw std::logic_error("SumTree::find_prefix_sum needs a positive total");
  if (!(mass > 0.0)) mass = 0.0;  // also maps NaN to the first positive leaf
  size_t node = 1;
  const auto leaves = static_cast<size_t>(leaves_);
  while (node < leaves) {
    const double left = nodes_[2 * node];
    const double right = nodes_[2 * node + 1];
    // Descend left when the mass falls there, or when the right side holds nothing (a mass
    // at or past the total after rounding then ends at the last positive leaf).
    if (mass < left || !(right > 0.0)) {
      node = 2 * node;
    } else {
      mass -= left;
      node = 2 * node + 1;
    }
  }
  return static_cast<int64_t>(node - leaves);
}

}  // namespace rlx
