// Hand back end: im2col (NHWC) + rlx::product::rows (models/product_block.h) for the convs
// and the dense layer, one product on [x, h] (LSTM) or two (GRU) + cell_math for the cells.
#include <algorithm>
#include <cstring>
#include <memory>

#include "bench/worker_forward_choice/cell_math.h"
#include "bench/worker_forward_choice/clones.h"
#include "bench/worker_forward_choice/common.h"
#include "models/product_block.h"

namespace wfc {
namespace {

// B[k, n] from W[n][k] (the only copy the hand back end keeps).
std::vector<float> transpose(const std::vector<float>& w, int n, int k) {
  std::vector<float> t(w.size());
  for (int o = 0; o < n; ++o)
    for (int i = 0; i < k; ++i) t[static_cast<size_t>(i) * n + o] = w[static_cast<size_t>(o) * k + i];
  return t;
}

#if defined(WFC_TILE6)
// Experimental driver over the same product_block.h blocks: 6 x 16 register tiles (12 AVX2
// accumulators instead of 8) and column panels outermost, so that a k x 16 panel of B stays in
// L2 while every row group passes over it. Each output still sums bias, k = 0, 1, ... in order:
// the same bits as rlx::product::rows.
__attribute__((always_inline)) inline void product_rows(const float* a, int64_t rows, int64_t k, const float* b_kn,
                                                        int64_t n, const float* bias, float* c) {
  constexpr int64_t kTile = 6;
  for (int64_t n0 = 0; n0 < n; n0 += rlx::product::kBlockColumns) {
    int64_t r = 0;
    for (; r + kTile <= rows; r += kTile) rlx::product::block<kTile>(a + r * k, k, b_kn, n, bias, n0, c + r * n);
    for (; r + 2 <= rows; r += 2) rlx::product::block<2>(a + r * k, k, b_kn, n, bias, n0, c + r * n);
    for (; r < rows; ++r) rlx::product::block<1>(a + r * k, k, b_kn, n, bias, n0, c + r * n);
  }
}
#else
__attribute__((always_inline)) inline void product_rows(const float* a, int64_t rows, int64_t k, const float* b_kn,
                                                        int64_t n, const float* bias, float* c) {
  rlx::product::rows(a, rows, k, b_kn, nullptr, n, bias, c);
}
#endif

// C = A B + bias, then ReLU (n a multiple of 16: product::rows never needs B transposed).
WFC_PRODUCT_CLONES void affine_relu(const float* a, int64_t rows, int64_t k, const float* b_kn, int64_t n,
                                    const float* bias, float* c) {
  product_rows(a, rows, k, b_kn, n, bias, c);
  for (int64_t i = 0; i < rows * n; ++i) c[i] = c[i] > 0.0f ? c[i] : 0.0f;
}

WFC_PRODUCT_CLONES void affine(const float* a, int64_t rows, int64_t k, const float* b_kn, int64_t n,
                               const float* bias, float* c) {
  product_rows(a, rows, k, b_kn, n, bias, c);
}

// col[oh * OW + ow][(kh * KW + kw) * C + c] from one NHWC image: each kh is one contiguous run.
void im2col(const float* __restrict x, const Conv& s, float* __restrict col) {
  const int oh_n = s.oh(), ow_n = s.ow(), run = s.kw * s.c;
  for (int oh = 0; oh < oh_n; ++oh)
    for (int ow = 0; ow < ow_n; ++ow) {
      float* dst = col + (static_cast<size_t>(oh) * ow_n + ow) * s.patch();
      for (int kh = 0; kh < s.kh; ++kh)
        std::memcpy(dst + kh * run, x + (static_cast<size_t>(oh * s.stride + kh) * s.w + ow * s.stride) * s.c,
                    sizeof(float) * run);
    }
}

class HandPixel : public Net {
 public:
  HandPixel(Model m, int k) : k_(k) {
    PixelWeights p = pixel_weights(m);
    enc_ = p.enc;
    size_t col = 0, act = 0;
    for (size_t l = 0; l < enc_.convs.size(); ++l) {
      const Conv& c = enc_.convs[l];
      w_kn_.push_back(transpose(p.conv_w[l], c.o, c.patch()));
      bias_.push_back(p.conv_b[l]);
      col = std::max(col, static_cast<size_t>(c.oh()) * c.ow() * c.patch());
      act = std::max(act, static_cast<size_t>(c.oh()) * c.ow() * c.o);
    }
    dense_kn_ = transpose(p.dense_w, enc_.dense_out, enc_.dense_in());
    dense_b_ = p.dense_b;
    image_.resize(enc_.image_size());
    col_.resize(col);
    act_[0].resize(act);
    act_[1].resize(act);
    features_.resize(static_cast<size_t>(k) * enc_.dense_in());
  }

