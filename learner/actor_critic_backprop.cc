#include "learner/actor_critic_backprop.h"

#include <stdexcept>
#include <string>

#include <torch/torch.h>

#include "models/network_kernel.h"

namespace rlx {

bool ActorCriticBackprop::supports(const ActorCritic& model) {
  return !model.config().shared_trunk && !model.layout().sde && all_dense(model.layout().policy_chain) && all_dense(model.layout().value_chain);
}

ActorCriticBackprop::ActorCriticBackprop(ActorCritic& model, torch::Tensor flat_grads) : model_(model) {
  if (!supports(model)) throw std::invalid_argument("ActorCriticBackprop handles separate policy and value networks without gSDE only");
  if (!flat_grads.defined() || flat_grads.dim() != 1 || flat_grads.numel() != model.num_parameters()) {
    throw std::invalid_argument("ActorCriticBackprop needs a flat gradient buffer of " +
                                std::to_string(model.num_parameters()) + " values");
  }
  relu_ = model.config().activation == "relu";
  discrete_ = model.discrete();
  // Gradient views follow the flat parameter order (named_parameters order).
  torch::OrderedDict<std::string, torch::Tensor> grads;
  int64_t offset = 0;
  for (const auto& item : model.named_parameters()) {
    const torch::Tensor& p = item.value();
    grads.insert(item.key(), flat_grads.narrow(0, offset, p.numel()).view(p.sizes()));
    offset += p.numel();
  }
  const auto params = model.named_parameters();
  const auto layer = [&](const std::string& name) {
    Layer l;
    l.weight = params[name + ".weight"];
    l.weight_t = l.weight.t();
    l.bias = params[name + ".bias"];
    l.grad_weight = grads[name + ".weight"];
    l.grad_bias = grads[name + ".bias"];
    return l;
  };
  // The chains' dense layers in order: the encoder's, any head layers, then the output.
  for (const LayerSpec& spec : model.layout().policy_chain) policy_.layers.push_back(layer(spec.name));
  for (const LayerSpec& spec : model.layout().value_chain) value_.layers.push_back(layer(spec.name));
  if (!discrete_) {
    log_std_ = params["log_std"];
    grad_log_std_ = grads["log_std"];
  }
}

torch::Tensor ActorCriticBackprop::forward(const Mlp& mlp, const torch::Tensor& input, std::vector<torch::Tensor>& activations) const {
  activations.resize(mlp.layers.size());
  torch::Tensor x = input;
  for (size_t i = 0; i < mlp.layers.size(); ++i) {
    activations[i] = x;
    x = torch::addmm(mlp.layers[i].bias, x, mlp.layers[i].weight_t);
    if (i + 1 == mlp.layers.size()) break;
    if (relu_) {
      x.relu_();
    } else if (x.is_cpu() && x.scalar_type() == torch::kFloat && x.is_contiguous()) {
      apply_activation(x.data_ptr<float>(), x.numel(), Activation::kTanh);  // the workers' fast tanh
    } else {
      x.tanh_();
    }
  }
  return x;
}

void ActorCriticBackprop::backward(const Mlp& mlp, torch::Tensor grad, const std::vector<torch::Tensor>& activations) const {
  for (size_t i = mlp.layers.size(); i-- > 0;) {
    const Layer& l = mlp.layers[i];
    if (i + 1 < mlp.layers.size()) {
      // grad is d loss / d (this layer's activated output) = activations[i + 1]
      grad = relu_ ? at::threshold_backward(grad, activations[i + 1], 0) : at::tanh_backward(grad, activations[i + 1]);
    }
    at::mm_out(const_cast<torch::Tensor&>(l.grad_weight), grad.t(), activations[i]);
    at::sum_out(const_cast<torch::Tensor&>(l.grad_bias), grad, at::IntArrayRef{0});
    if (i > 0) grad = grad.mm(l.weight);
  }
}

torch::Tensor ActorCriticBackprop::ppo_gradients(const torch::Tensor& obs, const torch::Tensor& actions,
                                                 const torch::Tensor& masks, const torch::Tensor& old_log_probs,
                                                 const torch::Tensor& advantages, const torch::Tensor& returns,
                                                 const torch::Tensor& old_values, const PpoLossOptions& options) {
  torch::NoGradGuard no_grad;
  const torch::Tensor policy_out = forward(policy_, obs, policy_activations_);
  const torch::Tensor values = forward(value_, obs, value_activations_).squeeze(1);
  const double b = static_cast<double>(obs.size(0));

  PpoLossInputs in;
  in.old_log_probs = old_log_probs;
  in.advantages = advantages;
  in.returns = returns;
  in.old_values = old_values;
  in.values = values;
  torch::Tensor grad_policy_out;
  if (discrete_) {
    const ActionDistribution dist = model_.distribution(policy_out, masks);
    const torch::Tensor& log_p = dist.log_probs_or_mean();
    const torch::Tensor p = log_p.exp();
    const torch::Tensor index = dist.logit_indices(actions);  // [B, D]
    in.log_probs = dist.log_prob(actions);
    in.entropy = dist.entropy();
    const PpoLossGradients g = ppo_loss_gradients(in, options);
    // Per segment: d/d logits = g_logp (onehot - p) + (-c_e / B) (-p (log p + H_segment))
    const torch::Tensor g_logp = g.log_probs.unsqueeze(1);
    if (options.entropy_coeff != 0.0) {
      grad_policy_out = (log_p + dist.segment_entropies()).mul_(options.entropy_coeff / b).sub_(g_logp).mul_(p);
    } else {
      grad_policy_out = p * (-g_logp);
    }
    grad_policy_out.scatter_add_(1, index, g_logp.expand({-1, index.size(1)}));
    // A masked logit was replaced by a constant: no gradient reaches it (as through masked_fill).
    if (dist.mask().defined()) grad_policy_out.masked_fill_(dist.mask().logical_not(), 0.0);
    backward(policy_, grad_policy_out, policy_activations_);
    backward(value_, g.values.unsqueeze(1), value_activations_);
    return g.stats;
  }
  // Diagonal Gaussian: z = (a - mean) / std.
  const torch::Tensor inv_std = (-log_std_).exp();
  const torch::Tensor z = (actions - policy_out).mul_(inv_std);
  in.log_probs = (z * z).mul_(-0.5).sub_(log_std_).sum(1).sub_(0.91893853320467274178 * static_cast<double>(log_std_.numel()));
  in.entropy = (log_std_.sum() + (0.5 + 0.91893853320467274178) * static_cast<double>(log_std_.numel())).expand({obs.size(0)});
  const PpoLossGradients g = ppo_loss_gradients(in, options);
  const torch::Tensor g_logp = g.log_probs.unsqueeze(1);
  grad_policy_out = (z * inv_std).mul_(g_logp);
  // d/d log_std = sum_rows(g_logp (z^2 - 1)) - c_e (the entropy is sum(log_std) + const per row).
  at::sum_out(grad_log_std_, (z * z).sub_(1.0).mul_(g_logp), at::IntArrayRef{0});
  if (options.entropy_coeff != 0.0) grad_log_std_.sub_(options.entropy_coeff);
  backward(policy_, grad_policy_out, policy_activations_);
  backward(value_, g.values.unsqueeze(1), value_activations_);
  return g.stats;
}

}  // namespace rlx
