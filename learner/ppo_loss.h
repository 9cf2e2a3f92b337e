// The PPO objective for one minibatch: clipped surrogate, optionally clipped value loss and the
// entropy bonus, with per-minibatch advantage normalisation.
//
//   ratio       = exp(log_probs - old_log_probs)
//   A           = advantages, or (A - mean) / (std + 1e-8) when normalize_advantages and B > 1
//                 (std unbiased, as SB3 and CleanRL)
//   policy_loss = -mean(min(A * ratio, A * clip(ratio, 1 - clip_param, 1 + clip_param)))
//   vf_loss     = mean((V - R)^2), or with vf_clip_param > 0 (PPO2 / CleanRL value clipping)
//                 mean(max((V - R)^2, (V_old + clip(V - V_old, -vf_clip, vf_clip) - R)^2))
//                 (a plain mean squared error, SB3's convention; CleanRL's has an extra 0.5)
//   total       = policy_loss + vf_loss_coeff * vf_loss - entropy_coeff * mean(entropy)
//                 + kl_coeff * mean(kl_to_target)   (APPO's KL term, when kl_to_target is given)
//   approx_kl   = mean((ratio - 1) - log ratio),  clip_fraction = share of samples whose ratio
//                 lies outside [1 - clip_param, 1 + clip_param]
#pragma once

#include <functional>

#include <torch/types.h>

namespace rlx {

// Per-sample inputs of one minibatch, each [B]; log_probs, values and entropy carry gradients.
struct PpoLossInputs {
  torch::Tensor log_probs;      // log pi_new(a|s)
  torch::Tensor old_log_probs;  // log pi_behaviour(a|s)
  torch::Tensor advantages;     // raw GAE advantages
  torch::Tensor values;         // V_new(s)
  torch::Tensor old_values;     // V before this update (value clipping)
  torch::Tensor returns;        // GAE returns (value targets)
  torch::Tensor entropy;        // entropy of pi_new(.|s)
  torch::Tensor kl_to_target;   // optional: KL(pi_target(.|s) || pi_new(.|s)), with gradient (APPO)
};

// Sums [sum(A), sum(A^2), count] over data-parallel ranks in place (a float64 tensor of 3).
using AdvantageMomentsReducer = std::function<void(torch::Tensor& moments)>;

struct PpoLossOptions {
  double clip_param = 0.2;
  double vf_clip_param = 0.0;  // 0: unclipped value loss
  double vf_loss_coeff = 0.5;
  double entropy_coeff = 0.0;
  double kl_coeff = 0.0;       // weight of mean(kl_to_target)
  bool normalize_advantages = true;
  // Optional: when set, advantages are normalised with moments summed over all ranks.
  AdvantageMomentsReducer reduce_advantage_moments;
};

// Indices into PpoLoss::stats.
struct PpoLossStat {
  enum Index : int64_t { kPolicyLoss = 0, kVfLoss, kEntropy, kApproxKl, kClipFraction, kKlToTarget, kCount };
};

struct PpoLoss {
  torch::Tensor total;  // scalar, differentiable
  torch::Tensor stats;  // [PpoLossStat::kCount] float, no gradient, indexed by PpoLossStat
};

// The loss above; throws std::invalid_argument when the inputs are not all [B] with B >= 1.
PpoLoss ppo_loss(const PpoLossInputs& in, const PpoLossOptions& options);

// The loss's statistics and its analytic gradient with respect to log_probs and values, each
// [B] (what autograd would give through ppo_loss(in, options).total; the entropy term's
// gradient is d total / d entropy_i = -entropy_coeff / B, left to the caller). Inputs need no
// gradients; the same checks as ppo_loss, and no kl_to_target (std::invalid_argument: its
// gradient reaches the whole distribution, which autograd handles).
struct PpoLossGradients {
  torch::Tensor log_probs;  // d total / d log_probs [B]
  torch::Tensor values;     // d total / d values [B]
  torch::Tensor stats;      // as PpoLoss::stats
};
PpoLossGradients ppo_loss_gradients(const PpoLossInputs& in, const PpoLossOptions& options);

}  // namespace rlx
