// The learner's columns of a PPO results row, shared by the LibTorch and the native learner.
#pragma once

#include <cstdint>

#include <nlohmann/json.hpp>

#include "native/ppo_update_metrics.h"

namespace rlx {

// {"policy_loss", "vf_loss", "entropy", "approx_kl", "clip_fraction", "explained_variance", "lr",
//  "clip_param", "grad_norm", "num_minibatch_steps", "policy_version"} of one update, and with a
// loss scale (precision fp16) "loss_scale" and "skipped_steps".
nlohmann::json ppo_learner_columns(const PpoUpdateMetrics& m, uint64_t policy_version);

}  // namespace rlx
