// The DQN loss of one batch: Q(s, a) of the online net against the n-step target
// y = R + gamma^m (1 - terminated) Q_target(s', a*), a* = argmax_a Q_online(s', a) with double Q
// (else the target net's own max), through a (weighted) Huber loss. With an action mask, a*
// (and the max) range over the actions legal in s' only.
#pragma once

#include <torch/types.h>

#include "learner/policy_networks.h"

namespace rlx {

// One batch as tensors on the networks' device.
struct DqnBatch {
  torch::Tensor obs;        // [B, O] float: the network's input (observations flattened)
  torch::Tensor actions;    // [B, 1] int64
  torch::Tensor rewards;    // [B] n-step returns
  torch::Tensor next_obs;   // [B, O]
  torch::Tensor bootstrap;  // [B] gamma^m (1 - terminated): the factor on the bootstrap value
  torch::Tensor weights;    // [B] importance weights; undefined = all 1
  torch::Tensor next_mask;  // [B, n] bool, true where the action is legal in s'; undefined = all legal
};

struct DqnLossOutput {
  torch::Tensor loss;    // scalar: mean_i w_i huber(q_i - y_i)
  torch::Tensor q;       // [B] Q(s, a) of the online net (with grad)
  torch::Tensor target;  // [B] y (no grad)
};

// Q-values [B, n] with every illegal action of `mask` ([B, n] bool, true = legal) at kMaskedLogit,
// so no max or argmax picks one; q itself when mask is undefined. A row that allows no action
// (no env sends one; the workers then act unmasked too) stays as it is.
torch::Tensor masked_q_values(const torch::Tensor& q, const torch::Tensor& mask);

// y = rewards + bootstrap * Q_t(s', a*) from the target net's next_q [B, n] and, for double Q, the
// online net's online_next_q [B, n] (a* its argmax; undefined: a* is the target net's own
// argmax), a* among the legal actions of batch.next_mask. The one definition of the target.
torch::Tensor dqn_targets_from_q(const torch::Tensor& next_q, const torch::Tensor& online_next_q, const DqnBatch& batch);

// y for the batch, computed without gradient.
torch::Tensor dqn_targets(QNetwork& online, QNetwork& target, const DqnBatch& batch, bool double_q);
// Loss, Q(s, a) and targets; backward() on loss reaches the online net only. The networks'
// outputs are cast to float32 first (under autocast they are bfloat16 or float16).
DqnLossOutput dqn_loss(QNetwork& online, QNetwork& target, const DqnBatch& batch, bool double_q, double huber_delta);

}  // namespace rlx
