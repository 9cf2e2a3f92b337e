// Hand-written forward and backward of DQN's loss (learner/dqn_loss.h) through a QNetwork, for
// the small networks DQN trains on the CPU, where per-op overhead (and autograd's per-node
// bookkeeping) outweighs the arithmetic: a few torch ops per layer and no graph.
//
// Forward: the online net runs once on [obs; next_obs] (2B rows) when double Q needs its
// argmax on s', the target net on next_obs; y = dqn_targets_from_q (legal a* only under a mask).
// Loss = mean_i w_i huber_delta(q_i - y_i), so d loss / d q_i = w_i clamp(q_i - y_i, -delta,
// delta) / B, placed in column a_i of g = d loss / d Q [B, n].
// Heads: plain Q = h W^T + b. Dueling Q = V + A - mean(A): d/dV = sum_j g_j (= g_{a_i}),
// d/dA_j = g_j - (1/n) sum_k g_k.
// Per layer (weight W [out, in], bias b): dW = g^T h, db = sum_rows(g), dL/dh = g W, then
// through tanh (1 - h'^2) or ReLU (h' > 0), the activations serving as the masks.
#pragma once

#include <vector>

#include <torch/types.h>

#include "learner/dqn_loss.h"
#include "learner/policy_networks.h"

namespace rlx {

class QNetworkBackprop {
 public:
  // True for the models this class handles: QNetworks of dense layers whose parameters are float32 on the CPU.
  static bool supports(const QNetwork& model);

  // Borrows the online and target networks (same layout; both must outlive this) and a flat
  // gradient buffer [P] in the online net's flat parameter order; throws std::invalid_argument
  // when unsupported, the layouts differ or the buffer is mis-sized.
  QNetworkBackprop(QNetwork& online, QNetwork& target, torch::Tensor flat_grads);

  // Evaluates dqn_loss(online, target, batch, double_q, huber_delta) and overwrites the flat
  // gradient buffer with d loss / d online parameters. Returns the loss, q and target as
  // dqn_loss does, none of them carrying gradient. Runs without autograd.
  DqnLossOutput dqn_gradients(const DqnBatch& batch, bool double_q, double huber_delta);

 private:
  struct Layer {
    torch::Tensor weight_t;     // W^T [in, out], a view of the parameter
    torch::Tensor weight;       // W [out, in]
    torch::Tensor bias;         // [out]
    torch::Tensor grad_weight;  // [out, in] view of the flat gradient buffer (online only)
    torch::Tensor grad_bias;    // [out]
    Activation activation = Activation::kNone;
  };
  struct Net {
    std::vector<Layer> trunk;
    std::vector<Layer> heads;  // {q_out} or {value_out, advantage_out}
  };

  // Views of a network's parameters (and, when grads is defined, of its gradients).
  Net views(QNetwork& net, const torch::Tensor& flat_grads) const;
  // Q [N, n] for input [N, O]; activations[i] is layer i's input (activations[0] = input,
  // activations.back() = the trunk's output).
  torch::Tensor forward(const Net& net, const torch::Tensor& input, std::vector<torch::Tensor>& activations) const;
  // Backpropagates g = d loss / d Q [B, n] (and its row sums g_rows [B, 1] for dueling) into
  // the online net's gradient views; activations are the first B rows of forward's.
  void backward(const torch::Tensor& grad_q, const torch::Tensor& grad_rows, const std::vector<torch::Tensor>& activations) const;

  bool dueling_ = false;
  int64_t num_actions_ = 0;
  Net online_, target_;
  std::vector<torch::Tensor> activations_, target_activations_;
};

}  // namespace rlx
