// oneDNN back end (C++ API, dnnl.hpp 2.x): convolution_forward and inner_product_forward with a
// fused ReLU, layouts chosen by the library (format_tag::any, weights reordered once at set-up,
// activations reordered inside the timed forward when the library wants another layout);
// lstm_forward and lbr_gru_forward (forward_inference, one time step, one layer).
#include <oneapi/dnnl/dnnl.hpp>

#include <cstring>
#include <memory>
#include <string>
#include <unordered_map>

#include "bench/worker_forward_choice/common.h"

namespace wfc {
namespace {

using dnnl::memory;
using tag = memory::format_tag;
using dt = memory::data_type;

struct Step {
  dnnl::primitive prim;
  std::unordered_map<int, memory> args;
};

class DnnlBase : public Net {
 protected:
  DnnlBase() : eng_(dnnl::engine::kind::cpu, 0), stream_(eng_) {}
  // The memory the primitive wants for `want`, reordering `have` into it (a timed step) if the
  // layouts differ.
  memory to_layout(const memory& have, const memory::desc& want) {
    if (have.get_desc() == want) return have;
    memory m(want, eng_);
    steps_.push_back({dnnl::reorder(have, m), {{DNNL_ARG_FROM, have}, {DNNL_ARG_TO, m}}});
    return m;
  }
  // Weights: reorder once now (not timed).
  memory weights_to(const memory& have, const memory::desc& want) {
    if (have.get_desc() == want) return have;
    memory m(want, eng_);
    memory src = have;
    dnnl::reorder(src, m).execute(stream_, src, m);
    stream_.wait();
    return m;
  }
  void run() {
    for (Step& s : steps_) s.prim.execute(stream_, s.args);
    stream_.wait();
  }
  dnnl::engine eng_;
  dnnl::stream stream_;
  std::vector<Step> steps_;
};

dnnl::primitive_attr relu_attr() {
  dnnl::post_ops po;
  po.append_eltwise(1.0f, dnnl::algorithm::eltwise_relu, 0.0f, 0.0f);
  dnnl::primitive_attr attr;
  attr.set_post_ops(po);
  return attr;
}

class DnnlPixel : public DnnlBase {
 public:
  DnnlPixel(Model m, int k) : k_(k) {
    PixelWeights p = pixel_weights(m);
    enc_ = p.enc;
    image_.resize(static_cast<size_t>(k) * enc_.image_size());
    const Conv& c0 = enc_.convs[0];
    input_ = memory({{k, c0.c, c0.h, c0.w}, dt::f32, tag::nhwc}, eng_, image_.data());
    memory x = input_;
    for (size_t l = 0; l < enc_.convs.size(); ++l) {
      const Conv& c = enc_.convs[l];
      memory::desc src({k, c.c, c.h, c.w}, dt::f32, tag::any);
      memory::desc wts({c.o, c.c, c.kh, c.kw}, dt::f32, tag::any);
      memory::desc bias({c.o}, dt::f32, tag::x);
      memory::desc dst({k, c.o, c.oh(), c.ow()}, dt::f32, tag::any);
      dnnl::convolution_forward::desc d(dnnl::prop_kind::forward_inference, dnnl::algorithm::convolution_direct,
                                        src, wts, bias, dst, {c.stride, c.stride}, {0, 0}, {0, 0});
      dnnl::convolution_forward::primitive_desc pd(d, relu_attr(), eng_);
      memory src_m = to_layout(x, pd.src_desc());
      memory w_m = weights_to(memory({{c.o, c.c, c.kh, c.kw}, dt::f32, tag::ohwi}, eng_, p.conv_w[l].data()),
                              pd.weights_desc());
      if (w_m.get_data_handle() == p.conv_w[l].data()) keep_.push_back(std::move(p.conv_w[l]));
      memory b_m(bias, eng_);
      std::memcpy(b_m.get_data_handle(), p.conv_b[l].data(), sizeof(float) * c.o);
      memory dst_m(pd.dst_desc(), eng_);
      steps_.push_back({dnnl::convolution_forward(pd),
                        {{DNNL_ARG_SRC, src_m}, {DNNL_ARG_WEIGHTS, w_m}, {DNNL_ARG_BIAS, b_m}, {DNNL_ARG_DST, dst_m}}});
      x = dst_m;
      name_ = pd.impl_info_str();
    }
    const Conv& l = enc_.convs.back();
    memory::desc src({k, l.o, l.oh(), l.ow()}, dt::f32, tag::any);
    memory::desc wts({enc_.dense_out, l.o, l.oh(), l.ow()}, dt::f32, tag::any);
    memory::desc bias({enc_.dense_out}, dt::f32, tag::x);
    memory::desc dst({k, enc_.dense_out}, dt::f32, tag::nc);
    dnnl::inner_product_forward::desc d(dnnl::prop_kind::forward_inference, src, wts, bias, dst);
    dnnl::inner_product_forward::primitive_desc pd(d, relu_attr(), eng_);
    memory src_m = to_layout(x, pd.src_desc());
    memory w_m = weights_to(memory({{enc_.dense_out, l.o, l.oh(), l.ow()}, dt::f32, tag::ohwi}, eng_, p.dense_w.data()),
                            pd.weights_desc());
    if (w_m.get_data_handle() == p.dense_w.data()) keep_.push_back(std::move(p.dense_w));
    memory b_m(bias, eng_);
    std::memcpy(b_m.get_data_handle(), p.dense_b.data(), sizeof(float) * enc_.dense_out);
    out_ = memory(pd.dst_desc(), eng_);
    steps_.push_back({dnnl::inner_product_forward(pd),
                      {{DNNL_ARG_SRC, src_m}, {DNNL_ARG_WEIGHTS, w_m}, {DNNL_ARG_BIAS, b_m}, {DNNL_ARG_DST, out_}}});
    if (std::getenv("WFC_VERBOSE")) std::fprintf(stderr, "onednn %s: %zu steps, last conv %s, ip %s\n",
                                                 model_name(m), steps_.size(), name_.c_str(), pd.impl_info_str());
  }

