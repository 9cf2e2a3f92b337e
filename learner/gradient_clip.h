// Clipping a flat gradient tensor to a global norm (PPO, APPO, DQN, the parameter server's apply
// step), with native/gradient_clip.h's formula.
#pragma once

#include <torch/torch.h>

#include "native/gradient_clip.h"

namespace rlx {

// flat *= clip_scale(norm, max_norm), with `norm` a scalar tensor on flat's device (no host sync).
inline void clip_flat_gradient(torch::Tensor& flat, const torch::Tensor& norm, double max_norm) {
  flat.mul_((max_norm / (norm + kClipNormEpsilon)).clamp_max_(1.0));
}

}  // namespace rlx
