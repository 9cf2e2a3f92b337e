#include "bench/worker_forward_choice/cell_math.h"

#include <cmath>
#include <cstring>

#include "bench/worker_forward_choice/clones.h"

namespace wfc {
namespace {

// exp(t) for t in [-87, 0]: a copy of models/network_kernel.cc's (there in an anonymous
// namespace), so that this standalone measurement links nothing of rlx. The recurrent cores of
// models/ must share that one instead of copying it again.
__attribute__((always_inline)) inline float exp_nonpositive(float t) {
  constexpr float kLog2e = 1.44269504088896341f;
  constexpr float kLn2Hi = 0.693145751953125f;
  constexpr float kLn2Lo = 1.42860682030941723e-06f;
  constexpr float kRound = 12582912.0f;
  t = t < -87.0f ? -87.0f : t;
  const float shifted = t * kLog2e + kRound;
  const float k = shifted - kRound;
  const float r = (t - k * kLn2Hi) - k * kLn2Lo;
  const float p =
      1.0f + r * (1.0f + r * (0.5f + r * (1.0f / 6 + r * (1.0f / 24 + r * (1.0f / 120 + r * (1.0f / 720))))));
  const int32_t exponent_bits = (static_cast<int32_t>(k) + 127) << 23;
  float scale;
  std::memcpy(&scale, &exponent_bits, sizeof(scale));
  return p * scale;
}

__attribute__((always_inline)) inline float sigmoid(float x) {
  const float e = exp_nonpositive(-std::fabs(x));
  const float inv = 1.0f / (1.0f + e);
  return x >= 0.0f ? inv : e * inv;
}

__attribute__((always_inline)) inline float tanh_(float x) {
  const float a = std::fabs(x);
  const float e = exp_nonpositive(-2.0f * (a > 9.0f ? 9.0f : a));
  return std::copysign((1.0f - e) / (1.0f + e), x);
}

}  // namespace

WFC_VECTOR_CLONES void lstm_pointwise(const float* __restrict gates, const float* __restrict c, int k, int hidden,
                                      float* __restrict out, int out_stride) {
  for (int r = 0; r < k; ++r) {
    const float* g = gates + static_cast<int64_t>(r) * 4 * hidden;
    const float* c_row = c + static_cast<int64_t>(r) * hidden;
    float* h_out = out + static_cast<int64_t>(r) * out_stride;
    float* c_out = h_out + hidden;
    for (int j = 0; j < hidden; ++j) {
      const float i = sigmoid(g[j]);
      const float f = sigmoid(g[hidden + j]);
      const float cand = tanh_(g[2 * hidden + j]);
      const float o = sigmoid(g[3 * hidden + j]);
      const float cn = f * c_row[j] + i * cand;
      c_out[j] = cn;
      h_out[j] = o * tanh_(cn);
    }
  }
}

WFC_VECTOR_CLONES void gru_pointwise(const float* __restrict gi, const float* __restrict gh, const float* __restrict h,
                                     int k, int hidden, float* __restrict out, int out_stride) {
  for (int r = 0; r < k; ++r) {
    const float* a = gi + static_cast<int64_t>(r) * 3 * hidden;
    const float* b = gh + static_cast<int64_t>(r) * 3 * hidden;
    const float* h_row = h + static_cast<int64_t>(r) * hidden;
    float* h_out = out + static_cast<int64_t>(r) * out_stride;
    for (int j = 0; j < hidden; ++j) {
      const float u = sigmoid(a[j] + b[j]);
      const float rr = sigmoid(a[hidden + j] + b[hidden + j]);
      const float n = tanh_(a[2 * hidden + j] + rr * b[2 * hidden + j]);
      h_out[j] = u * h_row[j] + (1.0f - u) * n;
    }
  }
}

}  // namespace wfc
