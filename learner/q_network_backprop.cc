#include "learner/q_network_backprop.h"

#include <stdexcept>
#include <string>

#include <torch/torch.h>

namespace rlx {

bool QNetworkBackprop::supports(const QNetwork& model) {
  if (!all_dense(model.layout().trunk)) return false;
  for (const auto& p : model.parameters()) {
    if (!p.device().is_cpu() || p.scalar_type() != torch::kFloat) return false;
  }
  return true;
}

QNetworkBackprop::QNetworkBackprop(QNetwork& online, QNetwork& target, torch::Tensor flat_grads) {
  if (!supports(online) || !supports(target)) {
    throw std::invalid_argument("QNetworkBackprop handles QNetworks of dense layers with float32 parameters on the CPU only");
  }
  const QNetworkLayout& layout = online.layout();
  if (layout.num_parameters != target.layout().num_parameters || layout.dueling != target.layout().dueling ||
      layout.trunk.size() != target.layout().trunk.size()) {
    throw std::invalid_argument("QNetworkBackprop needs online and target networks of the same layout");
  }
  if (!flat_grads.defined() || flat_grads.dim() != 1 || flat_grads.numel() != online.num_parameters() ||
      !flat_grads.device().is_cpu() || flat_grads.scalar_type() != torch::kFloat || !flat_grads.is_contiguous()) {
    throw std::invalid_argument("QNetworkBackprop needs a contiguous float32 CPU gradient buffer of " +
                                std::to_string(online.num_parameters()) + " values");
  }
  dueling_ = layout.dueling;
  num_actions_ = layout.num_actions;
  online_ = views(online, flat_grads);
  target_ = views(target, torch::Tensor());
}

QNetworkBackprop::Net QNetworkBackprop::views(QNetwork& net, const torch::Tensor& flat_grads) const {
  const auto params = net.named_parameters();
  const auto layer = [&](const LayerSpec& spec) {
    Layer l;
    l.weight = params[spec.name + ".weight"];
    l.weight_t = l.weight.t();
    l.bias = params[spec.name + ".bias"];
    l.activation = spec.activation;
    if (flat_grads.defined()) {
      l.grad_weight = flat_grads.narrow(0, static_cast<int64_t>(spec.weight_offset()), spec.out * spec.in).view({spec.out, spec.in});
      l.grad_bias = flat_grads.narrow(0, static_cast<int64_t>(spec.bias_offset()), spec.out);
    }
    return l;
  };
  Net out;
  for (const LayerSpec& spec : net.layout().trunk) out.trunk.push_back(layer(spec));
  for (const LayerSpec& spec : net.layout().heads) out.heads.push_back(layer(spec));
  return out;
}

torch::Tensor QNetworkBackprop::forward(const Net& net, const torch::Tensor& input, std::vector<torch::Tensor>& activations) const {
  activations.resize(net.trunk.size() + 1);
  torch::Tensor h = input;
  for (size_t i = 0; i < net.trunk.size(); ++i) {
    activations[i] = h;
    const Layer& l = net.trunk[i];
    h = torch::addmm(l.bias, h, l.weight_t);
    if (l.activation == Activation::kRelu) {
      h.relu_();
    } else if (l.activation == Activation::kTanh) {
      h.tanh_();
    }
  }
  activations.back() = h;
  if (!dueling_) return torch::addmm(net.heads[0].bias, h, net.heads[0].weight_t);
  const torch::Tensor value = torch::addmm(net.heads[0].bias, h, net.heads[0].weight_t);  // [N, 1]
  torch::Tensor q = torch::addmm(net.heads[1].bias, h, net.heads[1].weight_t);         // A [N, n]
  // Q = A - (mean(A) - V)
  return q.sub_(q.mean(1, /*keepdim=*/true).sub_(value));
}

void QNetworkBackprop::backward(const torch::Tensor& grad_q, const torch::Tensor& grad_rows,
                                const std::vector<torch::Tensor>& activations) const {
  const torch::Tensor& features = activations.back();
  torch::Tensor grad;  // d loss / d features
  const bool need_grad = !online_.trunk.empty();
  if (!dueling_) {
    const Layer& q = online_.heads[0];
    at::mm_out(const_cast<torch::Tensor&>(q.grad_weight), grad_q.t(), features);
    at::sum_out(const_cast<torch::Tensor&>(q.grad_bias), grad_q, at::IntArrayRef{0});
    if (need_grad) grad = grad_q.mm(q.weight);
  } else {
    const Layer& v = online_.heads[0];
    const Layer& a = online_.heads[1];
    // d/dA = g - rowsum(g) / n; d/dV = rowsum(g).
    const torch::Tensor grad_a = grad_q - grad_rows * (1.0 / static_cast<double>(num_actions_));
    at::mm_out(const_cast<torch::Tensor&>(v.grad_weight), grad_rows.t(), features);
    at::sum_out(const_cast<torch::Tensor&>(v.grad_bias), grad_rows, at::IntArrayRef{0});
    at::mm_out(const_cast<torch::Tensor&>(a.grad_weight), grad_a.t(), features);
    at::sum_out(const_cast<torch::Tensor&>(a.grad_bias), grad_a, at::IntArrayRef{0});
    if (need_grad) grad = torch::addmm(grad_rows.mm(v.weight), grad_a, a.weight);
  }
  for (size_t i = online_.trunk.size(); i-- > 0;) {
    const Layer& l = online_.trunk[i];
    // grad is d loss / d (this layer's activated output) = activations[i + 1]
    if (l.activation == Activation::kRelu) {
      grad = at::threshold_backward(grad, activations[i + 1], 0);
    } else if (l.activation == Activation::kTanh) {
      grad = at::tanh_backward(grad, activations[i + 1]);
    }
    at::mm_out(const_cast<torch::Tensor&>(l.grad_weight), grad.t(), activations[i]);
    at::sum_out(const_cast<torch::Tensor&>(l.grad_bias), grad, at::IntArrayRef{0});
    if (i > 0) grad = grad.mm(l.weight);
  }
}

DqnLossOutput QNetworkBackprop::dqn_gradients(const DqnBatch& batch, bool double_q, double huber_delta) {
  torch::NoGradGuard no_grad;
  const int64_t b = batch.obs.size(0);
  if (b < 1 || batch.next_obs.size(0) != b || batch.actions.numel() != b) {
    throw std::invalid_argument("QNetworkBackprop::dqn_gradients needs obs, next_obs and actions of one batch size");
  }
  // The online net on s (and on s' for double Q's argmax) in one pass.
  const torch::Tensor online_q = forward(online_, double_q ? torch::cat({batch.obs, batch.next_obs}) : batch.obs, activations_);
  const torch::Tensor next_q = forward(target_, batch.next_obs, target_activations_);
  DqnLossOutput out;
  out.target = dqn_targets_from_q(next_q, double_q ? online_q.narrow(0, b, b) : torch::Tensor(), batch);
  const torch::Tensor actions = batch.actions.view({b, 1});
  const torch::Tensor q_rows = double_q ? online_q.narrow(0, 0, b) : online_q;
  out.q = q_rows.gather(1, actions).squeeze(1);
  const torch::Tensor td = out.q - out.target;

  // loss = mean(w huber(td)); d loss / d q = w clamp(td, -delta, delta) / B.
  torch::Tensor per_row = torch::huber_loss(out.q, out.target, at::Reduction::None, huber_delta);
  torch::Tensor grad_rows = td.clamp(-huber_delta, huber_delta);
  if (batch.weights.defined()) {
    per_row.mul_(batch.weights);
    grad_rows.mul_(batch.weights);
  }
  out.loss = per_row.mean();
  grad_rows = grad_rows.mul_(1.0 / static_cast<double>(b)).view({b, 1});
  const torch::Tensor grad_q = torch::zeros({b, num_actions_}, online_q.options()).scatter_(1, actions, grad_rows);

  if (double_q) {
    for (torch::Tensor& a : activations_) a = a.narrow(0, 0, b);
  }
  backward(grad_q, grad_rows, activations_);
  return out;
}

}  // namespace rlx
