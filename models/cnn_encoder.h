// The "cnn" encoder kind, built in (models/layer_kinds.h): convolutions over an image observation,
// then dense layers. The observation must be one image: a Box of rank 3, height x width x
// channels (channels last, as Gymnasium's pixel and MinAtar observations are). Each
// ModelSpec::conv_filters entry becomes a "conv2d" layer (models/conv2d_layer.h; no padding,
// ReLU), and each hidden_sizes entry a dense layer with the spec's activation; the heads follow.
//
// The presets, chosen by image size when an experiment leaves the encoder to rlx (RLlib's
// catalog and SB3's CnnPolicy choose the same way):
//   Nature CNN (Mnih et al. 2015), images of at least 36 x 36: 32 8x8 stride 4, 64 4x4 stride 2,
//     64 3x3 stride 1, then dense 512 (SB3's NatureCNN features_dim);
//   small, for smaller images such as MinAtar's 10 x 10 grids (Young & Tian 2019): 16 3x3
//     stride 1, then dense 128.
// Torch-free.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/space.h"
#include "models/layer_kinds.h"
#include "models/model_spec.h"

namespace rlx {

// The encoder's name in ModelSpec::encoder.
constexpr const char* kCnnEncoder = "cnn";

// An image observation's shape.
struct ImageShape {
  int64_t height = 0;
  int64_t width = 0;
  int64_t channels = 0;
};

// The image shape of a Box of rank 3 (height, width, channels); nullopt for any other space.
std::optional<ImageShape> image_shape(const Space& space);

// The preset filters and dense widths for an image (see above).
struct CnnPreset {
  std::vector<ConvFilter> conv_filters;
  std::vector<int64_t> hidden_sizes;
};
CnnPreset cnn_preset(const ImageShape& image);

// Filters written "OUT:KERNEL:STRIDE" and separated by commas ("32:8:4,64:4:2,64:3:1"); throws
// std::invalid_argument naming the entry and what was expected.
std::vector<ConvFilter> parse_conv_filters(const std::string& text);
// The filters as parse_conv_filters reads them.
std::string conv_filters_text(const std::vector<ConvFilter>& filters);

// The layers of a "cnn" spec's encoder; throws std::invalid_argument when its observation is no
// image, it has no filters, or a filter does not fit the image left by the ones before it.
std::vector<EncoderLayer> cnn_encoder_layers(const ModelSpec& spec);

}  // namespace rlx
