#include "learner/ppo_loss.h"

#include <stdexcept>

#include <torch/torch.h>

namespace rlx {

namespace {

constexpr double kAdvantageEpsilon = 1e-8;

void check_column(const torch::Tensor& column, const char* name, int64_t rows) {
  if (!column.defined() || column.dim() != 1 || column.size(0) != rows) {
    throw std::invalid_argument(std::string("ppo_loss input ") + name + " must be a [B] tensor like log_probs");
  }
}

void check_inputs(const PpoLossInputs& in, const PpoLossOptions& options) {
  if (!in.log_probs.defined() || in.log_probs.dim() != 1 || in.log_probs.size(0) < 1) {
    throw std::invalid_argument("ppo_loss needs log_probs of shape [B] with B >= 1");
  }
  const int64_t rows = in.log_probs.size(0);
  check_column(in.old_log_probs, "old_log_probs", rows);
  check_column(in.advantages, "advantages", rows);
  check_column(in.values, "values", rows);
  check_column(in.returns, "returns", rows);
  check_column(in.entropy, "entropy", rows);
  if (options.vf_clip_param > 0.0) check_column(in.old_values, "old_values", rows);
  if (in.kl_to_target.defined()) check_column(in.kl_to_target, "kl_to_target", rows);
}

// The advantages the surrogate uses (constants: no gradient flows into them).
torch::Tensor surrogate_advantages(const torch::Tensor& advantages, const PpoLossOptions& options) {
  if (!options.normalize_advantages) return advantages;
  if (options.reduce_advantage_moments) {
    torch::Tensor moments;
    {
      torch::NoGradGuard no_grad;
      const torch::Tensor a = advantages.to(torch::kDouble);
      moments = torch::stack({a.sum(), (a * a).sum(), torch::full({}, static_cast<double>(a.size(0)), a.options())});
    }
    options.reduce_advantage_moments(moments);
    const torch::Tensor n = moments[2];
    const torch::Tensor mean = moments[0] / n;
    const torch::Tensor var = (moments[1] - n * mean * mean) / (n - 1.0);
    const torch::Tensor stddev = var.clamp_min(0.0).sqrt();
    const torch::Tensor normalized =
        (advantages - mean.to(advantages.scalar_type())) / (stddev.to(advantages.scalar_type()) + kAdvantageEpsilon);
    // A global minibatch of one sample has no spread to normalise by (as below); no host sync.
    return torch::where(n > 1.5, normalized, advantages);
  }
  if (advantages.size(0) < 2) return advantages;  // one sample has no spread to normalise by
  const auto [stddev, mean] = torch::std_mean(advantages, /*dim=*/{0}, /*unbiased=*/true);
  return (advantages - mean) / (stddev + kAdvantageEpsilon);
}

// Shared forward pieces of the loss.
struct Terms {
  torch::Tensor log_ratio, ratio, clipped_ratio, advantages;
  torch::Tensor unclipped_objective, clipped_objective;  // A * ratio, A * clip(ratio)
  torch::Tensor error, clipped_error;                    // V - R and V_clipped - R (when clipping)
};

Terms terms(const PpoLossInputs& in, const PpoLossOptions& options) {
  Terms t;
  t.advantages = surrogate_advantages(in.advantages, options);
  t.log_ratio = in.log_probs - in.old_log_probs;
  t.ratio = t.log_ratio.exp();
  t.clipped_ratio = t.ratio.clamp(1.0 - options.clip_param, 1.0 + options.clip_param);
  t.unclipped_objective = t.ratio * t.advantages;
  t.clipped_objective = t.clipped_ratio * t.advantages;
  t.error = in.values - in.returns;
  if (options.vf_clip_param > 0.0) {
    const torch::Tensor clipped = in.old_values + (in.values - in.old_values).clamp(-options.vf_clip_param, options.vf_clip_param);
    t.clipped_error = clipped - in.returns;
  }
  return t;
}

// [policy_loss, vf_loss, entropy, approx_kl, clip_fraction, kl_to_target] from the loss pieces
// (no gradient); kl_to_target is 0 when there is none.
torch::Tensor loss_stats(const Terms& t, const torch::Tensor& policy_loss, const torch::Tensor& vf_loss,
                         const torch::Tensor& entropy, const torch::Tensor& kl_to_target) {
  torch::NoGradGuard no_grad;
  const torch::Tensor approx_kl = (t.ratio - t.log_ratio).mean() - 1.0;
  const torch::Tensor clip_fraction = (t.clipped_ratio != t.ratio).to(t.ratio.scalar_type()).mean();
  const torch::Tensor target_kl = kl_to_target.defined() ? kl_to_target : torch::zeros_like(approx_kl);
  return torch::stack({policy_loss, vf_loss, entropy, approx_kl, clip_fraction, target_kl});
}

}  // namespace

PpoLoss ppo_loss(const PpoLossInputs& in, const PpoLossOptions& options) {
  check_inputs(in, options);
  const Terms t = terms(in, options);
  const torch::Tensor policy_loss = -torch::min(t.unclipped_objective, t.clipped_objective).mean();
  const torch::Tensor squared_error = t.error * t.error;
  const torch::Tensor vf_loss = options.vf_clip_param > 0.0
                                    ? torch::max(squared_error, t.clipped_error * t.clipped_error).mean()
                                    : squared_error.mean();
  const torch::Tensor entropy = in.entropy.mean();
  PpoLoss out;
  out.total = policy_loss + options.vf_loss_coeff * vf_loss - options.entropy_coeff * entropy;
  torch::Tensor kl_to_target;
  if (in.kl_to_target.defined()) {
    kl_to_target = in.kl_to_target.mean();
    out.total = out.total + options.kl_coeff * kl_to_target;
  }
  out.stats = loss_stats(t, policy_loss, vf_loss, entropy, kl_to_target);
  return out;
}

PpoLossGradients ppo_loss_gradients(const PpoLossInputs& in, const PpoLossOptions& options) {
  check_inputs(in, options);
  if (in.kl_to_target.defined()) {
    throw std::invalid_argument("ppo_loss_gradients has no analytic gradient of kl_to_target; use ppo_loss and autograd");
  }
  torch::NoGradGuard no_grad;
  const Terms t = terms(in, options);
  const double b = static_cast<double>(in.log_probs.size(0));
  PpoLossGradients out;

  // Surrogate: -mean(min(A r, A clip(r))). Where A r is the minimum (ties included: there the
  // clip is inactive and both branches carry A r), d/d log_prob = -A r / B; elsewhere the
  // clipped branch is the minimum, which only happens with the clip active: gradient 0.
  const torch::Tensor unclipped_is_min = t.unclipped_objective <= t.clipped_objective;
  const torch::Tensor policy_objective = torch::where(unclipped_is_min, t.unclipped_objective, t.clipped_objective);
  out.log_probs = t.unclipped_objective.mul(unclipped_is_min).mul_(-1.0 / b);

  // Value: mean(e^2), or mean(max(e^2, e_clipped^2)); where the clipped error is the larger the
  // clip is active and passes no gradient.
  const torch::Tensor squared_error = t.error * t.error;
  torch::Tensor vf_terms = squared_error;
  out.values = t.error.mul(2.0 * options.vf_loss_coeff / b);
  if (options.vf_clip_param > 0.0) {
    const torch::Tensor clipped_squared = t.clipped_error * t.clipped_error;
    // Where the clip is inactive both branches are V itself (their squares may differ by a
    // rounding): the gradient flows, as autograd's would through either branch. Deciding by the
    // rounded squares alone would zero it at random and break data-parallel exactness.
    const torch::Tensor clip_inactive = (in.values - in.old_values).abs() <= options.vf_clip_param;
    const torch::Tensor unclipped_is_max = (squared_error >= clipped_squared).logical_or_(clip_inactive);
    vf_terms = torch::where(unclipped_is_max, squared_error, clipped_squared);
    out.values.mul_(unclipped_is_max);
  }
  out.stats = loss_stats(t, -policy_objective.mean(), vf_terms.mean(), in.entropy.mean(), torch::Tensor());
  return out;
}

}  // namespace rlx
