// The built-in "conv2d" layer kind (models/conv2d_layer.h): its torch-free forward against a
// plain loop convolution, its geometry checks and its initialisation. LibTorch's forward is held
// to the torch-free one in tests/learner/torch_conv2d_test.cc; models with conv layers (layout,
// .rlxp file, rlx::Policy, python/rlx_policy.py) are tests/learner/conv2d_model_test.cc.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "core/rng.h"
#include "models/conv2d_layer.h"
#include "models/layer_kinds.h"
#include "models/network_layout.h"

namespace rlx {
namespace {

// A conv2d layer reading the geometry's images (out and parameters unset: what a kind is asked).
LayerSpec conv_layer(const Conv2dGeometry& g, const std::string& name = "c") {
  LayerSpec layer;
  layer.kind = kConv2dLayer;
  layer.name = name;
  layer.in = g.row_in();
  layer.attributes = g.attributes();
  return layer;
}

std::vector<float> random_values(size_t count, double scale, uint64_t seed) {
  Rng rng(seed);
  std::vector<float> values(count);
  for (float& v : values) v = static_cast<float>(scale * rng.normal());
  return values;
}

// The convolution by its definition, in double: y[r, oh, ow, o] = bias[o] + the sum over the
// kernel window and channels of x[r, ih, iw, c] w[o, kh, kw, c], with zeros outside the image;
// and each output's scale, the sum of its terms' magnitudes (what a float sum's error is
// relative to).
struct NaiveConv2d {
  std::vector<double> y, scale;
};

NaiveConv2d naive_conv2d(const Conv2dGeometry& g, const std::vector<float>& w, const std::vector<float>& b,
                         const std::vector<float>& x, int64_t rows) {
  NaiveConv2d out;
  out.y.resize(static_cast<size_t>(rows * g.out_size()));
  out.scale.resize(out.y.size());
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t oh = 0; oh < g.out_height(); ++oh) {
      for (int64_t ow = 0; ow < g.out_width(); ++ow) {
        for (int64_t o = 0; o < g.out_channels; ++o) {
          double sum = b[o], scale = std::fabs(b[o]);
          for (int64_t kh = 0; kh < g.kernel; ++kh) {
            for (int64_t kw = 0; kw < g.kernel; ++kw) {
              const int64_t ih = oh * g.stride - g.padding + kh, iw = ow * g.stride - g.padding + kw;
              if (ih < 0 || ih >= g.height || iw < 0 || iw >= g.width) continue;
              for (int64_t c = 0; c < g.in_channels; ++c) {
                const double term = double(x[((r * g.height + ih) * g.width + iw) * g.in_channels + c]) *
                                    w[((o * g.kernel + kh) * g.kernel + kw) * g.in_channels + c];
                sum += term;
                scale += std::fabs(term);
              }
            }
          }
          const size_t at = size_t(((r * g.out_height() + oh) * g.out_width() + ow) * g.out_channels + o);
          out.y[at] = sum;
          out.scale[at] = scale;
        }
      }
    }
  }
  return out;
}

struct NamedGeometry {
  const char* name;
  Conv2dGeometry geometry;
};

// The shapes pixel models use, and the corners of the index arithmetic (the weight's rows go
// through full 16-column product blocks, the narrow path, or both).
const std::vector<NamedGeometry>& geometries() {
  static const std::vector<NamedGeometry> all = {
      {"MinAtar 10x10x4 -> 16, kernel 3", {10, 10, 4, 16, 3, 1, 0}},
      {"Nature CNN 1: 84x84x4 -> 32, kernel 8, stride 4", {84, 84, 4, 32, 8, 4, 0}},
      {"Nature CNN 2: 20x20x32 -> 64, kernel 4, stride 2", {20, 20, 32, 64, 4, 2, 0}},
      {"Nature CNN 3: 9x9x64 -> 64, kernel 3", {9, 9, 64, 64, 3, 1, 0}},
      {"padded, not square: 7x5x3 -> 20, kernel 3, padding 1", {7, 5, 3, 20, 3, 1, 1}},
      {"a stride that does not divide: 11x9x2 -> 6, kernel 4, stride 3, padding 2", {11, 9, 2, 6, 4, 3, 2}},
      {"padding wider than the kernel: 3x3x1 -> 2, kernel 2, padding 2", {3, 3, 1, 2, 2, 1, 2}},
  };
  return all;
}