  void forward(const Inputs& in, float* out) override {
    images_to_float(in.images.data(), image_.size(), image_.data());
    run();
    std::memcpy(out, out_.get_data_handle(), sizeof(float) * k_ * enc_.dense_out);
  }

 private:
  int k_;
  Encoder enc_;
  std::string name_;
  std::vector<float> image_;
  std::vector<std::vector<float>> keep_;
  memory input_, out_;
};

class DnnlCell : public DnnlBase {
 public:
  DnnlCell(Model m, int k) : m_(m), k_(k) {
    CellWeights w = cell_weights(m);
    const int H = kCellHidden, G = w.gates;
    x_ = memory({{1, k, kCellIn}, dt::f32, tag::tnc}, eng_);
    h_ = memory({{1, 1, k, H}, dt::f32, tag::ldnc}, eng_);
    memory::desc wx({1, 1, kCellIn, G, H}, dt::f32, tag::any);
    memory::desc wh({1, 1, H, G, H}, dt::f32, tag::any);
    memory::desc bias({1, 1, m == Model::kLstm ? 4 : 4, H}, dt::f32, tag::ldgo);
    memory::desc y({1, k, H}, dt::f32, tag::tnc);
    memory::desc hy({1, 1, k, H}, dt::f32, tag::ldnc);
    const auto dir = dnnl::rnn_direction::unidirectional_left2right;
    memory b_m(bias, eng_);
    std::memcpy(b_m.get_data_handle(), w.bias.data(), sizeof(float) * 4 * H);
    y_ = memory(y, eng_);
    memory wx_user({{1, 1, kCellIn, G, H}, dt::f32, tag::ldigo}, eng_, w.w_x.data());
    memory wh_user({{1, 1, H, G, H}, dt::f32, tag::ldigo}, eng_, w.w_h.data());
    if (m == Model::kLstm) {
      c_ = memory({{1, 1, k, H}, dt::f32, tag::ldnc}, eng_);
      cy_ = memory(hy, eng_);
      dnnl::lstm_forward::desc d(dnnl::prop_kind::forward_inference, dir, x_.get_desc(), h_.get_desc(),
                                 c_.get_desc(), wx, wh, bias, y, hy, hy);
      dnnl::lstm_forward::primitive_desc pd(d, eng_);
      wx_ = weights_to(wx_user, pd.weights_layer_desc());
      wh_ = weights_to(wh_user, pd.weights_iter_desc());
      hy_ = memory(hy, eng_);
      steps_.push_back({dnnl::lstm_forward(pd),
                        {{DNNL_ARG_SRC_LAYER, x_}, {DNNL_ARG_SRC_ITER, h_}, {DNNL_ARG_SRC_ITER_C, c_},
                         {DNNL_ARG_WEIGHTS_LAYER, wx_}, {DNNL_ARG_WEIGHTS_ITER, wh_}, {DNNL_ARG_BIAS, b_m},
                         {DNNL_ARG_DST_LAYER, y_}, {DNNL_ARG_DST_ITER, hy_}, {DNNL_ARG_DST_ITER_C, cy_}}});
      info_ = pd.impl_info_str();
    } else {
      dnnl::lbr_gru_forward::desc d(dnnl::prop_kind::forward_inference, dir, x_.get_desc(), h_.get_desc(), wx, wh,
                                    bias, y, hy);
      dnnl::lbr_gru_forward::primitive_desc pd(d, eng_);
      wx_ = weights_to(wx_user, pd.weights_layer_desc());
      wh_ = weights_to(wh_user, pd.weights_iter_desc());
      hy_ = memory(hy, eng_);
      steps_.push_back({dnnl::lbr_gru_forward(pd),
                        {{DNNL_ARG_SRC_LAYER, x_}, {DNNL_ARG_SRC_ITER, h_}, {DNNL_ARG_WEIGHTS_LAYER, wx_},
                         {DNNL_ARG_WEIGHTS_ITER, wh_}, {DNNL_ARG_BIAS, b_m}, {DNNL_ARG_DST_LAYER, y_},
                         {DNNL_ARG_DST_ITER, hy_}}});
      info_ = pd.impl_info_str();
    }
    if (wx_.get_data_handle() == w.w_x.data()) keep_.push_back(std::move(w.w_x));
    if (wh_.get_data_handle() == w.w_h.data()) keep_.push_back(std::move(w.w_h));
    if (std::getenv("WFC_VERBOSE")) std::fprintf(stderr, "onednn %s: %s\n", model_name(m), info_.c_str());
  }

