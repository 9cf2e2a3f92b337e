// Standalone measurement (not part of the rlx build): the real torch-free "conv2d" layer
// (models/conv2d_layer.h) at the shapes hand.cc prototyped, one layer at a time and as the
// prototype's whole encoders through ChainKernel (convs with ReLU, then the dense layer with
// ReLU; float input, where the prototype also converts uint8 pixels). Median and min of 7
// repeats of ~0.15 s each, microseconds per forward of `rows` observations. Built and run from
// the repository root after building rlx_models:
//   g++ -O3 -std=c++17 -I. bench/worker_forward_choice/conv2d_layer_time.cc build/models/librlx_models.a -o /tmp/conv2d_layer_time && taskset -c 1 /tmp/conv2d_layer_time
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <functional>
#include <string>
#include <vector>

#include "core/rng.h"
#include "models/conv2d_layer.h"
#include "models/network_kernel.h"

namespace {

using rlx::Conv2dGeometry;

double seconds_now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

std::vector<float> random_values(size_t count, double scale, uint64_t seed) {
  rlx::Rng rng(seed);
  std::vector<float> values(count);
  for (float& v : values) v = static_cast<float>(rng.uniform(-scale, scale));
  return values;
}

// Median and min microseconds per call of step, after ~0.2 s of warm-up.
void time_it(const std::string& name, int64_t rows, const std::function<void()>& step) {
  int warm = 0;
  const double w = seconds_now();
  while (seconds_now() - w < 0.2 || warm < 3) {
    step();
    ++warm;
  }
  const int iters = std::max(3, static_cast<int>(0.15 / ((seconds_now() - w) / warm)));
  std::vector<double> us;
  for (int r = 0; r < 7; ++r) {
    const double s = seconds_now();
    for (int i = 0; i < iters; ++i) step();
    us.push_back((seconds_now() - s) / iters * 1e6);
  }
  std::sort(us.begin(), us.end());
  std::printf("%-44s rows=%-3lld us_median=%10.2f us_min=%10.2f\n", name.c_str(), static_cast<long long>(rows),
              us[us.size() / 2], us.front());
}

// A chain of conv layers (ReLU after each), then a dense layer of `dense_out` units with ReLU.
rlx::LayerChain encoder(const std::vector<Conv2dGeometry>& convs, int64_t dense_out) {
  rlx::LayerChain chain;
  size_t offset = 0;
  const auto add = [&](rlx::LayerSpec& layer, const std::string& suffix, std::vector<int64_t> shape) {
    size_t size = 1;
    for (int64_t d : shape) size *= static_cast<size_t>(d);
    layer.parameters.push_back({layer.name + "." + suffix, std::move(shape), offset, size});
    offset += size;
  };
  for (const Conv2dGeometry& g : convs) {
    rlx::LayerSpec conv;
    conv.kind = rlx::kConv2dLayer;
    conv.name = "conv_" + std::to_string(chain.size());
    conv.in = g.in_size();
    conv.out = g.out_size();
    conv.attributes = g.attributes();
    conv.activation = rlx::Activation::kRelu;
    add(conv, "weight", {g.out_channels, g.kernel, g.kernel, g.in_channels});
    add(conv, "bias", {g.out_channels});
    chain.push_back(conv);
  }
  rlx::LayerSpec dense;
  dense.name = "dense";
  dense.in = chain.back().out;
  dense.out = dense_out;
  dense.activation = rlx::Activation::kRelu;
  add(dense, "weight", {dense_out, dense.in});
  add(dense, "bias", {dense_out});
  chain.push_back(dense);
  return chain;
}

}  // namespace

int main() {
  const Conv2dGeometry minatar{10, 10, 4, 16, 3, 1, 0};
  const Conv2dGeometry nature[] = {{84, 84, 4, 32, 8, 4, 0}, {20, 20, 32, 64, 4, 2, 0}, {9, 9, 64, 64, 3, 1, 0}};
  const std::vector<std::pair<std::string, Conv2dGeometry>> layers = {
      {"layer MinAtar 10x10x4->16 k3", minatar},
      {"layer Nature 1 84x84x4->32 k8 s4", nature[0]},
      {"layer Nature 2 20x20x32->64 k4 s2", nature[1]},
      {"layer Nature 3 9x9x64->64 k3", nature[2]}};
  for (int64_t rows : {1, 8, 64}) {
    for (const auto& [name, g] : layers) {
      const std::vector<float> w = random_values(static_cast<size_t>(g.out_channels * g.patch_size()), 0.1, 1);
      const std::vector<float> b = random_values(static_cast<size_t>(g.out_channels), 0.1, 2);
      const std::vector<float> x = random_values(static_cast<size_t>(rows * g.in_size()), 1.0, 3);
      std::vector<float> y(static_cast<size_t>(rows * g.out_size()));
      time_it(name, rows, [&] { rlx::conv2d_forward(g, w.data(), b.data(), x.data(), rows, y.data()); });
    }
  }
  // The prototype's encoders (bench/worker_forward_choice/common.h): MinAtar with 10 channels.
  const std::vector<std::pair<std::string, rlx::LayerChain>> encoders = {
      {"encoder MinAtar 10x10x10 (16 k3, dense 128)", encoder({{10, 10, 10, 16, 3, 1, 0}}, 128)},
      {"encoder Nature CNN (3 convs, dense 512)", encoder({nature[0], nature[1], nature[2]}, 512)}};
  for (int64_t rows : {1, 8, 64}) {
    for (const auto& [name, chain] : encoders) {
      const rlx::ParameterSpec& last = chain.back().parameters.back();
      const std::vector<float> flat = random_values(last.offset + last.size, 0.05, 4);
      rlx::ChainKernel kernel(chain);
      kernel.load(flat.data());
      const std::vector<float> x = random_values(static_cast<size_t>(rows * chain.front().in), 1.0, 5);
      time_it(name, rows, [&] { kernel.run(x.data(), rows); });
    }
  }
  return 0;
}
