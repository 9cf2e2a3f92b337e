#include "learner/dqn_loss.h"

#include <torch/utils.h>

#include <tuple>

namespace rlx {

torch::Tensor dqn_targets(QNetwork& online, QNetwork& target, const DqnBatch& batch, bool double_q) {
  torch::NoGradGuard no_grad;
  const torch::Tensor next_q = target.forward(batch.next_obs);
  torch::Tensor next_value;
  if (double_q) {
    next_value = next_q.gather(1, online.forward(batch.next_obs).argmax(1, /*keepdim=*/true)).squeeze(1);
  } else {
    next_value = std::get<0>(next_q.max(1));
  }
  return torch::addcmul(batch.rewards, batch.bootstrap, next_value);
}

DqnLossOutput dqn_loss(QNetwork& online, QNetwork& target, const DqnBatch& batch, bool double_q, double huber_delta) {
  DqnLossOutput out;
  out.target = dqn_targets(online, target, batch, double_q);
  out.q = online.forward(batch.obs).gather(1, batch.actions).squeeze(1);
  if (batch.weights.defined()) {
    out.loss = (torch::huber_loss(out.q, out.target, at::Reduction::None, huber_delta) * batch.weights).mean();
  } else {
    out.loss = torch::huber_loss(out.q, out.target, at::Reduction::Mean, huber_delta);
  }
  return out;
}

}  // namespace rlx
