// The learners' guard against divergence: a non-finite loss or gradient stops an update before
// any weight changes.
#pragma once

#include <stdexcept>
#include <string>

#include <torch/types.h>

namespace rlx {

// A loss or gradient of an update was NaN or infinite. The learner has changed no weight (PPO
// undoes the whole update; DQN stops before the failing step), so its state is still sound.
class NonFiniteLearnerError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// True when every element of `values` (any float tensor, on any device) is finite; one host sync.
inline bool all_finite(const torch::Tensor& values) { return torch::isfinite(values).all().item<bool>(); }

}  // namespace rlx
