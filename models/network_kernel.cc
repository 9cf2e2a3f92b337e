#include "models/network_kernel.h"

#include "models/kernel_clones.h"
#include "models/product_block.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <string>

namespace rlx {

namespace {

// The hot loop: y = x W^T + b, models/product_block.h compiled for this file's clones (no FMA
// contraction here: -std=c++17, so the AVX2 and baseline builds agree bit for bit).
RLX_VECTOR_CLONES void affine_rows(const float* __restrict x, int64_t rows, const DenseWeights& layer,
                                   float* __restrict y) {
  product::rows(x, rows, layer.in, layer.weight_t.data(), layer.weight.data(), layer.out, layer.bias.data(), y);
}

// tanh(x) = sign(x) (1 - e) / (1 + e) with e = exp(-2|x|), and exp(t) = 2^k exp(r) with
// k = round(t / ln 2) and |r| <= ln(2) / 2, exp(r) by its degree-6 Taylor polynomial (relative
// error below 2e-7). Written branch-free so that the loop vectorizes (with -fno-trapping-math,
// models/CMakeLists.txt); absolute error of tanh about 1e-7, where std::tanh per element would
// cost more than the matrix products.
RLX_VECTOR_CLONES void tanh_in_place(float* __restrict y, int64_t count) {
  constexpr float kLog2e = 1.44269504088896341f;
  constexpr float kLn2Hi = 0.693145751953125f;  // ln 2 split so that k * kLn2Hi is exact
  constexpr float kLn2Lo = 1.42860682030941723e-06f;
  constexpr float kRound = 12582912.0f;  // 1.5 * 2^23: adding it rounds to an integer
  for (int64_t j = 0; j < count; ++j) {
    const float x = y[j];
    const float a = std::fabs(x);
    const float t = -2.0f * (a > 9.0f ? 9.0f : a);  // tanh(9) is 1 to float precision; NaN stays NaN
    const float shifted = t * kLog2e + kRound;
    const float k = shifted - kRound;
    const float r = (t - k * kLn2Hi) - k * kLn2Lo;
    const float p =
        1.0f + r * (1.0f + r * (0.5f + r * (1.0f / 6 + r * (1.0f / 24 + r * (1.0f / 120 + r * (1.0f / 720))))));
    const int32_t exponent_bits = (static_cast<int32_t>(k) + 127) << 23;
    float scale;
    std::memcpy(&scale, &exponent_bits, sizeof(scale));
    const float e = p * scale;
    const float magnitude = (1.0f - e) / (1.0f + e);
    y[j] = std::copysign(magnitude, x);
  }
}

}  // namespace

void DenseWeights::assign(const float* weight_rows, const float* bias_values, int64_t in_size, int64_t out_size) {
  in = in_size;
  out = out_size;
  weight.assign(weight_rows, weight_rows + in * out);
  weight_t.resize(static_cast<size_t>(in * out));
  product::transpose(weight_rows, out, in, weight_t.data());
  bias.assign(bias_values, bias_values + out);
}

void apply_activation(float* values, int64_t count, Activation activation) {
  if (activation == Activation::kTanh) {
    tanh_in_place(values, count);
  } else if (activation == Activation::kRelu) {
    for (int64_t j = 0; j < count; ++j) values[j] = std::max(values[j], 0.0f);
  }
}

void dense_forward(const float* x, int64_t rows, const DenseWeights& layer, Activation activation, float* y) {
  affine_rows(x, rows, layer, y);
  apply_activation(y, rows * layer.out, activation);
}

// ---- ChainKernel ----

ChainKernel::ChainKernel(LayerChain chain)
    : chain_(std::move(chain)), weights_(chain_.size()), kinds_(chain_.size(), nullptr), activated_(chain_.size()),
      state_sizes_(chain_.size()), params_(chain_.size()), param_pointers_(chain_.size()) {
  for (size_t l = 0; l < chain_.size(); ++l) {
    if (!chain_[l].dense()) kinds_[l] = &find_layer_kind(chain_[l].kind);
    activated_[l] = activated_outputs(chain_[l]);
    state_sizes_[l] = layer_state_size(chain_[l]);
    recurrent_ = recurrent_ || state_sizes_[l] > 0;
  }
}

void ChainKernel::load(const float* flat) {
  for (size_t l = 0; l < chain_.size(); ++l) {
    const LayerSpec& layer = chain_[l];
    if (layer.dense()) {
      weights_[l].assign(flat + layer.weight_offset(), flat + layer.bias_offset(), layer.in, layer.out);
      continue;
    }
    params_[l].clear();
    param_pointers_[l].clear();
    for (const ParameterSpec& p : layer.parameters) params_[l].emplace_back(flat + p.offset, flat + p.offset + p.size);
    for (const std::vector<float>& values : params_[l]) param_pointers_[l].push_back(values.data());
    if (kinds_[l]->derive) {
      std::vector<std::vector<float>> derived = kinds_[l]->derive(layer, param_pointers_[l].data());
      for (std::vector<float>& values : derived) params_[l].push_back(std::move(values));
      param_pointers_[l].clear();  // params_[l] may have moved its vectors
      for (const std::vector<float>& values : params_[l]) param_pointers_[l].push_back(values.data());
    }
  }
}

const float* ChainKernel::run(const float* input, int64_t rows, float* state, int64_t state_stride) {
  const float* x = input;
  for (size_t l = 0; l < chain_.size(); ++l) {
    std::vector<float>& y = buffers_[l % 2];
    y.resize(static_cast<size_t>(rows * chain_[l].out));  // grows once, then reused
    if (kinds_[l] == nullptr) {
      dense_forward(x, rows, weights_[l], chain_[l].activation, y.data());
    } else if (state_sizes_[l] > 0) {
      if (state == nullptr) throw std::logic_error("layer " + chain_[l].name + " is recurrent: its chain needs a state");
      const int64_t size = state_sizes_[l], offset = chain_[l].state_offset;
      layer_state_.resize(static_cast<size_t>(rows * size));
      for (int64_t r = 0; r < rows; ++r) {
        const float* from = state + r * state_stride + offset;
        std::copy(from, from + size, layer_state_.data() + r * size);
      }
      kinds_[l]->step(chain_[l], param_pointers_[l].data(), x, rows, layer_state_.data(), y.data());
      for (int64_t r = 0; r < rows; ++r) {
        const float* from = layer_state_.data() + r * size;
        std::copy(from, from + size, state + r * state_stride + offset);
      }
      apply_activation(y.data(), rows * chain_[l].out, chain_[l].activation);
    } else {
      kinds_[l]->forward(chain_[l], param_pointers_[l].data(), x, rows, y.data());
      const int64_t out = chain_[l].out, activated = activated_[l];
      if (activated == out) {
        apply_activation(y.data(), rows * out, chain_[l].activation);
      } else {
        for (int64_t r = 0; r < rows; ++r) apply_activation(y.data() + r * out, activated, chain_[l].activation);
      }
    }
    x = y.data();
  }
  return x;
}

// ---- ActorCriticKernel ----

ActorCriticKernel::ActorCriticKernel(const ActorCriticLayout& layout)
    : layout_(layout),
      trunk_(layout.trunk),
      policy_body_(LayerChain(layout.policy_chain.begin(), layout.policy_chain.end() - 1)),
      policy_out_(LayerChain{layout.policy_chain.back()}),
      value_(layout.value_chain) {}

void ActorCriticKernel::load(const float* flat) {
  trunk_.load(flat);
  policy_body_.load(flat);
  policy_out_.load(flat);
  value_.load(flat);
  if (layout_.log_std) {
    log_std_.assign(flat + layout_.log_std->offset, flat + layout_.log_std->offset + layout_.log_std->size);
    std_.resize(log_std_.size());
    for (size_t i = 0; i < log_std_.size(); ++i) std_[i] = std::exp(log_std_[i]);
  }
}

void ActorCriticKernel::forward(const float* obs, int64_t rows, float* policy_out, float* values, float* state,
                                float* latent) {
  const int64_t stride = layout_.state_size;
  const float* features = trunk_.run(obs, rows, state, stride);
  const float* policy_latent = policy_body_.run(features, rows, state, stride);
  if (latent != nullptr) {
    std::memcpy(latent, policy_latent, static_cast<size_t>(rows * layout_.latent_size) * sizeof(float));
  }
  const float* policy = policy_out_.run(policy_latent, rows);
  std::memcpy(policy_out, policy, static_cast<size_t>(rows * layout_.policy_outputs) * sizeof(float));
  // The value head is skipped when not wanted (the learner recomputes V), unless its core must step.
  if (values == nullptr && !value_.recurrent()) return;
  const float* value = value_.run(features, rows, state, stride);
  if (values != nullptr) std::memcpy(values, value, static_cast<size_t>(rows) * sizeof(float));
}

// ---- QNetworkKernel ----

QNetworkKernel::QNetworkKernel(const QNetworkLayout& layout) : layout_(layout), trunk_(layout.trunk) {
  for (const LayerSpec& head : layout.heads) heads_.emplace_back(LayerChain{head});
}

void QNetworkKernel::load(const float* flat) {
  trunk_.load(flat);
  for (ChainKernel& head : heads_) head.load(flat);
}

void QNetworkKernel::forward(const float* obs, int64_t rows, float* q_values) {
  const float* features = trunk_.run(obs, rows);
  const int64_t n = layout_.num_actions;
  if (!layout_.dueling) {
    std::memcpy(q_values, heads_[0].run(features, rows), static_cast<size_t>(rows * n) * sizeof(float));
    return;
  }
  const float* value = heads_[0].run(features, rows);
  const float* advantage = heads_[1].run(features, rows);
  for (int64_t r = 0; r < rows; ++r) {
    const float* a = advantage + r * n;
    float sum = 0.0f;
    for (int64_t j = 0; j < n; ++j) sum += a[j];
    const float mean = sum / static_cast<float>(n);
    // LibTorch's order: (V + A) - mean(A).
    for (int64_t j = 0; j < n; ++j) q_values[r * n + j] = (value[r] + a[j]) - mean;
  }
}

}  // namespace rlx