TEST_CASE("the torch-free conv2d forward is the convolution by its definition", "[models][conv2d]") {
  const LayerKind& kind = find_layer_kind(kConv2dLayer);  // built in: no registration here
  for (const NamedGeometry& named : geometries()) {
    SECTION(named.name) {
      const Conv2dGeometry& g = named.geometry;
      const int64_t rows = 3;
      const std::vector<float> w = random_values(size_t(g.out_channels * g.patch_size()), 1.0 / std::sqrt(g.patch_size()), 1);
      const std::vector<float> b = random_values(size_t(g.out_channels), 0.5, 2);
      const std::vector<float> x = random_values(size_t(rows * g.in_size()), 1.0, 3);
      LayerSpec layer = conv_layer(g);
      REQUIRE(kind.output_size(layer) == g.out_size());
      const float* params[] = {w.data(), b.data()};
      std::vector<float> y(size_t(rows * g.out_size()), NAN);
      kind.forward(layer, params, x.data(), rows, y.data());
      const NaiveConv2d want = naive_conv2d(g, w, b, x, rows);
      for (size_t i = 0; i < y.size(); ++i) {  // within 1e-5 of the output's scale
        INFO("output " << i << " of " << y.size() << ": " << y[i] << ", expected " << want.y[i]);
        REQUIRE(std::fabs(y[i] - want.y[i]) <= 1e-5 * want.scale[i]);
      }
      // One row at a time gives the same bits: a row's output does not depend on its batch.
      std::vector<float> one(size_t(g.out_size()));
      for (int64_t r = 0; r < rows; ++r) {
        conv2d_forward(g, w.data(), b.data(), x.data() + r * g.in_size(), 1, one.data());
        REQUIRE(std::memcmp(one.data(), y.data() + r * g.out_size(), one.size() * sizeof(float)) == 0);
      }
    }
  }
}

TEST_CASE("a conv2d layer among other features convolves its image and carries the rest, unactivated, after it",
          "[models][conv2d]") {
  const LayerKind& kind = find_layer_kind(kConv2dLayer);
  Conv2dGeometry g{5, 4, 2, 3, 3, 1, 1};  // 5x4x2 -> 5x4x3 = 60 features
  g.image_offset = 3;
  g.passthrough = 7;  // 3 features before the image, 4 after
  const int64_t rows = 2;
  const std::vector<float> w = random_values(size_t(g.out_channels * g.patch_size()), 0.3, 4);
  const std::vector<float> b = random_values(size_t(g.out_channels), 0.5, 5);
  const std::vector<float> x = random_values(size_t(rows * g.row_in()), 1.0, 6);
  const LayerSpec layer = conv_layer(g);
  REQUIRE(kind.output_size(layer) == 60 + 7);
  CHECK(kind.activated_outputs(layer) == 60);
  CHECK(g.attributes().at("image_offset") == 3);
  CHECK(Conv2dGeometry{5, 4, 2, 3, 3, 1, 1}.attributes().count("passthrough") == 0);  // a plain image's stay as they were
  std::vector<float> y(size_t(rows * g.row_out()), NAN);
  const float* params[] = {w.data(), b.data()};
  kind.forward(layer, params, x.data(), rows, y.data());
  Conv2dGeometry image_only = g;
  image_only.image_offset = image_only.passthrough = 0;
  for (int64_t r = 0; r < rows; ++r) {
    const float* row = x.data() + r * g.row_in();
    std::vector<float> image(row + 3, row + 3 + g.in_size()), want(size_t(g.out_size()));
    conv2d_forward(image_only, w.data(), b.data(), image.data(), 1, want.data());
    const float* got = y.data() + r * g.row_out();
    CHECK(std::equal(want.begin(), want.end(), got));  // the same bits as the image alone
    CHECK(std::equal(row, row + 3, got + 60));          // then the features before it
    CHECK(std::equal(row + 3 + g.in_size(), row + g.row_in(), got + 63));  // and those after it
  }
  // Where a chain's activation stops (ChainKernel and RegisteredLayer run it: torch_conv2d_test.cc).
  LayerSpec relu = layer;
  relu.out = kind.output_size(relu);
  relu.activation = Activation::kRelu;
  CHECK(activated_outputs(relu) == 60);
  LayerSpec dense;
  dense.in = 4;
  dense.out = 5;
  CHECK(activated_outputs(dense) == 5);
}

