// The LibTorch forward of the built-in "conv2d" layer kind (models/conv2d_layer.h): the same map
// as its torch-free forward, HWC images flattened row-major, in LibTorch ops that run on CPU and
// CUDA tensors and whose backward autograd gives. learner/torch_layers.cc registers it built in,
// so every process that links rlx_learner has it.
#pragma once

#include <vector>

#include <torch/types.h>

#include "models/network_layout.h"

namespace rlx {

// y [B, out] = the conv2d layer's map of x [B, in] with params {weight [O, K, K, C], bias [O]}:
// x viewed [B, H, W, C] and permuted to NCHW, torch::conv2d with the weight permuted to
// [O, C, K, K], the result permuted back to NHWC and flattened, then the passthrough features
// (the row besides the image at image_offset) concatenated after it. Throws std::invalid_argument
// naming the layer for bad attributes (models/conv2d_layer.h's conv2d_geometry).
torch::Tensor torch_conv2d(const LayerSpec& layer, const std::vector<torch::Tensor>& params, const torch::Tensor& x);

}  // namespace rlx
