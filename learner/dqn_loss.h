// The DQN loss of one batch: Q(s, a) of the online net against the n-step target
// y = R + gamma^m (1 - terminated) Q_target(s', a*), a* = argmax_a Q_online(s', a) with double Q
// (else the target net's own max), through a (weighted) Huber loss.
#pragma once

#include <torch/types.h>

#include "learner/policy_networks.h"

namespace rlx {

// One batch as tensors on the networks' device.
struct DqnBatch {
  torch::Tensor obs;        // [B, O] float
  torch::Tensor actions;    // [B, 1] int64
  torch::Tensor rewards;    // [B] n-step returns
  torch::Tensor next_obs;   // [B, O]
  torch::Tensor bootstrap;  // [B] gamma^m (1 - terminated): the factor on the bootstrap value
  torch::Tensor weights;    // [B] importance weights; undefined = all 1
};

struct DqnLossOutput {
  torch::Tensor loss;    // scalar: mean_i w_i huber(q_i - y_i)
  torch::Tensor q;       // [B] Q(s, a) of the online net (with grad)
  torch::Tensor target;  // [B] y (no grad)
};

// y for the batch, computed without gradient.
torch::Tensor dqn_targets(QNetwork& online, QNetwork& target, const DqnBatch& batch, bool double_q);
// Loss, Q(s, a) and targets; backward() on loss reaches the online net only.
DqnLossOutput dqn_loss(QNetwork& online, QNetwork& target, const DqnBatch& batch, bool double_q, double huber_delta);

}  // namespace rlx
