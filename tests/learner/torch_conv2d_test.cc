// The LibTorch forward of the built-in "conv2d" layer kind (learner/torch_conv2d.h) against the
// workers' torch-free one (models/conv2d_layer.h): alone on the pixel models' shapes and among other
// features (a Dict's other keys carried through), and in a
// conv2d -> relu -> dense chain through ChainKernel and through RegisteredLayer + Linear; on
// CUDA where there is a GPU; and its parameters get autograd's gradients.
#include "tests/learner/torch_catch.h"

#include <torch/cuda.h>

#include <cmath>
#include <string>
#include <vector>

#include "core/rng.h"
#include "learner/torch_conv2d.h"
#include "learner/torch_layers.h"
#include "models/conv2d_layer.h"
#include "models/layer_kinds.h"
#include "models/network_kernel.h"

namespace rlx {
namespace {

// A chain {conv2d (relu), dense "d" of `outputs` units} with its flat parameter offsets.
LayerChain conv_relu_dense(const Conv2dGeometry& g, int64_t outputs) {
  LayerSpec conv;
  conv.kind = kConv2dLayer;
  conv.name = "c";
  conv.in = g.row_in();
  conv.attributes = g.attributes();
  conv.out = find_layer_kind(kConv2dLayer).output_size(conv);
  conv.activation = Activation::kRelu;
  size_t offset = 0;
  const auto add = [&](LayerSpec& layer, const std::string& suffix, std::vector<int64_t> shape) {
    size_t size = 1;
    for (int64_t d : shape) size *= static_cast<size_t>(d);
    layer.parameters.push_back({layer.name + "." + suffix, std::move(shape), offset, size});
    offset += size;
  };
  for (auto& [suffix, shape] : find_layer_kind(kConv2dLayer).parameters(conv)) add(conv, suffix, shape);
  LayerSpec dense;
  dense.name = "d";
  dense.in = conv.out;
  dense.out = outputs;
  add(dense, "weight", {outputs, conv.out});
  add(dense, "bias", {outputs});
  return {conv, dense};
}

size_t flat_size(const LayerChain& chain) {
  const ParameterSpec& last = chain.back().parameters.back();
  return last.offset + last.size;
}

std::vector<float> random_values(size_t count, double scale, uint64_t seed) {
  Rng rng(seed);
  std::vector<float> values(count);
  for (float& v : values) v = static_cast<float>(scale * rng.normal());
  return values;
}

// A parameter of the flat vector as a tensor of its shape.
torch::Tensor tensor_of(const std::vector<float>& flat, const ParameterSpec& p) {
  return torch::from_blob(const_cast<float*>(flat.data() + p.offset), p.shape, torch::kFloat).clone();
}

// Parameters of order-one outputs: each tensor ~ N(0, 1 / fan_in).
std::vector<float> random_parameters(const LayerChain& chain, uint64_t seed) {
  std::vector<float> flat(flat_size(chain));
  Rng rng(seed);
  for (const LayerSpec& layer : chain) {
    for (const ParameterSpec& p : layer.parameters) {
      int64_t fan_in = 1;
      for (size_t d = 1; d < p.shape.size(); ++d) fan_in *= p.shape[d];
      for (size_t i = 0; i < p.size; ++i) flat[p.offset + i] = static_cast<float>(rng.normal() / std::sqrt(fan_in));
    }
  }
  return flat;
}

// got within 1e-5 of want, relative to want's largest magnitude.
void check_close(const torch::Tensor& got, const torch::Tensor& want) {
  REQUIRE(got.sizes() == want.sizes());
  const double scale = want.abs().max().item<double>();
  REQUIRE(scale > 0.1);  // outputs of order one: the comparison means something
  const double error = (got.cpu() - want.cpu()).abs().max().item<double>();
  INFO("largest difference " << error << ", largest output " << scale);
  CHECK(error <= 1e-5 * scale);
}

const std::vector<std::pair<const char*, Conv2dGeometry>>& geometries() {
  static const std::vector<std::pair<const char*, Conv2dGeometry>> all = {
      {"MinAtar 10x10x4 -> 16, kernel 3", {10, 10, 4, 16, 3, 1, 0}},
      {"Nature CNN 1: 84x84x4 -> 32, kernel 8, stride 4", {84, 84, 4, 32, 8, 4, 0}},
      {"Nature CNN 2: 20x20x32 -> 64, kernel 4, stride 2", {20, 20, 32, 64, 4, 2, 0}},
      {"Nature CNN 3: 9x9x64 -> 64, kernel 3", {9, 9, 64, 64, 3, 1, 0}},
      {"padded, not square: 7x5x3 -> 20, kernel 3, padding 1", {7, 5, 3, 20, 3, 1, 1}},
      {"a stride that does not divide: 11x9x2 -> 6, kernel 4, stride 3, padding 2", {11, 9, 2, 6, 4, 3, 2}},
      {"among other features: 6x6x2 -> 5, kernel 3, 4 features before, 3 after", {6, 6, 2, 5, 3, 1, 0, 4, 7}},
  };
  return all;
}

TEST_CASE("LibTorch's conv2d forward computes what the workers' torch-free one does", "[learner][conv2d]") {
  const TorchLayerForward& forward = find_torch_layer(kConv2dLayer);  // built in: no registration here
  for (const auto& [name, g] : geometries()) {
    SECTION(name) {
      const LayerChain chain = conv_relu_dense(g, 1);
      const LayerSpec& conv = chain[0];
      const int64_t rows = 5;
      const std::vector<float> flat = random_parameters(chain, 1);
      const std::vector<float> x = random_values(static_cast<size_t>(rows * g.row_in()), 1.0, 2);
      std::vector<float> y(static_cast<size_t>(rows * g.row_out()));
      conv2d_forward(g, flat.data() + conv.parameters[0].offset, flat.data() + conv.parameters[1].offset, x.data(),
                     rows, y.data());
      const torch::Tensor want = torch::from_blob(y.data(), {rows, g.row_out()}, torch::kFloat);
      const torch::Tensor input = torch::from_blob(const_cast<float*>(x.data()), {rows, g.row_in()}, torch::kFloat);
      check_close(forward(conv, {tensor_of(flat, conv.parameters[0]), tensor_of(flat, conv.parameters[1])}, input), want);
      check_close(torch_conv2d(conv, {tensor_of(flat, conv.parameters[0]), tensor_of(flat, conv.parameters[1])}, input),
                  want);
    }
  }
}

// LibTorch's modules for the chain, holding the flat vector's parameters.
struct TorchChain {
  RegisteredLayer conv{nullptr};
  torch::nn::Linear dense{nullptr};

