// Standalone measurement (not part of the rlx build): the torch-free worker forward for pixel
// encoders and recurrent cores, hand kernels (models/product_block.h + im2col) against oneDNN
// and XNNPACK. Shapes, deterministic weights and inputs shared by every back end, so that all
// of them compute the same function and their outputs can be compared.
//
// Layouts (all back ends are handed the same arrays):
//   images NHWC (uint8, scaled by 1/255 to float inside the timed forward);
//   conv weights [O][KH][KW][C] ("ohwi"); dense weights [out][in] with `in` flattened in
//   NHWC order (h, w, c); recurrent weights [in][gate][hidden] ("ldigo" with L = D = 1), so
//   that W[in][gate * H + o] is directly the product block's B[k, n].
//   LSTM gates i, f, g, o; GRU (PyTorch / oneDNN "linear before reset") gates u, r, o with
//   bias {b_u, b_r, b_o, b_o'}: o = tanh(W_o x + b_o + r * (U_o h + b_o')).
#pragma once

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace wfc {

enum class Model { kNature, kMinAtar, kLstm, kGru };

inline const char* model_name(Model m) {
  switch (m) {
    case Model::kNature: return "nature";
    case Model::kMinAtar: return "minatar";
    case Model::kLstm: return "lstm";
    case Model::kGru: return "gru";
  }
  return "?";
}

inline bool parse_model(const std::string& s, Model* m) {
  for (Model c : {Model::kNature, Model::kMinAtar, Model::kLstm, Model::kGru}) {
    if (s == model_name(c)) {
      *m = c;
      return true;
    }
  }
  return false;
}

struct Conv {
  int h, w, c;        // input
  int kh, kw, stride; // kernel, no padding ("valid")
  int o;              // output channels
  int oh() const { return (h - kh) / stride + 1; }
  int ow() const { return (w - kw) / stride + 1; }
  int patch() const { return kh * kw * c; }
};

constexpr int kMinAtarChannels = 10;  // the widest MinAtar game (Seaquest)
constexpr int kCellIn = 128;
constexpr int kCellHidden = 128;

// The encoder of one pixel model: convs (ReLU after each), then one dense layer with ReLU.
struct Encoder {
  std::vector<Conv> convs;
  int dense_out;
  int dense_in() const {
    const Conv& l = convs.back();
    return l.oh() * l.ow() * l.o;
  }
  int image_size() const { return convs[0].h * convs[0].w * convs[0].c; }
};

inline Encoder encoder_of(Model m) {
  if (m == Model::kNature) {
    return Encoder{{{84, 84, 4, 8, 8, 4, 32}, {20, 20, 32, 4, 4, 2, 64}, {9, 9, 64, 3, 3, 1, 64}}, 512};
  }
  return Encoder{{{10, 10, kMinAtarChannels, 3, 3, 1, 16}}, 128};
}

inline bool is_pixel(Model m) { return m == Model::kNature || m == Model::kMinAtar; }

// Deterministic uniform numbers (an LCG; independent of the standard library).
struct Rng {
  uint64_t s;
  explicit Rng(uint64_t seed) : s(seed * 6364136223846793005ull + 1442695040888963407ull) {}
  float uniform(float lo, float hi) {
    s = s * 6364136223846793005ull + 1442695040888963407ull;
    const uint32_t bits = static_cast<uint32_t>(s >> 40);  // 24 bits
    return lo + (hi - lo) * (static_cast<float>(bits) / 16777216.0f);
  }
};

inline std::vector<float> uniform_vector(size_t n, float bound, uint64_t seed) {
  Rng rng(seed);
  std::vector<float> v(n);
  for (float& x : v) x = rng.uniform(-bound, bound);
  return v;
}

// Weights of every model, in the layouts above.
struct PixelWeights {
  Encoder enc;
  std::vector<std::vector<float>> conv_w, conv_b;  // [O][KH][KW][C], [O]
  std::vector<float> dense_w, dense_b;             // [out][in], [out]
};

inline PixelWeights pixel_weights(Model m) {
  PixelWeights p;
  p.enc = encoder_of(m);
  uint64_t seed = 11;
  for (const Conv& c : p.enc.convs) {
    const float bound = 1.0f / std::sqrt(static_cast<float>(c.patch()));
    p.conv_w.push_back(uniform_vector(static_cast<size_t>(c.o) * c.patch(), bound, seed++));
    p.conv_b.push_back(uniform_vector(static_cast<size_t>(c.o), bound, seed++));
  }
  const float bound = 1.0f / std::sqrt(static_cast<float>(p.enc.dense_in()));
  p.dense_w = uniform_vector(static_cast<size_t>(p.enc.dense_out) * p.enc.dense_in(), bound, seed++);
  p.dense_b = uniform_vector(static_cast<size_t>(p.enc.dense_out), bound, seed++);
  return p;
}

struct CellWeights {
  int gates;                  // 4 (LSTM) or 3 (GRU)
  std::vector<float> w_x;     // [in][gates][H]
  std::vector<float> w_h;     // [H][gates][H]
  std::vector<float> bias;    // LSTM [4][H]; GRU [4][H]: b_u, b_r, b_o, b_o'
};

inline CellWeights cell_weights(Model m) {
  CellWeights w;
  w.gates = m == Model::kLstm ? 4 : 3;
  const float bound = 1.0f / std::sqrt(static_cast<float>(kCellHidden));
  w.w_x = uniform_vector(static_cast<size_t>(kCellIn) * w.gates * kCellHidden, bound, 101);
  w.w_h = uniform_vector(static_cast<size_t>(kCellHidden) * w.gates * kCellHidden, bound, 102);
  w.bias = uniform_vector(static_cast<size_t>(4) * kCellHidden, bound, 103);
  return w;
}

// Inputs for a batch of k rows: images (uint8) or the cell's x, h, c.
struct Inputs {
  std::vector<uint8_t> images;   // [k][H][W][C]
  std::vector<float> x, h, c;    // [k][128]
};

inline Inputs make_inputs(Model m, int k) {
  Inputs in;
  if (is_pixel(m)) {
    const Encoder e = encoder_of(m);
    in.images.resize(static_cast<size_t>(k) * e.image_size());
    Rng rng(7);
    for (uint8_t& v : in.images) {
      const float u = rng.uniform(0.0f, 1.0f);
      v = m == Model::kMinAtar ? (u < 0.2f ? 255 : 0) : static_cast<uint8_t>(u * 255.0f);
    }
  } else {
    in.x = uniform_vector(static_cast<size_t>(k) * kCellIn, 1.0f, 201);
    in.h = uniform_vector(static_cast<size_t>(k) * kCellHidden, 0.9f, 202);
    in.c = uniform_vector(static_cast<size_t>(k) * kCellHidden, 1.5f, 203);
  }
  return in;
}

// Floats per batch row of the output: encoder features, LSTM h' then c', GRU h'.
inline int output_width(Model m) {
  if (is_pixel(m)) return encoder_of(m).dense_out;
  return m == Model::kLstm ? 2 * kCellHidden : kCellHidden;
}

// The same uint8 -> float conversion in every back end (part of the timed forward).
inline void images_to_float(const uint8_t* __restrict in, size_t n, float* __restrict out) {
  for (size_t i = 0; i < n; ++i) out[i] = static_cast<float>(in[i]) * (1.0f / 255.0f);
}

// One back end's network for one model and batch size.
class Net {
 public:
  virtual ~Net() = default;
  // out: [k][output_width(model)]
  virtual void forward(const Inputs& in, float* out) = 0;
};

// Defined once per back end (hand.cc, onednn.cc, xnnpack.cc).
Net* make_net(Model m, int k);
const char* backend_name();

}  // namespace wfc
