// ChainBackprop: training arithmetic for one LayerChain (models/network_layout.h) on CPU,
// torch-free: a forward pass that keeps every layer's output, and the backward pass of a loss's
// gradient at the chain's output into weight and bias gradients (and, when asked, the gradient
// at the chain's input, as SAC's actor needs through a critic). The products are
// native/dense_backprop.h's. Not thread-safe: each instance owns its scratch buffers.
#pragma once

#include <cstdint>
#include <vector>

#include "models/network_layout.h"

namespace rlx {

class ChainBackprop {
 public:
  // Throws std::invalid_argument for a chain with a layer that is not dense.
  explicit ChainBackprop(LayerChain chain);

  // Runs the chain on x [rows, in] with the weights at `params` (the flat vector the chain's
  // offsets index), keeping each layer's output; returns the last [rows, out], valid until the
  // next forward. x must stay valid until backward.
  const float* forward(const float* params, const float* x, int64_t rows);

  // Backpropagates d loss / d output [rows, out] (overwritten) through the last forward: adds
  // nothing but writes every layer's weight and bias gradients into flat_grads at the chain's
  // offsets (skipped when flat_grads is null), and d loss / d input [rows, in] into grad_input
  // (when not null).
  void backward(const float* params, float* grad_output, int64_t rows, float* flat_grads, float* grad_input = nullptr);

  const LayerChain& layers() const { return layers_; }

 private:
  LayerChain layers_;
  std::vector<std::vector<float>> weight_t_;  // per layer W^T [in, out], from the last forward
  std::vector<std::vector<float>> outputs_;   // per layer [rows, out], activated
  std::vector<float> grads_[2], grad_t_;      // scratch
  const float* input_ = nullptr;              // of the last forward
};

}  // namespace rlx
