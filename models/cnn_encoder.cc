#include "models/cnn_encoder.h"

#include <sstream>
#include <stdexcept>

#include "core/observation_layout.h"
#include "core/parse_number.h"
#include "models/conv2d_layer.h"

namespace rlx {

namespace {

// Images at least this tall and wide get the Nature CNN (its three convolutions need 36).
constexpr int64_t kNatureCnnMinSide = 36;

int64_t parse_filter_number(const std::string& text, const std::string& entry, const char* what) {
  const int64_t value = parse_whole_int64(text).value_or(0);
  if (value < 1 || value > kMaxConv2dAttribute) {
    throw std::invalid_argument("conv filter '" + entry + "': " + what + " '" + text + "' is not an integer in [1, " +
                                std::to_string(kMaxConv2dAttribute) + "] (filters are OUT:KERNEL:STRIDE, e.g. 32:8:4)");
  }
  return value;
}

}  // namespace

std::optional<ImageShape> image_shape(const Space& space) {
  if (!space.is_box() || space.shape.size() != 3) return std::nullopt;
  return ImageShape{space.shape[0], space.shape[1], space.shape[2]};
}

std::vector<ImageLeaf> image_leaves(const Space& observation_space) {
  std::vector<ImageLeaf> images;
  for (const ObsLeaf& leaf : observation_layout(observation_space).leaves) {
    const std::optional<ImageShape> shape = image_shape(leaf.space);
    if (shape && shape->height >= kMinImageSide && shape->width >= kMinImageSide) {
      images.push_back({leaf.path, leaf.flat_offset, *shape});
    }
  }
  return images;
}

CnnPreset cnn_preset(const std::vector<ImageLeaf>& images) {
  if (images.empty()) throw std::invalid_argument("a cnn preset needs an image");
  for (const ImageLeaf& image : images) {
    if (image.shape.height < kNatureCnnMinSide || image.shape.width < kNatureCnnMinSide) return cnn_preset(image.shape);
  }
  return cnn_preset(images.front().shape);
}

CnnPreset cnn_preset(const ImageShape& image) {
  if (image.height >= kNatureCnnMinSide && image.width >= kNatureCnnMinSide) {
    return {{{32, 8, 4}, {64, 4, 2}, {64, 3, 1}}, {512}};
  }
  return {{{16, 3, 1}}, {128}};
}

std::vector<ConvFilter> parse_conv_filters(const std::string& text) {
  std::vector<ConvFilter> filters;
  std::stringstream entries(text);
  std::string entry;
  while (std::getline(entries, entry, ',')) {
    const size_t first = entry.find_first_not_of(" \t"), last = entry.find_last_not_of(" \t");
    entry = first == std::string::npos ? "" : entry.substr(first, last - first + 1);
    std::vector<std::string> parts;
    std::stringstream numbers(entry);
    std::string part;
    while (std::getline(numbers, part, ':')) parts.push_back(part);
    if (parts.size() != 3) {
      throw std::invalid_argument("conv filter '" + entry + "': expected OUT:KERNEL:STRIDE, e.g. 32:8:4");
    }
    filters.push_back({parse_filter_number(parts[0], entry, "OUT"), parse_filter_number(parts[1], entry, "KERNEL"),
                       parse_filter_number(parts[2], entry, "STRIDE")});
  }
  if (filters.empty()) throw std::invalid_argument("conv filters '" + text + "': no filter (expected e.g. 32:8:4,64:4:2)");
  return filters;
}

std::string conv_filters_text(const std::vector<ConvFilter>& filters) {
  std::string text;
  for (const ConvFilter& f : filters) {
    text += (text.empty() ? "" : ",") + std::to_string(f.out_channels) + ":" + std::to_string(f.kernel) + ":" +
            std::to_string(f.stride);
  }
  return text;
}

std::vector<EncoderLayer> cnn_encoder_layers(const ModelSpec& spec) {
  const Space observations = spec.input_space();
  const std::vector<ImageLeaf> images = image_leaves(observations);
  if (images.empty()) {
    throw std::invalid_argument("the cnn encoder reads images, Boxes of rank 3 (height, width, channels) at least " +
                                std::to_string(kMinImageSide) + "x" + std::to_string(kMinImageSide) +
                                ", alone or inside a Dict or Tuple, but the observation space is " +
                                observations.to_string());
  }
  if (spec.conv_filters.empty()) throw std::invalid_argument("the cnn encoder needs at least one conv filter");
  std::vector<EncoderLayer> layers;
  // The row each layer reads: the features of the images done so far, then the flat input without
  // those images (images.size() == 1 with no other leaf: just the image, no passthrough).
  int64_t row = observation_layout(observations).flat_size;
  int64_t features_done = 0, image_sizes_done = 0;
  for (const ImageLeaf& image : images) {
    Conv2dGeometry g;
    g.height = image.shape.height;
    g.width = image.shape.width;
    g.in_channels = image.shape.channels;
    const int64_t image_size = g.in_size();
    g.image_offset = features_done + image.flat_offset - image_sizes_done;
    g.passthrough = row - image_size;
    for (size_t i = 0; i < spec.conv_filters.size(); ++i) {
      const ConvFilter& f = spec.conv_filters[i];
      g.out_channels = f.out_channels;
      g.kernel = f.kernel;
      g.stride = f.stride;
      if (f.kernel > g.height || f.kernel > g.width || f.out_channels < 1 || f.stride < 1) {
        throw std::invalid_argument("cnn encoder: conv filter " + std::to_string(i) + " (" + conv_filters_text({f}) +
                                    ") does not fit the " + std::to_string(g.height) + "x" + std::to_string(g.width) +
                                    "x" + std::to_string(g.in_channels) + " image it reads" +
                                    (image.path.empty() ? "" : " (observation " + image.path + ")"));
      }
      layers.push_back({kConv2dLayer, 0, Activation::kRelu, g.attributes()});
      const int64_t height = g.out_height(), width = g.out_width();
      g.height = height;
      g.width = width;
      g.in_channels = f.out_channels;
      g.image_offset = 0;  // the next layer reads this one's output, which leads its row
    }
    row = g.in_size() + g.passthrough;
    features_done += g.in_size();
    image_sizes_done += image_size;
  }
  for (int64_t width : spec.hidden_sizes) layers.push_back({kDenseLayer, width, parse_activation(spec.activation)});
  return layers;
}

}  // namespace rlx
