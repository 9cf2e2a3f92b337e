// Clipping a gradient to a global norm, torch::nn::utils::clip_grad_norm_'s formula: the one
// definition the native learners and (through learner/gradient_clip.h) LibTorch's share.
#pragma once

#include <algorithm>

namespace rlx {

// clip_grad_norm_'s epsilon: a gradient of norm 0 is left as it is.
inline constexpr double kClipNormEpsilon = 1e-6;

// The factor that brings a gradient of global norm `norm` to at most `max_norm` (1 within it),
// in T's arithmetic (float for the native learners' float path).
template <typename T>
T clip_scale(T norm, T max_norm) {
  return std::min(max_norm / (norm + static_cast<T>(kClipNormEpsilon)), static_cast<T>(1));
}

}  // namespace rlx
