// The register-blocked product at the heart of both torch-free back ends: the workers' inference
// kernel (models/network_kernel.cc, y = x W^T + b) and the native learners' training products
// (native/dense_backprop.cc, C = A B + bias). One definition, always inlined, so that each caller
// compiles it for its own instruction-set clones (models/kernel_clones.h): an out-of-line copy
// would be baseline code, many times slower. Every output sums its terms in the same order
// (bias or zero, then k = 0, 1, ...) in every clone and block shape.
#pragma once

#include <cstdint>
#include <cstring>

namespace rlx::product {

constexpr int64_t kBlockRows = 4;      // rows of C sharing each load of B
constexpr int64_t kBlockColumns = 16;  // columns of C held in registers: two Vec8

// Eight floats in GCC's vector extension: one AVX register, or two SSE registers in the
// baseline clone.
typedef float Vec8 __attribute__((vector_size(32)));

__attribute__((always_inline)) inline Vec8 load8(const float* p) {
  Vec8 v;
  std::memcpy(&v, p, sizeof(v));
  return v;
}

__attribute__((always_inline)) inline void store8(float* p, Vec8 v) { std::memcpy(p, &v, sizeof(v)); }

// C[r, n0..n0+16) for kRows rows of A [kRows, k]: bias[n0..] (or 0 when bias is null) +
// sum_i a[r, i] b_kn[i, n0..], summed in i order, with B [k, n] row-major.
template <int64_t kRows>
__attribute__((always_inline)) inline void block(const float* __restrict a, int64_t k, const float* __restrict b_kn,
                                                 int64_t n, const float* __restrict bias, int64_t n0,
                                                 float* __restrict c) {
  Vec8 acc[kRows][2];
  const Vec8 init0 = bias ? load8(bias + n0) : Vec8{};
  const Vec8 init1 = bias ? load8(bias + n0 + 8) : Vec8{};
  for (int64_t r = 0; r < kRows; ++r) {
    acc[r][0] = init0;
    acc[r][1] = init1;
  }
  for (int64_t i = 0; i < k; ++i) {
    const Vec8 b0 = load8(b_kn + i * n + n0);
    const Vec8 b1 = load8(b_kn + i * n + n0 + 8);
    for (int64_t r = 0; r < kRows; ++r) {
      const float ai = a[r * k + i];
      acc[r][0] += ai * b0;
      acc[r][1] += ai * b1;
    }
  }
  for (int64_t r = 0; r < kRows; ++r) {
    store8(c + r * n + n0, acc[r][0]);
    store8(c + r * n + n0 + 8, acc[r][1]);
  }
}

// The columns n0..n of C narrower than a block, for `rows` rows: bias (or 0) + the dot products
// of A's rows with b_nk's rows (B transposed, [n, k]), over eight lanes summed lane by lane in a
// fixed order.
__attribute__((always_inline)) inline void narrow(const float* __restrict a, int64_t rows, int64_t k,
                                                  const float* __restrict b_nk, int64_t n,
                                                  const float* __restrict bias, int64_t n0, float* __restrict c) {
  const int64_t full = k - k % 8;
  for (int64_t r = 0; r < rows; ++r) {
    const float* __restrict a_row = a + r * k;
    for (int64_t j = n0; j < n; ++j) {
      const float* __restrict b_row = b_nk + j * k;
      Vec8 acc = {};
      for (int64_t i = 0; i < full; i += 8) acc += load8(a_row + i) * load8(b_row + i);
      float sum = 0.0f;
      for (int lane = 0; lane < 8; ++lane) sum += acc[lane];
      for (int64_t i = full; i < k; ++i) sum += a_row[i] * b_row[i];
      c[r * n + j] = (bias ? bias[j] : 0.0f) + sum;
    }
  }
}

// out [cols, rows] = in [rows, cols]^T: a weight W [n, k] as the b_kn that rows() reads.
inline void transpose(const float* in, int64_t rows, int64_t cols, float* out) {
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t c = 0; c < cols; ++c) out[c * rows + r] = in[r * cols + c];
  }
}

// C[rows, n] = A[rows, k] B[k, n] (+ bias): full blocks of kBlockRows x kBlockColumns, then
// single rows, then the narrow columns. Inline into a function compiled for the wanted clones.
__attribute__((always_inline)) inline void rows(const float* a, int64_t rows, int64_t k, const float* b_kn,
                                                const float* b_nk, int64_t n, const float* bias, float* c) {
  const int64_t full = n - n % kBlockColumns;
  int64_t r = 0;
  for (; r + kBlockRows <= rows; r += kBlockRows) {
    for (int64_t n0 = 0; n0 < full; n0 += kBlockColumns) block<kBlockRows>(a + r * k, k, b_kn, n, bias, n0, c + r * n);
  }
  for (; r < rows; ++r) {
    for (int64_t n0 = 0; n0 < full; n0 += kBlockColumns) block<1>(a + r * k, k, b_kn, n, bias, n0, c + r * n);
  }
  if (full < n) narrow(a, rows, k, b_nk, n, bias, full, c);
}

}  // namespace rlx::product