  // The worker hands x, h (and c) in its own buffers: copying them in is part of the step.
  void forward(const Inputs& in, float* out) override {
    const int H = kCellHidden;
    std::memcpy(x_.get_data_handle(), in.x.data(), sizeof(float) * k_ * kCellIn);
    std::memcpy(h_.get_data_handle(), in.h.data(), sizeof(float) * k_ * H);
    if (m_ == Model::kLstm) std::memcpy(c_.get_data_handle(), in.c.data(), sizeof(float) * k_ * H);
    run();
    const float* y = static_cast<const float*>(y_.get_data_handle());
    const float* cy = m_ == Model::kLstm ? static_cast<const float*>(cy_.get_data_handle()) : nullptr;
    const int width = output_width(m_);
    for (int r = 0; r < k_; ++r) {
      std::memcpy(out + static_cast<size_t>(r) * width, y + static_cast<size_t>(r) * H, sizeof(float) * H);
      if (cy) std::memcpy(out + static_cast<size_t>(r) * width + H, cy + static_cast<size_t>(r) * H, sizeof(float) * H);
    }
  }

 private:
  Model m_;
  int k_;
  std::string info_;
  std::vector<std::vector<float>> keep_;
  memory x_, h_, c_, y_, hy_, cy_, wx_, wh_;
};

}  // namespace

const char* backend_name() { return "onednn"; }

Net* make_net(Model m, int k) {
  if (is_pixel(m)) return new DnnlPixel(m, k);
  return new DnnlCell(m, k);
}

}  // namespace wfc
