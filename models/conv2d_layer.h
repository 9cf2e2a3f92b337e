// The "conv2d" layer kind (models/layer_kinds.h), built in: a 2-D convolution over images stored
// channels-last (HWC) and flattened row-major, the way pixel observations arrive. Its attributes
// (LayerSpec::attributes) are height, width, in_channels, out_channels, kernel (square), stride
// and padding (zeros on every side); a layer reads in = height * width * in_channels features
// and gives out = out_height * out_width * out_channels, also HWC, with
// out_height = (height + 2 * padding - kernel) / stride + 1 (and out_width alike).
//
// Images among other features (a Dict observation with an image key, flattened): two optional
// attributes, both 0 when absent. The layer reads a row of in = image + passthrough features, the
// image starting at image_offset (image_offset <= passthrough); it gives its convolution's output
// followed by the other passthrough features, unchanged and in their order. The chain's activation
// applies to the convolution's output only (LayerKind::activated_outputs), so a stack of conv2d
// layers carries a Dict's other keys along to the dense layers that read them all.
//
// Parameters, in flat order: "weight" [out_channels, kernel, kernel, in_channels], so that one
// output pixel is the dot product of its HWC input patch with one weight row, and "bias"
// [out_channels]. Initialised as dense layers are: the weight as a matrix
// [out_channels, kernel * kernel * in_channels] orthogonal with layer.init_gain and a zero bias,
// or, without orthogonal_init, PyTorch's Conv2d default (weight and bias ~ U(-1/sqrt(fan_in),
// 1/sqrt(fan_in)), fan_in = in_channels * kernel * kernel).
//
// The torch-free forward (workers, rlx::Policy) is im2col of each output pixel's patch, then the
// product of those rows with the weight by models/product_block.h in the kernel's no-FMA clones,
// so that every x86-64 CPU gives the same bits. LibTorch's forward is learner/torch_conv2d.h.
#pragma once

#include <cstdint>
#include <map>
#include <string>

#include "models/layer_kinds.h"
#include "models/network_layout.h"

namespace rlx {

// The kind's name in LayerSpec::kind and EncoderLayer::kind.
constexpr const char* kConv2dLayer = "conv2d";

// Each attribute's largest value, and the most floats an image (in or out) or the weight may
// hold: sizes stay far from overflow even for attributes from an untrusted spec.
constexpr int64_t kMaxConv2dAttribute = int64_t{1} << 16;
constexpr int64_t kMaxConv2dSize = int64_t{1} << 31;

// A conv2d layer's shape: its attributes, and what follows from them.
struct Conv2dGeometry {
  int64_t height = 0;
  int64_t width = 0;
  int64_t in_channels = 0;
  int64_t out_channels = 0;
  int64_t kernel = 0;
  int64_t stride = 1;
  int64_t padding = 0;
  int64_t image_offset = 0;  // features of the row before the image
  int64_t passthrough = 0;   // features of the row besides the image, copied after the output

  // Rows and columns of the output image: the kernel's positions, stride apart, in the padded image.
  int64_t out_height() const { return (height + 2 * padding - kernel) / stride + 1; }
  int64_t out_width() const { return (width + 2 * padding - kernel) / stride + 1; }
  // One output pixel's input patch: kernel * kernel * in_channels features (a weight row).
  int64_t patch_size() const { return kernel * kernel * in_channels; }
  // Features of one input image (HWC).
  int64_t in_size() const { return height * width * in_channels; }
  // Features of one output image (HWC).
  int64_t out_size() const { return out_height() * out_width() * out_channels; }
  // Features of a row read: the image and the passthrough.
  int64_t row_in() const { return in_size() + passthrough; }
  // Features of a row given: the output image and the passthrough.
  int64_t row_out() const { return out_size() + passthrough; }
  // These values as LayerSpec::attributes (or EncoderLayer::attributes); image_offset and
  // passthrough only when not 0, so that a plain image's layer reads as it did before them.
  std::map<std::string, int64_t> attributes() const;
};

// The checked geometry of a conv2d layer: every attribute present and known, all but padding in
// [1, kMaxConv2dAttribute], padding in [0, kMaxConv2dAttribute], the kernel no larger than the
// padded image, images and weight within kMaxConv2dSize floats, image_offset <= passthrough, and
// layer.in = height * width * in_channels + passthrough. Throws std::invalid_argument naming the layer and the attribute otherwise.
Conv2dGeometry conv2d_geometry(const LayerSpec& layer);

// y [rows, row_out] = the convolution of each row's image in x [rows, row_in] with weight
// [out_channels, kernel, kernel, in_channels] plus bias [out_channels], both HWC, then the row's
// passthrough features; y never aliases x. The same bits on every x86-64 CPU and for any batch a row is in. Each call first transposes
// the weight for the product (a cost per call, not per row: ~35 us of a Nature CNN forward);
// scratch is per thread and grows to the largest layer run, then is reused.
void conv2d_forward(const Conv2dGeometry& geometry, const float* weight, const float* bias, const float* x,
                    int64_t rows, float* y);

// The kind's spec and torch-free forward, as models/layer_kinds.cc registers it built in.
LayerKind conv2d_layer_kind();

}  // namespace rlx
