#include "learner/torch_layers.h"

#include <stdexcept>

#include "core/named_registry.h"
#include "core/rng.h"
#include "learner/torch_conv2d.h"
#include "models/conv2d_layer.h"
#include "models/layer_kinds.h"

namespace rlx {

namespace {

NamedRegistry<TorchLayerForward>& torch_layers() {
  static NamedRegistry<TorchLayerForward> registry("layer kind's LibTorch forward");
  // The built-in kinds' forwards (models/layer_kinds.h), once, thread-safe; referenced from here,
  // so no process that links rlx_learner (a static library) can lose them.
  static const bool built_in = (registry.add(kConv2dLayer, torch_conv2d), true);
  (void)built_in;
  return registry;
}

}  // namespace

void register_torch_layer(const std::string& kind, TorchLayerForward forward) {
  if (!forward) throw std::invalid_argument("layer kind '" + kind + "': an empty LibTorch forward");
  torch_layers().add(kind, std::move(forward));
}

const TorchLayerForward& find_torch_layer(const std::string& kind) {
  if (const TorchLayerForward* forward = torch_layers().find(kind)) return *forward;
  throw std::invalid_argument("layer kind '" + kind + "' has no LibTorch forward (learner/torch_layers.h)");
}

torch::Tensor activate(const torch::Tensor& x, Activation activation) {
  switch (activation) {
    case Activation::kTanh: return torch::tanh(x);
    case Activation::kRelu: return torch::relu(x);
    case Activation::kNone: break;
  }
  return x;
}

RegisteredLayerImpl::RegisteredLayerImpl(LayerSpec layer) : layer_(std::move(layer)) {
  if (layer_.dense()) throw std::invalid_argument("a dense layer is a torch::nn::Linear, not a RegisteredLayer");
  recurrent_ = layer_state_size(layer_) > 0;
  if (!recurrent_) forward_ = &find_torch_layer(layer_.kind);
  activated_ = activated_outputs(layer_);
  reset();
}

void RegisteredLayerImpl::reset() {
  const LayerKind& kind = find_layer_kind(layer_.kind);
  std::vector<std::vector<float>> values;
  std::vector<float*> pointers;
  for (const ParameterSpec& p : layer_.parameters) values.emplace_back(p.size, 0.0f);
  for (std::vector<float>& v : values) pointers.push_back(v.data());
  Rng rng(static_cast<uint64_t>(torch::randint(int64_t{1} << 62, {1}, torch::kLong).item<int64_t>()));
  kind.initialize(layer_, pointers.data(), rng);
  params_.clear();
  for (size_t i = 0; i < layer_.parameters.size(); ++i) {
    const ParameterSpec& p = layer_.parameters[i];
    const std::string suffix = p.name.substr(layer_.name.size() + 1);  // "<layer>.<suffix>"
    params_.push_back(register_parameter(suffix, torch::from_blob(values[i].data(), p.shape, torch::kFloat).clone()));
  }
}

torch::Tensor RegisteredLayerImpl::forward(const torch::Tensor& x) {
  if (recurrent_) throw std::logic_error("recurrent layer " + layer_.name + " runs over sequences (run_sequences)");
  const torch::Tensor y = (*forward_)(layer_, params_, x);
  if (activated_ == layer_.out) return activate(y, layer_.activation);
  return torch::cat({activate(y.narrow(1, 0, activated_), layer_.activation), y.narrow(1, activated_, layer_.out - activated_)},
                    1);
}

RecurrentRun RegisteredLayerImpl::run_sequences(const torch::Tensor& x, int64_t num_steps, const torch::Tensor& state,
                                                const torch::Tensor& resets, bool record_states) {
  if (!recurrent_) throw std::logic_error("layer " + layer_.name + " is not recurrent");
  RecurrentRun run = run_recurrent_layer(layer_, params_, x, num_steps, state, resets, record_states);
  run.outputs = activate(run.outputs, layer_.activation);
  return run;
}

}  // namespace rlx
