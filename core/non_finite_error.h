// NonFiniteLearnerError: the learners' signal that an update met a NaN or infinite loss or
// gradient and was stopped before any weight changed. Torch-free, so the torch-free learner
// (native/) and the trainer share it with the LibTorch learners (learner/non_finite.h).
#pragma once

#include <stdexcept>

namespace rlx {

// A loss or gradient of an update was NaN or infinite. The learner has changed no weight (PPO
// undoes the whole update; DQN stops before the failing step), so its state is still sound.
class NonFiniteLearnerError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

}  // namespace rlx
