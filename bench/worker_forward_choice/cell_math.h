// The element-wise half of an LSTM / GRU cell (after the gate products), shared by the hand
// back end and the XNNPACK one (XNNPACK 2022 has no recurrent operator and no float tanh).
// Branch-free so that GCC vectorises the loops, in the style of models/network_kernel.cc's
// tanh_in_place: exp(t) = 2^k exp(r), |r| <= ln2/2, exp(r) by its degree-6 Taylor polynomial.
#pragma once

#include <cstdint>

namespace wfc {

// lstm: gates [k][4H] (pre-activations i, f, g, o incl. bias), c [k][H]; writes h' and c' at
// out[r * out_stride + j] and out[r * out_stride + H + j].
void lstm_pointwise(const float* gates, const float* c, int k, int hidden, float* out, int out_stride);
// gru: gi = x W + [b_u, b_r, b_o], gh = h U + [0, 0, b_o'] ([k][3H] each); writes h' at
// out[r * out_stride + j].
void gru_pointwise(const float* gi, const float* gh, const float* h, int k, int hidden, float* out,
                   int out_stride);

}  // namespace wfc
