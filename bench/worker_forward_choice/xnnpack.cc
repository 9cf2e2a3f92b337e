// XNNPACK back end (operator API, 2022 snapshot): convolution2d_nhwc_f32 and
// fully_connected_nc_f32 with the ReLU as output clamp [0, inf), no thread pool (the calling
// thread). XNNPACK has no LSTM / GRU operator (and no float tanh), so the cells are its
// fully-connected operator for the gate products plus the hand element-wise code (cell_math).
#include <xnnpack.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>

#include "bench/worker_forward_choice/cell_math.h"
#include "bench/worker_forward_choice/common.h"

namespace wfc {
namespace {

void check(xnn_status s, const char* what) {
  if (s != xnn_status_success) {
    std::fprintf(stderr, "xnnpack: %s failed (%d)\n", what, static_cast<int>(s));
    std::exit(2);
  }
}

void init_once() {
  static bool done = false;
  if (!done) check(xnn_initialize(nullptr), "xnn_initialize");
  done = true;
}

constexpr float kInf = std::numeric_limits<float>::infinity();

class XnnPixel : public Net {
 public:
  XnnPixel(Model m, int k) : k_(k) {
    init_once();
    PixelWeights p = pixel_weights(m);
    enc_ = p.enc;
    image_.resize(static_cast<size_t>(k) * enc_.image_size());
    const float* x = image_.data();
    for (size_t l = 0; l < enc_.convs.size(); ++l) {
      const Conv& c = enc_.convs[l];
      xnn_operator_t op = nullptr;
      check(xnn_create_convolution2d_nhwc_f32(0, 0, 0, 0, c.kh, c.kw, c.stride, c.stride, 1, 1, 1, c.c, c.o, c.c, c.o,
                                              p.conv_w[l].data(), p.conv_b[l].data(), 0.0f, kInf, 0, &op),
            "create convolution");
      acts_.emplace_back(static_cast<size_t>(k) * c.oh() * c.ow() * c.o);
      check(xnn_setup_convolution2d_nhwc_f32(op, k, c.h, c.w, x, acts_.back().data(), nullptr), "setup convolution");
      ops_.push_back(op);
      x = acts_.back().data();
      std::vector<float>().swap(p.conv_w[l]);  // XNNPACK packed its own copy
    }
    xnn_operator_t op = nullptr;
    check(xnn_create_fully_connected_nc_f32(enc_.dense_in(), enc_.dense_out, enc_.dense_in(), enc_.dense_out,
                                            p.dense_w.data(), p.dense_b.data(), 0.0f, kInf, 0, &op),
          "create fully connected");
    out_.resize(static_cast<size_t>(k) * enc_.dense_out);
    check(xnn_setup_fully_connected_nc_f32(op, k, x, out_.data(), nullptr), "setup fully connected");
    ops_.push_back(op);
  }
  ~XnnPixel() override {
    for (xnn_operator_t op : ops_) xnn_delete_operator(op);
  }

  void forward(const Inputs& in, float* out) override {
    images_to_float(in.images.data(), image_.size(), image_.data());
    for (xnn_operator_t op : ops_) check(xnn_run_operator(op, nullptr), "run");
    std::memcpy(out, out_.data(), sizeof(float) * out_.size());
  }

 private:
  int k_;
  Encoder enc_;
  std::vector<float> image_, out_;
  std::vector<std::vector<float>> acts_;
  std::vector<xnn_operator_t> ops_;
};

class XnnCell : public Net {
 public:
  XnnCell(Model m, int k) : m_(m), k_(k) {
    init_once();
    CellWeights w = cell_weights(m);
    const int H = kCellHidden, G = w.gates;
    gates_.resize(static_cast<size_t>(k) * G * H);
    // Weights are [in][G*H]: XNN_FLAG_TRANSPOSE_WEIGHTS.
    if (m == Model::kLstm) {
      std::vector<float> wxh(w.w_x);
      wxh.insert(wxh.end(), w.w_h.begin(), w.w_h.end());
      xh_.resize(static_cast<size_t>(k) * (kCellIn + H));
      check(xnn_create_fully_connected_nc_f32(kCellIn + H, G * H, kCellIn + H, G * H, wxh.data(), w.bias.data(), -kInf,
                                              kInf, XNN_FLAG_TRANSPOSE_WEIGHTS, &fx_),
            "create fc");
      check(xnn_setup_fully_connected_nc_f32(fx_, k, xh_.data(), gates_.data(), nullptr), "setup fc");
    } else {
      std::vector<float> b_x(w.bias.begin(), w.bias.begin() + 3 * H), b_h(3 * H, 0.0f);
      std::copy(w.bias.begin() + 3 * H, w.bias.end(), b_h.begin() + 2 * H);
      gh_.resize(static_cast<size_t>(k) * G * H);
      x_.resize(static_cast<size_t>(k) * kCellIn);
      h_.resize(static_cast<size_t>(k) * H);
      check(xnn_create_fully_connected_nc_f32(kCellIn, G * H, kCellIn, G * H, w.w_x.data(), b_x.data(), -kInf, kInf,
                                              XNN_FLAG_TRANSPOSE_WEIGHTS, &fx_),
            "create fc x");
      check(xnn_create_fully_connected_nc_f32(H, G * H, H, G * H, w.w_h.data(), b_h.data(), -kInf, kInf,
                                              XNN_FLAG_TRANSPOSE_WEIGHTS, &fh_),
            "create fc h");
      check(xnn_setup_fully_connected_nc_f32(fx_, k, x_.data(), gates_.data(), nullptr), "setup fc x");
      check(xnn_setup_fully_connected_nc_f32(fh_, k, h_.data(), gh_.data(), nullptr), "setup fc h");
    }
  }
  ~XnnCell() override {
    if (fx_) xnn_delete_operator(fx_);
    if (fh_) xnn_delete_operator(fh_);
  }

  // Operators are set up on fixed buffers: the step copies x and h in (as the oneDNN one does).
  void forward(const Inputs& in, float* out) override {
    const int H = kCellHidden;
    if (m_ == Model::kLstm) {
      for (int r = 0; r < k_; ++r) {
        std::memcpy(xh_.data() + static_cast<size_t>(r) * (kCellIn + H), in.x.data() + static_cast<size_t>(r) * kCellIn,
                    sizeof(float) * kCellIn);
        std::memcpy(xh_.data() + static_cast<size_t>(r) * (kCellIn + H) + kCellIn,
                    in.h.data() + static_cast<size_t>(r) * H, sizeof(float) * H);
      }
      check(xnn_run_operator(fx_, nullptr), "run fc");
      lstm_pointwise(gates_.data(), in.c.data(), k_, H, out, 2 * H);
    } else {
      std::memcpy(x_.data(), in.x.data(), sizeof(float) * x_.size());
      std::memcpy(h_.data(), in.h.data(), sizeof(float) * h_.size());
      check(xnn_run_operator(fx_, nullptr), "run fc x");
      check(xnn_run_operator(fh_, nullptr), "run fc h");
      gru_pointwise(gates_.data(), gh_.data(), in.h.data(), k_, H, out, H);
    }
  }

 private:
  Model m_;
  int k_;
  xnn_operator_t fx_ = nullptr, fh_ = nullptr;
  std::vector<float> gates_, gh_, xh_, x_, h_;
};

}  // namespace

const char* backend_name() { return "xnnpack"; }

Net* make_net(Model m, int k) {
  if (is_pixel(m)) return new XnnPixel(m, k);
  return new XnnCell(m, k);
}

}  // namespace wfc
