#include "models/network_kernel.h"

#include "models/kernel_clones.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>

namespace rlx {

namespace {

constexpr int64_t kBlockRows = 4;     // rows sharing each load of the weights
constexpr int64_t kBlockOutputs = 16;  // outputs accumulated in registers: two Vec8

// Eight floats in GCC's vector extension: one AVX register, or two SSE registers in the
// baseline clone.
typedef float Vec8 __attribute__((vector_size(32)));

inline Vec8 load8(const float* p) {
  Vec8 v;
  std::memcpy(&v, p, sizeof(v));
  return v;
}

inline void store8(float* p, Vec8 v) { std::memcpy(p, &v, sizeof(v)); }

// y[r, o] = b[o] + sum_i x[r, i] W^T[i, o] for kRows rows and kBlockOutputs outputs starting at
// o0, with the sums held in registers across i. Every output is accumulated in the same order
// (bias, then i = 0, 1, ...) in every clone and block shape, with no reassociation and no FMA
// contraction (-std=c++17), so the AVX2 and baseline builds agree bit for bit.
template <int64_t kRows>
inline void affine_block(const float* __restrict x, int64_t in, const float* __restrict weight_t,
                         const float* __restrict bias, int64_t out, int64_t o0, float* __restrict y) {
  Vec8 acc[kRows][2];
  for (int64_t r = 0; r < kRows; ++r) {
    acc[r][0] = load8(bias + o0);
    acc[r][1] = load8(bias + o0 + 8);
  }
  for (int64_t i = 0; i < in; ++i) {
    const Vec8 w0 = load8(weight_t + i * out + o0);
    const Vec8 w1 = load8(weight_t + i * out + o0 + 8);
    for (int64_t r = 0; r < kRows; ++r) {
      const float xi = x[r * in + i];
      acc[r][0] += xi * w0;
      acc[r][1] += xi * w1;
    }
  }
  for (int64_t r = 0; r < kRows; ++r) {
    store8(y + r * out + o0, acc[r][0]);
    store8(y + r * out + o0 + 8, acc[r][1]);
  }
}

// y[r, o] = b[o] + x[r, :] . W[o, :] for the outputs o0.. of a layer narrower than a block (the
// heads): a dot product over eight lanes, summed lane by lane in a fixed order, so again the
// same floats in every clone.
inline void affine_narrow(const float* __restrict x, int64_t rows, int64_t in, const float* __restrict weight,
                          const float* __restrict bias, int64_t out, int64_t o0, float* __restrict y) {
  const int64_t full = in - in % 8;
  for (int64_t r = 0; r < rows; ++r) {
    const float* __restrict x_row = x + r * in;
    for (int64_t o = o0; o < out; ++o) {
      const float* __restrict w_row = weight + o * in;
      Vec8 acc = {};
      for (int64_t i = 0; i < full; i += 8) acc += load8(x_row + i) * load8(w_row + i);
      float sum = 0.0f;
      for (int lane = 0; lane < 8; ++lane) sum += acc[lane];
      for (int64_t i = full; i < in; ++i) sum += x_row[i] * w_row[i];
      y[r * out + o] = bias[o] + sum;
    }
  }
}

// The hot loop: y = x W^T + b over row blocks and output blocks.
RLX_VECTOR_CLONES void affine_rows(const float* __restrict x, int64_t rows,
                                                                    const DenseWeights& layer, float* __restrict y) {
  const int64_t in = layer.in, out = layer.out;
  const float* __restrict weight_t = layer.weight_t.data();
  const float* __restrict bias = layer.bias.data();
  const int64_t full_outputs = out - out % kBlockOutputs;
  int64_t r = 0;
  for (; r + kBlockRows <= rows; r += kBlockRows) {
    for (int64_t o0 = 0; o0 < full_outputs; o0 += kBlockOutputs) {
      affine_block<kBlockRows>(x + r * in, in, weight_t, bias, out, o0, y + r * out);
    }
  }
  for (; r < rows; ++r) {
    for (int64_t o0 = 0; o0 < full_outputs; o0 += kBlockOutputs) {
      affine_block<1>(x + r * in, in, weight_t, bias, out, o0, y + r * out);
    }
  }
  if (full_outputs < out) affine_narrow(x, rows, in, layer.weight.data(), bias, out, full_outputs, y);
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
  for (int64_t o = 0; o < out; ++o) {
    for (int64_t i = 0; i < in; ++i) weight_t[static_cast<size_t>(i * out + o)] = weight_rows[o * in + i];
  }
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

// ---- DenseChainKernel ----

void DenseChainKernel::load(const float* flat) {
  for (size_t l = 0; l < chain_.size(); ++l) {
    const DenseLayerSpec& layer = chain_[l];
    weights_[l].assign(flat + layer.weight_offset, flat + layer.bias_offset, layer.in, layer.out);
  }
}

const float* DenseChainKernel::run(const float* input, int64_t rows) {
  const float* x = input;
  for (size_t l = 0; l < chain_.size(); ++l) {
    std::vector<float>& y = buffers_[l % 2];
    y.resize(static_cast<size_t>(rows * chain_[l].out));  // grows once, then reused
    dense_forward(x, rows, weights_[l], chain_[l].activation, y.data());
    x = y.data();
  }
  return x;
}

// ---- ActorCriticKernel ----

ActorCriticKernel::ActorCriticKernel(const ActorCriticLayout& layout)
    : layout_(layout), trunk_(layout.trunk), policy_(layout.policy_chain), value_(layout.value_chain) {}

void ActorCriticKernel::load(const float* flat) {
  trunk_.load(flat);
  policy_.load(flat);
  value_.load(flat);
  if (layout_.log_std) {
    log_std_.assign(flat + layout_.log_std->offset, flat + layout_.log_std->offset + layout_.log_std->size);
    std_.resize(log_std_.size());
    for (size_t i = 0; i < log_std_.size(); ++i) std_[i] = std::exp(log_std_[i]);
  }
}

void ActorCriticKernel::forward(const float* obs, int64_t rows, float* policy_out, float* values) {
  const float* features = trunk_.run(obs, rows);
  const float* policy = policy_.run(features, rows);
  std::memcpy(policy_out, policy, static_cast<size_t>(rows * layout_.policy_outputs) * sizeof(float));
  if (values == nullptr) return;  // the value head is not wanted (the learner recomputes V)
  const float* value = value_.run(features, rows);
  std::memcpy(values, value, static_cast<size_t>(rows) * sizeof(float));
}

// ---- QNetworkKernel ----

QNetworkKernel::QNetworkKernel(const QNetworkLayout& layout) : layout_(layout), trunk_(layout.trunk) {
  for (const DenseLayerSpec& head : layout.heads) heads_.emplace_back(DenseChain{head});
}

void QNetworkKernel::load(const float* flat) {
  trunk_.load(flat);
  for (DenseChainKernel& head : heads_) head.load(flat);
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
