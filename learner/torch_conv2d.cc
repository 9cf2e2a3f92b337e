#include "learner/torch_conv2d.h"

#include "models/conv2d_layer.h"

namespace rlx {

torch::Tensor torch_conv2d(const LayerSpec& layer, const std::vector<torch::Tensor>& params, const torch::Tensor& x) {
  const Conv2dGeometry g = conv2d_geometry(layer);
  const torch::Tensor image = g.passthrough == 0 ? x : x.narrow(1, g.image_offset, g.in_size());
  const torch::Tensor images = image.reshape({-1, g.height, g.width, g.in_channels}).permute({0, 3, 1, 2});
  const torch::Tensor weight = params.at(0).permute({0, 3, 1, 2});  // [O, K, K, C] -> [O, C, K, K]
  const torch::Tensor y = torch::conv2d(images, weight, params.at(1), {g.stride, g.stride}, {g.padding, g.padding});
  const torch::Tensor features = y.permute({0, 2, 3, 1}).reshape({x.size(0), g.out_size()});
  if (g.passthrough == 0) return features;
  const int64_t after = g.passthrough - g.image_offset;
  return torch::cat({features, x.narrow(1, 0, g.image_offset), x.narrow(1, g.image_offset + g.in_size(), after)}, 1);
}

}  // namespace rlx
