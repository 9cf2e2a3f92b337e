// The "cnn" encoder kind, built in (models/layer_kinds.h): convolutions over each image of the
// observation, then dense layers over everything. An image is a Box of rank 3, height x width x
// channels (channels last, as Gymnasium's pixel and MinAtar observations are): the observation
// itself, or leaves of a Dict or Tuple observation (SB3's MultiInputPolicy, RLlib's catalog for
// Dict spaces); a rank-3 Box smaller than kMinImageSide on a side (a 3x3 board) is no image and is
// read flat like the other leaves. For each image, in flatten order, each ModelSpec::conv_filters
// entry becomes a "conv2d" layer (models/conv2d_layer.h; no padding, ReLU) that carries the rest of
// the row through (image_offset, passthrough), so the first dense layer reads every image's
// features and the observation's other leaves, flattened (Discrete one-hot), concatenated. Each
// hidden_sizes entry becomes a dense layer with the spec's activation; the heads follow.
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

// The least height and width of an image for the cnn encoder.
constexpr int64_t kMinImageSide = 4;

// The image shape of a Box of rank 3 (height, width, channels); nullopt for any other space.
std::optional<ImageShape> image_shape(const Space& space);

// One image among an observation's leaves.
struct ImageLeaf {
  std::string path;          // inside the observation: "" for an observation that is one image, "['camera']"
  int64_t flat_offset = 0;   // its first element of the flat input
  ImageShape shape;
};
// The images of an observation space, in flatten order (core/observation_layout.h): the space
// itself when it is one, or the rank-3 Boxes among a Dict's or Tuple's leaves, each at least
// kMinImageSide high and wide; empty when none.
std::vector<ImageLeaf> image_leaves(const Space& observation_space);

// The preset filters and dense widths for an image (see above), or for several: the Nature CNN
// when every image fits it, else the small one.
struct CnnPreset {
  std::vector<ConvFilter> conv_filters;
  std::vector<int64_t> hidden_sizes;
};
CnnPreset cnn_preset(const ImageShape& image);
CnnPreset cnn_preset(const std::vector<ImageLeaf>& images);

// Filters written "OUT:KERNEL:STRIDE" and separated by commas ("32:8:4,64:4:2,64:3:1"); throws
// std::invalid_argument naming the entry and what was expected.
std::vector<ConvFilter> parse_conv_filters(const std::string& text);
// The filters as parse_conv_filters reads them.
std::string conv_filters_text(const std::vector<ConvFilter>& filters);

// The layers of a "cnn" spec's encoder; throws std::invalid_argument when its observation holds no
// image, it has no filters, or a filter does not fit the image (named by its path) left by the
// ones before it.
std::vector<EncoderLayer> cnn_encoder_layers(const ModelSpec& spec);

}  // namespace rlx