TEST_CASE("a conv2d layer's shape follows from its attributes", "[models][conv2d]") {
  const LayerKind& kind = find_layer_kind(kConv2dLayer);
  const LayerSpec layer = conv_layer({84, 84, 4, 32, 8, 4, 0});
  CHECK(kind.output_size(layer) == 20 * 20 * 32);
  const auto parameters = kind.parameters(layer);
  REQUIRE(parameters.size() == 2);
  CHECK(parameters[0].first == "weight");
  CHECK(parameters[0].second == std::vector<int64_t>{32, 8, 8, 4});
  CHECK(parameters[1].first == "bias");
  CHECK(parameters[1].second == std::vector<int64_t>{32});
  const Conv2dGeometry padded = conv2d_geometry(conv_layer({7, 5, 3, 20, 3, 2, 1}));
  CHECK(padded.out_height() == 4);  // (7 + 2 - 3) / 2 + 1
  CHECK(padded.out_width() == 3);   // (5 + 2 - 3) / 2 + 1
}

TEST_CASE("invalid conv2d geometry is refused, naming the layer and the attribute", "[models][conv2d]") {
  const Conv2dGeometry good{10, 10, 4, 16, 3, 1, 0};
  const auto refusal = [&](const std::function<void(LayerSpec&)>& edit) {
    LayerSpec layer = conv_layer(good, "pi_0");
    edit(layer);
    try {
      conv2d_geometry(layer);
    } catch (const std::invalid_argument& error) {
      return std::string(error.what());
    }
    return std::string();
  };
  CHECK(refusal([](LayerSpec&) {}).empty());
  CHECK(refusal([](LayerSpec& l) { l.attributes["stride"] = 0; }) ==
        "conv2d layer 'pi_0': attribute 'stride' is 0, outside [1, 65536]");
  CHECK(refusal([](LayerSpec& l) { l.attributes["padding"] = -1; }) ==
        "conv2d layer 'pi_0': attribute 'padding' is -1, outside [0, 65536]");
  CHECK(refusal([](LayerSpec& l) { l.attributes["out_channels"] = 1 << 20; }) ==
        "conv2d layer 'pi_0': attribute 'out_channels' is 1048576, outside [1, 65536]");
  CHECK(refusal([](LayerSpec& l) { l.attributes.erase("kernel"); }) == "conv2d layer 'pi_0': attribute 'kernel' is missing");
  CHECK_THAT(refusal([](LayerSpec& l) { l.attributes["strides"] = 2; }),
             Catch::StartsWith("conv2d layer 'pi_0': unknown attribute 'strides' (did you mean 'stride'?); known: height,"));
  CHECK(refusal([](LayerSpec& l) { l.attributes["kernel"] = 11; }) ==
        "conv2d layer 'pi_0': attribute 'kernel' is 11, larger than the padded height 10 (height 10 + 2 * padding 0)");
  CHECK(refusal([](LayerSpec& l) {
          l.attributes["width"] = 2;
          l.attributes["padding"] = 0;
          l.in = 10 * 2 * 4;
        }) == "conv2d layer 'pi_0': attribute 'kernel' is 3, larger than the padded width 2 (width 2 + 2 * padding 0)");
  CHECK(refusal([](LayerSpec& l) { l.in = 399; }) ==
        "conv2d layer 'pi_0': it reads 399 features, but attributes height * width * in_channels + passthrough give 10 * "
        "10 * 4 + 0 = 400");
  CHECK(refusal([](LayerSpec& l) {
          l.attributes["image_offset"] = 3;
          l.attributes["passthrough"] = 2;
          l.in = 402;
        }) == "conv2d layer 'pi_0': attribute 'image_offset' is 3, more than the 2 passthrough features it lies among");
  CHECK_THAT(refusal([](LayerSpec& l) {
               for (const char* side : {"height", "width", "in_channels"}) l.attributes[side] = 65536;
             }),
             Catch::StartsWith("conv2d layer 'pi_0': an input image (height * width * in_channels) would hold"));
  // The kind's own functions refuse it the same way.
  LayerSpec bad = conv_layer(good, "pi_0");
  bad.attributes["stride"] = 0;
  CHECK_THROWS_WITH(find_layer_kind(kConv2dLayer).output_size(bad), Catch::Contains("attribute 'stride' is 0"));
}

