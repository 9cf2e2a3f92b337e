#include "native/dense_backprop.h"

#include "models/kernel_clones.h"
#include "models/product_block.h"
#include "native/product_threads.h"

#include <algorithm>
#include <cmath>
#include <cstring>

namespace rlx {

namespace {

using product::kBlockColumns;
using product::kBlockRows;
using product::load8;
using product::store8;
using product::Vec8;

constexpr int64_t kTransposedChunkRows = 16;  // rows of A and B per pass of matmul_transposed_a
// Products of fewer multiply-adds than this (~3 us on one core) run on their caller; handing a
// slice to a helper that watches for work costs well under a microsecond.
constexpr int64_t kThreadedProductMacs = int64_t{1} << 18;

// The helpers below are always inlined: each must be compiled for the clone (AVX2 or
// baseline) that calls it; an out-of-line copy is baseline code, many times slower.

// C[m0..m0+kRows, n0..n0+16) (+)= sum_r a[r, m] b[r, n] over rows r0..r1, summed in r order
// onto zero (first) or onto what C holds.
template <int64_t kRows>
__attribute__((always_inline)) inline void matmul_transposed_block(const float* __restrict a, const float* __restrict b, int64_t r0, int64_t r1,
                                    int64_t m, int64_t n, int64_t m0, int64_t n0, bool first, float* __restrict c) {
  Vec8 acc[kRows][2];
  for (int64_t i = 0; i < kRows; ++i) {
    acc[i][0] = first ? Vec8{} : load8(c + (m0 + i) * n + n0);
    acc[i][1] = first ? Vec8{} : load8(c + (m0 + i) * n + n0 + 8);
  }
  for (int64_t r = r0; r < r1; ++r) {
    const Vec8 b0 = load8(b + r * n + n0);
    const Vec8 b1 = load8(b + r * n + n0 + 8);
    for (int64_t i = 0; i < kRows; ++i) {
      const float ai = a[r * m + m0 + i];
      acc[i][0] += ai * b0;
      acc[i][1] += ai * b1;
    }
  }
  for (int64_t i = 0; i < kRows; ++i) {
    store8(c + (m0 + i) * n + n0, acc[i][0]);
    store8(c + (m0 + i) * n + n0 + 8, acc[i][1]);
  }
}

// matmul's rows [0, rows) of A and C, for a slice of the full product (models/product_block.h,
// compiled for this function's clones).
RLX_PRODUCT_CLONES void matmul_rows(const float* a, int64_t rows, int64_t k, const float* b_kn, const float* b_nk,
                                    int64_t n, const float* bias, float* c) {
  product::rows(a, rows, k, b_kn, b_nk, n, bias, c);
}

// matmul_transposed_a's rows [m_begin, m_end) of C, for a slice of the full product.
RLX_PRODUCT_CLONES void matmul_transposed_a_rows(const float* a, const float* b, int64_t rows, int64_t m, int64_t n,
                                                 int64_t m_begin, int64_t m_end, float* c) {
  const int64_t full = n - n % kBlockColumns;
  // Rows in chunks whose slices of A and B stay in L1 while every block of C passes over them.
  for (int64_t r0 = 0; r0 < rows; r0 += kTransposedChunkRows) {
    const int64_t r1 = std::min(r0 + kTransposedChunkRows, rows);
    int64_t m0 = m_begin;
    for (; m0 + kBlockRows <= m_end; m0 += kBlockRows) {
      for (int64_t n0 = 0; n0 < full; n0 += kBlockColumns) {
        matmul_transposed_block<kBlockRows>(a, b, r0, r1, m, n, m0, n0, r0 == 0, c);
      }
    }
    for (; m0 < m_end; ++m0) {
      for (int64_t n0 = 0; n0 < full; n0 += kBlockColumns) matmul_transposed_block<1>(a, b, r0, r1, m, n, m0, n0, r0 == 0, c);
    }
  }
  // Columns past the last block (narrow layers): row-ordered sums, vectorised over i.
  if (full < n) {
    for (int64_t i = m_begin; i < m_end; ++i) {
      for (int64_t j = full; j < n; ++j) c[i * n + j] = 0.0f;
    }
    for (int64_t r = 0; r < rows; ++r) {
      for (int64_t i = m_begin; i < m_end; ++i) {
        const float ai = a[r * m + i];
        for (int64_t j = full; j < n; ++j) c[i * n + j] += ai * b[r * n + j];
      }
    }
  }
}

}  // namespace

void matmul(const float* a, int64_t rows, int64_t k, const float* b_kn, const float* b_nk, int64_t n, const float* bias,
            float* c) {
  if (rows * k * n < kThreadedProductMacs || product_threads() == 1) {
    matmul_rows(a, rows, k, b_kn, b_nk, n, bias, c);
    return;
  }
  for_row_slices(rows, kBlockRows, [&](int64_t begin, int64_t end) {
    matmul_rows(a + begin * k, end - begin, k, b_kn, b_nk, n, bias, c + begin * n);
  });
}

void matmul_transposed_a(const float* a, const float* b, int64_t rows, int64_t m, int64_t n, float* c) {
  if (rows * m * n < kThreadedProductMacs || product_threads() == 1) {
    matmul_transposed_a_rows(a, b, rows, m, n, 0, m, c);
    return;
  }
  for_row_slices(m, kBlockRows, [&](int64_t begin, int64_t end) { matmul_transposed_a_rows(a, b, rows, m, n, begin, end, c); });
}

void transpose(const float* in, int64_t rows, int64_t cols, float* out) {
  // In tiles, so that both the reads and the strided writes stay within a few cache lines.
  constexpr int64_t kTile = 16;
  for (int64_t r0 = 0; r0 < rows; r0 += kTile) {
    const int64_t r1 = std::min(r0 + kTile, rows);
    for (int64_t c0 = 0; c0 < cols; c0 += kTile) {
      const int64_t c1 = std::min(c0 + kTile, cols);
      for (int64_t r = r0; r < r1; ++r) {
        for (int64_t c = c0; c < c1; ++c) out[c * rows + r] = in[r * cols + c];
      }
    }
  }
}

RLX_VECTOR_CLONES void column_sums(const float* g, int64_t rows, int64_t n,
                                                                    float* sums) {
  for (int64_t j = 0; j < n; ++j) sums[j] = 0.0f;
  for (int64_t r = 0; r < rows; ++r) {
    const float* __restrict row = g + r * n;
    for (int64_t j = 0; j < n; ++j) sums[j] += row[j];
  }
}

RLX_VECTOR_CLONES void activation_backward(float* __restrict grad,
                                                                            const float* __restrict out,
                                                                            int64_t count, Activation activation) {
  if (activation == Activation::kTanh) {
    for (int64_t i = 0; i < count; ++i) grad[i] *= 1.0f - out[i] * out[i];
  } else if (activation == Activation::kRelu) {
    for (int64_t i = 0; i < count; ++i) grad[i] = out[i] > 0.0f ? grad[i] : 0.0f;
  }
}

double sum_of_squares(const float* values, int64_t count) {
  double sum = 0.0;
  for (int64_t i = 0; i < count; ++i) sum += static_cast<double>(values[i]) * values[i];
  return sum;
}

void scale_in_place(float* values, int64_t count, float factor) {
  for (int64_t i = 0; i < count; ++i) values[i] *= factor;
}

RLX_VECTOR_CLONES void adam_step(float* __restrict params,
                                                                  const float* __restrict grads,
                                                                  float* __restrict exp_avg,
                                                                  float* __restrict exp_avg_sq, int64_t count,
                                                                  int64_t step, double lr, double eps,
                                                                  double beta1_value, double beta2_value) {
  const double bias_correction1 = 1.0 - std::pow(beta1_value, static_cast<double>(step));
  const double bias_correction2 = 1.0 - std::pow(beta2_value, static_cast<double>(step));
  const auto beta1 = static_cast<float>(beta1_value), one_minus_beta1 = static_cast<float>(1.0 - beta1_value);
  const auto beta2 = static_cast<float>(beta2_value), one_minus_beta2 = static_cast<float>(1.0 - beta2_value);
  const auto sqrt_bias_correction2 = static_cast<float>(std::sqrt(bias_correction2));
  const auto step_size = static_cast<float>(-(lr / bias_correction1));
  const auto epsilon = static_cast<float>(eps);
  for (int64_t i = 0; i < count; ++i) {
    const float g = grads[i];
    const float m = exp_avg[i] * beta1 + g * one_minus_beta1;
    const float v = exp_avg_sq[i] * beta2 + one_minus_beta2 * g * g;
    exp_avg[i] = m;
    exp_avg_sq[i] = v;
    const float denom = std::sqrt(v) / sqrt_bias_correction2 + epsilon;
    params[i] += step_size * m / denom;  // addcdiv_ order: (value * t1) / t2
  }
}

}  // namespace rlx
