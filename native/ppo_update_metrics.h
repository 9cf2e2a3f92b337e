// PpoUpdateMetrics: what one PPO update reports, the same for the LibTorch learner
// (learner/ppo_learner.h) and the torch-free one (native/native_ppo_learner.h). Torch-free.
#pragma once

#include <cstdint>

namespace rlx {

// Means over the update's minibatch steps unless noted.
struct PpoUpdateMetrics {
  double policy_loss = 0.0;
  double vf_loss = 0.0;
  double entropy = 0.0;
  double approx_kl = 0.0;
  double clip_fraction = 0.0;
  double kl_to_target = 0.0;        // APPO's KL(target || pi) term (0 without it)
  double explained_variance = 0.0;  // of the returns by the pre-update values; NaN when the returns are constant
  double lr = 0.0;                  // used in this update
  double clip_param = 0.0;          // used in this update
  double grad_norm = 0.0;           // before clipping
  int64_t num_samples = 0;
  int64_t num_minibatch_steps = 0;  // applied (the means are over these)
  // LibTorch's learner with precision fp16 (learner/mixed_precision.h): minibatch steps skipped
  // for an inf or NaN gradient, and the dynamic loss scale after the update; else 0 and 0.
  int64_t skipped_steps = 0;
  double loss_scale = 0.0;
};

}  // namespace rlx