// W W^T for a weight [rows, columns].
std::vector<double> gram(const float* w, int64_t rows, int64_t columns) {
  std::vector<double> g(size_t(rows * rows));
  for (int64_t i = 0; i < rows; ++i) {
    for (int64_t j = 0; j < rows; ++j) {
      double dot = 0;
      for (int64_t k = 0; k < columns; ++k) dot += double(w[i * columns + k]) * w[j * columns + k];
      g[size_t(i * rows + j)] = dot;
    }
  }
  return g;
}

TEST_CASE("conv2d weights start orthogonal with the layer's gain, or with PyTorch's Conv2d default", "[models][conv2d]") {
  const LayerKind& kind = find_layer_kind(kConv2dLayer);
  const Conv2dGeometry g{6, 6, 16, 20, 3, 2, 0};  // weight rows of 3 * 3 * 16 = 144
  LayerSpec layer = conv_layer(g);
  layer.init_gain = kHiddenGain;
  std::vector<float> weight(size_t(20 * 144), NAN), bias(20, NAN);
  float* params[] = {weight.data(), bias.data()};
  Rng rng(5);
  kind.initialize(layer, params, rng);
  const std::vector<double> w_wt = gram(weight.data(), 20, 144);
  for (int64_t i = 0; i < 20; ++i) {
    for (int64_t j = 0; j < 20; ++j) CHECK(w_wt[size_t(i * 20 + j)] == Approx(i == j ? 2.0 : 0.0).margin(1e-5));
  }
  CHECK(bias == std::vector<float>(20, 0.0f));

  // More output channels than a row is long: orthonormal columns instead (as for dense layers).
  const Conv2dGeometry wide{4, 4, 1, 12, 3, 1, 0};  // weight [12, 9]
  LayerSpec wide_layer = conv_layer(wide);
  std::vector<float> wide_weight(12 * 9), wide_bias(12);
  float* wide_params[] = {wide_weight.data(), wide_bias.data()};
  kind.initialize(wide_layer, wide_params, rng);
  for (int64_t i = 0; i < 9; ++i) {
    for (int64_t j = 0; j < 9; ++j) {
      double dot = 0;
      for (int64_t o = 0; o < 12; ++o) dot += double(wide_weight[size_t(o * 9 + i)]) * wide_weight[size_t(o * 9 + j)];
      CHECK(dot == Approx(i == j ? 1.0 : 0.0).margin(1e-5));
    }
  }

  layer.orthogonal_init = false;
  kind.initialize(layer, params, rng);
  const double bound = 1.0 / std::sqrt(144.0);  // fan_in = in_channels * kernel * kernel
  double largest = 0;
  for (float v : weight) largest = std::max(largest, double(std::fabs(v)));
  for (float v : bias) largest = std::max(largest, double(std::fabs(v)));
  CHECK(largest <= bound);
  CHECK(largest > 0.9 * bound);  // uniform over the whole range
  CHECK(std::count(bias.begin(), bias.end(), 0.0f) == 0);  // biases drawn too
}

}  // namespace
}  // namespace rlx
