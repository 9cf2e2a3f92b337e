#include "learner/dqn_loss.h"

#include <torch/utils.h>

#include "learner/mixed_precision.h"
#include "models/action_sampling.h"

namespace rlx {

torch::Tensor masked_q_values(const torch::Tensor& q, const torch::Tensor& mask) {
  if (!mask.defined()) return q;
  const torch::Tensor illegal = mask.logical_not().logical_and(mask.any(1, /*keepdim=*/true));
  return q.masked_fill(illegal, kMaskedLogit);
}

torch::Tensor dqn_targets_from_q(const torch::Tensor& next_q, const torch::Tensor& online_next_q, const DqnBatch& batch) {
  // The target net's value at a legal a*: masked values only choose, they never enter y.
  const torch::Tensor& chooser = online_next_q.defined() ? online_next_q : next_q;
  const torch::Tensor best = masked_q_values(chooser, batch.next_mask).argmax(1, /*keepdim=*/true);
  const torch::Tensor next_value = next_q.gather(1, best).squeeze(1);
  return torch::addcmul(batch.rewards, batch.bootstrap, next_value);
}

torch::Tensor dqn_targets(QNetwork& online, QNetwork& target, const DqnBatch& batch, bool double_q) {
  torch::NoGradGuard no_grad;
  // Under autocast the Q-values come out in the low dtype: the target and the loss are float32's.
  const torch::Tensor next_q = to_float32(target.forward(batch.next_obs));
  return dqn_targets_from_q(next_q, double_q ? to_float32(online.forward(batch.next_obs)) : torch::Tensor(), batch);
}

DqnLossOutput dqn_loss(QNetwork& online, QNetwork& target, const DqnBatch& batch, bool double_q, double huber_delta) {
  DqnLossOutput out;
  out.target = dqn_targets(online, target, batch, double_q);
  out.q = to_float32(online.forward(batch.obs)).gather(1, batch.actions).squeeze(1);
  if (batch.weights.defined()) {
    out.loss = (torch::huber_loss(out.q, out.target, at::Reduction::None, huber_delta) * batch.weights).mean();
  } else {
    out.loss = torch::huber_loss(out.q, out.target, at::Reduction::Mean, huber_delta);
  }
  return out;
}

}  // namespace rlx
