#include "native/chain_backprop.h"

#include <stdexcept>

#include "models/network_kernel.h"
#include "native/dense_backprop.h"

namespace rlx {

namespace {
constexpr int64_t kWideLayer = 16;  // widths from which dense_backprop's products run in full blocks
}  // namespace

ChainBackprop::ChainBackprop(LayerChain chain)
    : layers_(std::move(chain)), weight_t_(layers_.size()), outputs_(layers_.size()) {
  for (const LayerSpec& layer : layers_) {
    if (!layer.dense()) {
      throw std::invalid_argument("the native learners train dense layers only, not layer '" + layer.name + "' of kind '" +
                                  layer.kind + "' (use learner_backend: torch)");
    }
  }
}

const float* ChainBackprop::forward(const float* params, const float* x, int64_t rows) {
  input_ = x;
  for (size_t l = 0; l < layers_.size(); ++l) {
    const LayerSpec& layer = layers_[l];
    const float* weight = params + layer.weight_offset();
    weight_t_[l].resize(static_cast<size_t>(layer.in * layer.out));
    transpose(weight, layer.out, layer.in, weight_t_[l].data());
    outputs_[l].resize(static_cast<size_t>(rows * layer.out));
    matmul(x, rows, layer.in, weight_t_[l].data(), weight, layer.out, params + layer.bias_offset(), outputs_[l].data());
    apply_activation(outputs_[l].data(), rows * layer.out, layer.activation);
    x = outputs_[l].data();
  }
  return x;
}

void ChainBackprop::backward(const float* params, float* grad_output, int64_t rows, float* flat_grads,
                             float* grad_input) {
  float* g = grad_output;
  for (size_t l = layers_.size(); l-- > 0;) {
    const LayerSpec& layer = layers_[l];
    const float* h = l == 0 ? input_ : outputs_[l - 1].data();
    if (flat_grads != nullptr) {
      // dW [out, in] = g^T h, vectorised along in; along out (then transposed) when in is
      // narrower than a vector block and out is wider (a first layer on a few observations).
      if (layer.in < kWideLayer && layer.out > layer.in) {
        grad_t_.resize(static_cast<size_t>(layer.in * layer.out));
        matmul_transposed_a(h, g, rows, layer.in, layer.out, grad_t_.data());
        transpose(grad_t_.data(), layer.in, layer.out, flat_grads + layer.weight_offset());
      } else {
        matmul_transposed_a(g, h, rows, layer.out, layer.in, flat_grads + layer.weight_offset());
      }
      column_sums(g, rows, layer.out, flat_grads + layer.bias_offset());
    }
    // d loss / d h = g W, then through the previous layer's activation.
    if (l == 0) {
      if (grad_input != nullptr) {
        matmul(g, rows, layer.out, params + layer.weight_offset(), weight_t_[l].data(), layer.in, nullptr, grad_input);
      }
      break;
    }
    std::vector<float>& next = grads_[l % 2];
    next.resize(static_cast<size_t>(rows * layer.in));
    matmul(g, rows, layer.out, params + layer.weight_offset(), weight_t_[l].data(), layer.in, nullptr, next.data());
    activation_backward(next.data(), h, rows * layer.in, layers_[l - 1].activation);
    g = next.data();
  }
}

}  // namespace rlx