  void forward(const Inputs& in, float* out) override {
    const int n_layers = static_cast<int>(enc_.convs.size());
    for (int r = 0; r < k_; ++r) {
      images_to_float(in.images.data() + static_cast<size_t>(r) * enc_.image_size(), enc_.image_size(),
                      image_.data());
      const float* x = image_.data();
      for (int l = 0; l < n_layers; ++l) {
        const Conv& c = enc_.convs[l];
        float* y = l + 1 == n_layers ? features_.data() + static_cast<size_t>(r) * enc_.dense_in() : act_[l % 2].data();
        im2col(x, c, col_.data());
        affine_relu(col_.data(), c.oh() * c.ow(), c.patch(), w_kn_[l].data(), c.o, bias_[l].data(), y);
        x = y;
      }
    }
    affine_relu(features_.data(), k_, enc_.dense_in(), dense_kn_.data(), enc_.dense_out, dense_b_.data(), out);
  }

 private:
  int k_;
  Encoder enc_;
  std::vector<std::vector<float>> w_kn_, bias_;
  std::vector<float> dense_kn_, dense_b_, image_, col_, act_[2], features_;
};

class HandCell : public Net {
 public:
  HandCell(Model m, int k) : m_(m), k_(k) {
    CellWeights w = cell_weights(m);
    const int H = kCellHidden, G = w.gates;
    if (m == Model::kLstm) {
      // One product: [x, h] (k = in + H) times [W_x; W_h], both already [k][4H].
      w_.assign(w.w_x.begin(), w.w_x.end());
      w_.insert(w_.end(), w.w_h.begin(), w.w_h.end());
      b_x_ = w.bias;
      xh_.resize(static_cast<size_t>(k) * (kCellIn + H));
    } else {
      w_ = w.w_x;
      w_h_ = w.w_h;
      b_x_.assign(w.bias.begin(), w.bias.begin() + 3 * H);  // b_u, b_r, b_o
      b_h_.assign(3 * H, 0.0f);
      std::copy(w.bias.begin() + 3 * H, w.bias.end(), b_h_.begin() + 2 * H);  // b_o'
      gh_.resize(static_cast<size_t>(k) * G * H);
    }
    gates_.resize(static_cast<size_t>(k) * G * H);
  }

  void forward(const Inputs& in, float* out) override {
    const int H = kCellHidden;
    if (m_ == Model::kLstm) {
      for (int r = 0; r < k_; ++r) {
        std::memcpy(xh_.data() + static_cast<size_t>(r) * (kCellIn + H), in.x.data() + static_cast<size_t>(r) * kCellIn,
                    sizeof(float) * kCellIn);
        std::memcpy(xh_.data() + static_cast<size_t>(r) * (kCellIn + H) + kCellIn,
                    in.h.data() + static_cast<size_t>(r) * H, sizeof(float) * H);
      }
      affine(xh_.data(), k_, kCellIn + H, w_.data(), 4 * H, b_x_.data(), gates_.data());
      lstm_pointwise(gates_.data(), in.c.data(), k_, H, out, 2 * H);
    } else {
      affine(in.x.data(), k_, kCellIn, w_.data(), 3 * H, b_x_.data(), gates_.data());
      affine(in.h.data(), k_, H, w_h_.data(), 3 * H, b_h_.data(), gh_.data());
      gru_pointwise(gates_.data(), gh_.data(), in.h.data(), k_, H, out, H);
    }
  }

 private:
  Model m_;
  int k_;
  std::vector<float> w_, w_h_, b_x_, b_h_, xh_, gates_, gh_;
};

}  // namespace

#if defined(WFC_TILE6)
const char* backend_name() { return "hand_t6"; }
#elif defined(WFC_FMA)
const char* backend_name() { return "hand_fma"; }
#else
const char* backend_name() { return "hand"; }
#endif

Net* make_net(Model m, int k) {
  if (is_pixel(m)) return new HandPixel(m, k);
  return new HandCell(m, k);
}

}  // namespace wfc