  TorchChain(const LayerChain& chain, const std::vector<float>& flat)
      : conv(chain[0]), dense(chain[1].in, chain[1].out) {
    torch::NoGradGuard no_grad;
    const std::vector<torch::Tensor> params = conv->parameters();
    for (size_t i = 0; i < params.size(); ++i) params[i].copy_(tensor_of(flat, chain[0].parameters[i]));
    dense->weight.copy_(tensor_of(flat, chain[1].parameters[0]));
    dense->bias.copy_(tensor_of(flat, chain[1].parameters[1]));
  }
  torch::Tensor forward(const torch::Tensor& x) { return dense->forward(conv->forward(x)); }
};

TEST_CASE("a conv2d -> relu -> dense chain gives the same outputs through ChainKernel and LibTorch",
          "[learner][conv2d]") {
  for (const auto& [name, g] : geometries()) {
    SECTION(name) {
      const LayerChain chain = conv_relu_dense(g, 7);
      const std::vector<float> flat = random_parameters(chain, 3);
      TorchChain modules(chain, flat);
      const int64_t rows = 6;
      const torch::Tensor x = torch::randn({rows, g.row_in()});
      ChainKernel kernel(chain);
      kernel.load(flat.data());
      const float* y = kernel.run(x.contiguous().data_ptr<float>(), rows);
      torch::Tensor got = torch::from_blob(const_cast<float*>(y), {rows, 7}, torch::kFloat).clone();
      check_close(got, modules.forward(x).detach());
    }
  }
}

TEST_CASE("a conv2d layer's ReLU leaves the features it carries through as they were, in ChainKernel and LibTorch",
          "[learner][conv2d]") {
  const Conv2dGeometry g{4, 4, 1, 3, 3, 1, 0, 2, 5};  // 2 features before the 4x4 image, 3 after
  const LayerChain chain = conv_relu_dense(g, 1);
  const LayerChain conv_only = {chain[0]};
  const std::vector<float> flat = random_parameters(chain, 6);
  const torch::Tensor x = torch::randn({3, g.row_in()}) - 0.5;  // many negatives among them
  ChainKernel kernel(conv_only);
  kernel.load(flat.data());
  const torch::Tensor kernel_y =
      torch::from_blob(const_cast<float*>(kernel.run(x.data_ptr<float>(), 3)), {3, g.row_out()}, torch::kFloat).clone();
  const torch::Tensor torch_y = TorchChain(chain, flat).conv->forward(x).detach();
  const int64_t features = g.out_size();
  const torch::Tensor passed = torch::cat({x.narrow(1, 0, 2), x.narrow(1, 2 + g.in_size(), 3)}, 1);
  REQUIRE(passed.lt(0).any().item<bool>());
  for (const torch::Tensor& y : {kernel_y, torch_y}) {
    CHECK(torch::equal(y.narrow(1, features, 5), passed));
    CHECK(y.narrow(1, 0, features).min().item<float>() >= 0.0f);  // the convolution's output: activated
  }
  check_close(kernel_y, torch_y);
}

TEST_CASE("conv2d parameters get autograd's gradients", "[learner][conv2d]") {
  const Conv2dGeometry g{7, 5, 3, 20, 3, 2, 1};
  const LayerChain chain = conv_relu_dense(g, 4);
  TorchChain modules(chain, random_parameters(chain, 4));
  modules.forward(torch::randn({8, g.row_in()})).pow(2).sum().backward();
  for (const auto& named : modules.conv->named_parameters()) {
    INFO(named.key());
    REQUIRE(named.value().grad().defined());
    CHECK(named.value().grad().abs().sum().item<double>() > 0.0);
  }
  CHECK(modules.conv->named_parameters().keys() == std::vector<std::string>{"weight", "bias"});
}

TEST_CASE("conv2d on CUDA: LibTorch's forward matches the CPU's", "[gpu]") {
  if (!torch::cuda::is_available()) {
    WARN("[gpu] test skipped: no GPU visible, or LibTorch is a CPU-only build");
    return;
  }
  // cuDNN may round convolutions' inputs to TF32 (10-bit mantissas); the comparison is of floats.
  struct NoTf32 {
    const bool before = at::globalContext().allowTF32CuDNN();
    NoTf32() { at::globalContext().setAllowTF32CuDNN(false); }
    ~NoTf32() { at::globalContext().setAllowTF32CuDNN(before); }
  } no_tf32;
  for (const auto& [name, g] : geometries()) {
    SECTION(name) {
      const LayerChain chain = conv_relu_dense(g, 7);
      const std::vector<float> flat = random_parameters(chain, 5);
      TorchChain modules(chain, flat);
      const torch::Tensor x = torch::randn({4, g.row_in()});
      const torch::Tensor want = modules.forward(x).detach();
      modules.conv->to(torch::kCUDA);
      modules.dense->to(torch::kCUDA);
      torch::Tensor got = modules.forward(x.to(torch::kCUDA));
      got.pow(2).sum().backward();  // and autograd's backward runs there
      check_close(got.detach().cpu(), want);
    }
  }
}

}  // namespace
}  // namespace rlx
