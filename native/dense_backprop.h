// The arithmetic of training dense layers on CPU, torch-free: the three matrix products of a
// layer's forward and backward (X W^T, G^T H, G W), bias gradients, activation derivatives and
// an Adam step, in plain C++ with GCC's vector extension, compiled for AVX2 and for baseline
// x86-64 and picked at load time (models/network_kernel.cc's approach); the two products also
// have an AVX2+FMA clone (x86-64-v3), which on Intel cores doubles their throughput (so their
// results differ by rounding between CPUs, as LibTorch's do). Sized for PPO's small
// networks (minibatches of a few hundred rows, widths 4..256), where a BLAS call's overhead
// would dominate. Products of more than ~4M multiply-adds split their output rows over
// native/product_threads.h's threads, with the same bits for any count. All matrices are dense row-major float32; outputs never alias inputs.
#pragma once

#include <cstdint>

#include "models/network_layout.h"

namespace rlx {

// C[rows, n] = A[rows, k] B[k, n] (+ bias[n] when bias is not null). B is given twice: b_kn
// [k, n] and its transpose b_nk [n, k] (read for the columns past the last block of 16).
void matmul(const float* a, int64_t rows, int64_t k, const float* b_kn, const float* b_nk, int64_t n,
            const float* bias, float* c);

// C[m, n] = A[rows, m]^T B[rows, n] (the weight gradient of a layer, summed over rows).
void matmul_transposed_a(const float* a, const float* b, int64_t rows, int64_t m, int64_t n, float* c);

// out[c, r] = in[r, c] for in [rows, cols].
void transpose(const float* in, int64_t rows, int64_t cols, float* out);

// sums[n] = sum over rows of g[rows, n] (the bias gradient).
void column_sums(const float* g, int64_t rows, int64_t n, float* sums);

// grad[i] *= the derivative of `activation` at the output out[i] (tanh: 1 - out^2; relu: out > 0).
void activation_backward(float* grad, const float* out, int64_t count, Activation activation);

// Sum of squares of values[0..count) in double.
double sum_of_squares(const float* values, int64_t count);

// values[0..count) *= factor.
void scale_in_place(float* values, int64_t count, float factor);

// One step of torch::optim::Adam (no weight decay; no amsgrad) at step number `step` (>= 1,
// counting this one): the moments take the gradient, then
// params -= lr / (1 - beta1^step) * exp_avg / (sqrt(exp_avg_sq) / sqrt(1 - beta2^step) + eps).
// rlx's one Adam: the native learners' and, on the CPU, the LibTorch DQN learner's
// (learner/flat_adam.h).
void adam_step(float* params, const float* grads, float* exp_avg, float* exp_avg_sq, int64_t count, int64_t step,
               double lr, double eps, double beta1 = 0.9, double beta2 = 0.999);

}  // namespace rlx
