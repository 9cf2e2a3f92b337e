// Hand-written forward and backward of the PPO loss through an ActorCritic with separate policy
// and value MLPs: about half the wall time of autograd on the small networks PPO uses, where
// per-op overhead (and autograd's per-node bookkeeping) dominates the arithmetic.
//
// Per layer i (weight W [out, in], bias b): z = h W^T + b, h' = act(z). Backward from g = dL/dz:
// dW = g^T h, db = sum_rows(g), dL/dh = g W, then through tanh (1 - h'^2) or ReLU (h' > 0).
// The loss side uses ppo_loss_gradients (d/d log_prob, d/d value) and the distribution's own
// derivatives (ActionDistribution's segments and mask): per segment, Categorical d log p_a /
// d logits = onehot(a) - p, d H / d logits = -p (log p + H_segment), none into a masked logit;
// diagonal Gaussian with z = (a - mean) / std: d log p / d mean = z / std,
// d log p / d log_std = z^2 - 1, d H / d log_std = 1.
#pragma once

#include <vector>

#include <torch/types.h>

#include "learner/ppo_loss.h"
#include "learner/policy_networks.h"

namespace rlx {

class ActorCriticBackprop {
 public:
  // True for the models this class handles: separate policy and value networks of dense layers,
  // a state-independent log-std (not gSDE's).
  static bool supports(const ActorCritic& model);

  // Borrows the model (which must outlive this) and a flat gradient buffer [P] laid out in the
  // model's flat parameter order; throws std::invalid_argument when unsupported or mis-sized.
  ActorCriticBackprop(ActorCritic& model, torch::Tensor flat_grads);

  // Evaluates ppo_loss on a minibatch (obs [B, O] already normalised; actions [B] or [B, D]
  // int64, or [B, A]; masks [B, P] of legal logits or undefined; the other columns [B]) and
  // overwrites the flat gradient buffer with d total / d parameters. Returns the loss
  // statistics as PpoLoss::stats. Runs without autograd.
  torch::Tensor ppo_gradients(const torch::Tensor& obs, const torch::Tensor& actions, const torch::Tensor& masks,
                              const torch::Tensor& old_log_probs,
                              const torch::Tensor& advantages, const torch::Tensor& returns,
                              const torch::Tensor& old_values, const PpoLossOptions& options);

 private:
  struct Layer {
    torch::Tensor weight_t;     // W^T [in, out], a view of the parameter
    torch::Tensor weight;       // W [out, in]
    torch::Tensor bias;         // [out]
    torch::Tensor grad_weight;  // [out, in] view of the flat gradient buffer
    torch::Tensor grad_bias;    // [out]
  };
  struct Mlp {
    std::vector<Layer> layers;  // hidden layers, then the output layer
  };

  // Runs an MLP, keeping each hidden activation (activations[0] = input).
  torch::Tensor forward(const Mlp& mlp, const torch::Tensor& input, std::vector<torch::Tensor>& activations) const;
  // Backpropagates d loss / d output through an MLP into its gradient views.
  void backward(const Mlp& mlp, torch::Tensor grad_output, const std::vector<torch::Tensor>& activations) const;

  ActorCritic& model_;
  bool relu_ = false;
  bool discrete_ = true;
  Mlp policy_, value_;
  torch::Tensor log_std_, grad_log_std_;  // Box actions only
  std::vector<torch::Tensor> policy_activations_, value_activations_;
};

}  // namespace rlx
