// The LibTorch back end of the layer kinds registered in models/layer_kinds.h: each kind's
// forward in LibTorch ops (autograd gives its backward, on CPU and CUDA), and the module that
// holds a layer's parameters inside ActorCritic and QNetwork (learner/policy_networks.h) under
// the layer's name, so that flat parameter order stays the layout's.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include <torch/nn/cloneable.h>
#include <torch/nn/pimpl.h>
#include <torch/types.h>

#include "learner/torch_recurrent.h"
#include "models/network_layout.h"

namespace rlx {

// y [B, out] = the kind's map of x [B, in], its parameters in the layer's order (the caller
// applies layer.activation).
using TorchLayerForward =
    std::function<torch::Tensor(const LayerSpec& layer, const std::vector<torch::Tensor>& params, const torch::Tensor& x)>;

// Adds the LibTorch forward of a kind registered in models/layer_kinds.h; throws
// std::invalid_argument when it has one already ("conv2d"'s is built in: learner/torch_conv2d.h).
void register_torch_layer(const std::string& kind, TorchLayerForward forward);
// The kind's LibTorch forward; throws std::invalid_argument naming the kind when it has none.
const TorchLayerForward& find_torch_layer(const std::string& kind);

// A layer of a registered kind: its parameters, freshly initialised by the kind's own
// initialize (models/layer_kinds.h) with a seed drawn from LibTorch's global generator.
class RegisteredLayerImpl : public torch::nn::Cloneable<RegisteredLayerImpl> {
 public:
  // Throws std::invalid_argument for a dense layer or a kind without a LibTorch forward (a
  // recurrent kind's is learner/torch_recurrent.h).
  explicit RegisteredLayerImpl(LayerSpec layer);

  // (Re)creates and initialises the parameters (Cloneable's hook).
  void reset() override;
  // The layer's map of x [B, in], then its activation (on its activated_outputs leading features);
  // std::logic_error for a recurrent layer.
  torch::Tensor forward(const torch::Tensor& x);
  // A recurrent layer over B sequences of T steps (learner/torch_recurrent.h's run_recurrent_layer),
  // then its activation on the outputs.
  RecurrentRun run_sequences(const torch::Tensor& x, int64_t num_steps, const torch::Tensor& state,
                             const torch::Tensor& resets, bool record_states);
  bool recurrent() const { return recurrent_; }
  const LayerSpec& spec() const { return layer_; }

 private:
  LayerSpec layer_;
  const TorchLayerForward* forward_ = nullptr;
  int64_t activated_ = 0;  // activated_outputs (models/layer_kinds.h)
  bool recurrent_ = false;  // a recurrent kind: run_sequences, not forward
  std::vector<torch::Tensor> params_;
};
TORCH_MODULE(RegisteredLayer);

// x after an activation.
torch::Tensor activate(const torch::Tensor& x, Activation activation);

}  // namespace rlx
