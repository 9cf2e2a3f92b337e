#include "models/conv2d_layer.h"

#include <algorithm>
#include <cstring>
#include <optional>
#include <stdexcept>
#include <vector>

#include "core/did_you_mean.h"
#include "core/named_registry.h"
#include "core/rng.h"
#include "models/kernel_clones.h"
#include "models/product_block.h"

namespace rlx {

namespace {

// Output pixels whose patches are gathered at a time: their rows [kPixelChunk, patch] stay in
// the first cache levels while the product reads them (a whole 84x84 image's would not).
constexpr int64_t kPixelChunk = 64;

// The attributes in the order messages list them.
const std::vector<std::string>& attribute_names() {
  static const std::vector<std::string> names = {"height", "width",  "in_channels",  "out_channels",
                                                 "kernel", "stride", "padding",      "image_offset",
                                                 "passthrough"};
  return names;
}

// "conv2d layer 'pi_0': " for messages.
std::string where(const LayerSpec& layer) { return std::string(kConv2dLayer) + " layer '" + layer.name + "': "; }

// col [pixels, patch]: row p holds the patch of output pixel first + p (in row-major order over
// out_height x out_width), in HWC order (kh, kw, c), with zeros where it reaches into the padding.
void gather_patches(const Conv2dGeometry& g, const float* __restrict x, int64_t first, int64_t pixels,
                    float* __restrict col) {
  const int64_t channels = g.in_channels;
  const int64_t run = g.kernel * channels;  // one kernel row of a patch
  const int64_t out_width = g.out_width();
  for (int64_t p = 0; p < pixels; ++p) {
    const int64_t oh = (first + p) / out_width;
    const int64_t ow = (first + p) % out_width;
    const int64_t w0 = ow * g.stride - g.padding;  // the patch's first column, maybe in the padding
    const int64_t kw_lo = std::max<int64_t>(0, -w0);  // the kernel columns inside the image
    const int64_t kw_hi = std::min(g.kernel, g.width - w0);
    float* dst = col + p * g.patch_size();
    for (int64_t kh = 0; kh < g.kernel; ++kh, dst += run) {
      const int64_t ih = oh * g.stride - g.padding + kh;
      if (ih < 0 || ih >= g.height || kw_lo >= kw_hi) {
        std::fill(dst, dst + run, 0.0f);
        continue;
      }
      std::fill(dst, dst + kw_lo * channels, 0.0f);
      std::memcpy(dst + kw_lo * channels, x + (ih * g.width + w0 + kw_lo) * channels,
                  sizeof(float) * static_cast<size_t>((kw_hi - kw_lo) * channels));
      std::fill(dst + kw_hi * channels, dst + run, 0.0f);
    }
  }
}

// y [pixels, out_channels] = col [pixels, patch] weight^T + bias: models/product_block.h compiled
// for the kernel's no-FMA clones (as network_kernel.cc's dense layers), the same bits on every
// x86-64 CPU.
RLX_VECTOR_CLONES void patch_products(const float* __restrict col, int64_t pixels, int64_t patch,
                                      const float* weight_t, const float* weight, int64_t out_channels,
                                      const float* bias, float* __restrict y) {
  product::rows(col, pixels, patch, weight_t, weight, out_channels, bias, y);
}

}  // namespace

std::map<std::string, int64_t> Conv2dGeometry::attributes() const {
  std::map<std::string, int64_t> values = {{"height", height},   {"width", width},         {"in_channels", in_channels},
                                           {"out_channels", out_channels}, {"kernel", kernel}, {"stride", stride},
                                           {"padding", padding}};
  if (image_offset != 0) values["image_offset"] = image_offset;
  if (passthrough != 0) values["passthrough"] = passthrough;
  return values;
}

Conv2dGeometry conv2d_geometry(const LayerSpec& layer) {
  const std::vector<std::string>& names = attribute_names();
  for (const auto& [name, value] : layer.attributes) {
    if (std::find(names.begin(), names.end(), name) != names.end()) continue;
    const std::optional<std::string> match = closest_match(name, names);
    throw std::invalid_argument(where(layer) + "unknown attribute '" + name + "'" +
                                (match ? " (did you mean '" + *match + "'?)" : "") + "; known: " + joined_names(names));
  }
  const auto attribute = [&](const std::string& name, int64_t low, std::optional<int64_t> absent = std::nullopt) {
    const auto it = layer.attributes.find(name);
    if (it == layer.attributes.end()) {
      if (absent) return *absent;
      throw std::invalid_argument(where(layer) + "attribute '" + name + "' is missing");
    }
    if (it->second < low || it->second > kMaxConv2dAttribute) {
      throw std::invalid_argument(where(layer) + "attribute '" + name + "' is " + std::to_string(it->second) +
                                  ", outside [" + std::to_string(low) + ", " + std::to_string(kMaxConv2dAttribute) + "]");
    }
    return it->second;
  };
  Conv2dGeometry g;
  g.height = attribute("height", 1);
  g.width = attribute("width", 1);
  g.in_channels = attribute("in_channels", 1);
  g.out_channels = attribute("out_channels", 1);
  g.kernel = attribute("kernel", 1);
  g.stride = attribute("stride", 1);
  g.padding = attribute("padding", 0);
  g.image_offset = attribute("image_offset", 0, 0);
  g.passthrough = attribute("passthrough", 0, 0);
  if (g.image_offset > g.passthrough) {
    throw std::invalid_argument(where(layer) + "attribute 'image_offset' is " + std::to_string(g.image_offset) +
                                ", more than the " + std::to_string(g.passthrough) +
                                " passthrough features it lies among");
  }
  for (const auto& [side, size] : {std::pair<const char*, int64_t>{"height", g.height}, {"width", g.width}}) {
    if (g.kernel > size + 2 * g.padding) {
      throw std::invalid_argument(where(layer) + "attribute 'kernel' is " + std::to_string(g.kernel) +
                                  ", larger than the padded " + side + " " + std::to_string(size + 2 * g.padding) +
                                  " (" + side + " " + std::to_string(size) + " + 2 * padding " +
                                  std::to_string(g.padding) + ")");
    }
  }
  const auto check_size = [&](const char* what, int64_t size) {
    if (size > kMaxConv2dSize) {
      throw std::invalid_argument(where(layer) + what + " would hold " + std::to_string(size) + " floats, more than " +
                                  std::to_string(kMaxConv2dSize));
    }
  };
  check_size("an input image (height * width * in_channels)", g.in_size());
  check_size("a weight row (kernel * kernel * in_channels)", g.patch_size());
  check_size("the weight (out_channels * kernel * kernel * in_channels)", g.out_channels * g.patch_size());
  check_size("an output image (out_height * out_width * out_channels)", g.out_height() * g.out_width() * g.out_channels);
  check_size("an output row (the output image + passthrough)", g.row_out());
  if (layer.in != g.row_in()) {
    throw std::invalid_argument(where(layer) + "it reads " + std::to_string(layer.in) +
                                " features, but attributes height * width * in_channels + passthrough give " +
                                std::to_string(g.height) + " * " + std::to_string(g.width) + " * " +
                                std::to_string(g.in_channels) + " + " + std::to_string(g.passthrough) + " = " +
                                std::to_string(g.row_in()));
  }
  return g;
}

void conv2d_forward(const Conv2dGeometry& geometry, const float* weight, const float* bias, const float* x,
                    int64_t rows, float* y) {
  thread_local std::vector<float> weight_t;  // [patch, out_channels]: the product's B for full column blocks
  thread_local std::vector<float> col;       // [kPixelChunk, patch]
  const int64_t patch = geometry.patch_size();
  const int64_t out_channels = geometry.out_channels;
  const int64_t pixels = geometry.out_height() * geometry.out_width();
  if (out_channels >= product::kBlockColumns) {  // narrower layers use only weight itself
    weight_t.resize(static_cast<size_t>(patch * out_channels));
    product::transpose(weight, out_channels, patch, weight_t.data());
  }
  col.resize(static_cast<size_t>(std::min(pixels, kPixelChunk) * patch));
  const int64_t before = geometry.image_offset, after = geometry.passthrough - geometry.image_offset;
  for (int64_t r = 0; r < rows; ++r) {
    const float* row = x + r * geometry.row_in();
    const float* image = row + before;
    float* out = y + r * geometry.row_out();
    for (int64_t first = 0; first < pixels; first += kPixelChunk) {
      const int64_t count = std::min(kPixelChunk, pixels - first);
      gather_patches(geometry, image, first, count, col.data());
      patch_products(col.data(), count, patch, weight_t.data(), weight, out_channels, bias, out + first * out_channels);
    }
    float* passed = out + geometry.out_size();
    std::copy(row, row + before, passed);
    std::copy(image + geometry.in_size(), image + geometry.in_size() + after, passed + before);
  }
}

LayerKind conv2d_layer_kind() {
  LayerKind kind;
  kind.output_size = [](const LayerSpec& layer) { return conv2d_geometry(layer).row_out(); };
  kind.activated_outputs = [](const LayerSpec& layer) { return conv2d_geometry(layer).out_size(); };
  kind.parameters = [](const LayerSpec& layer) {
    const Conv2dGeometry g = conv2d_geometry(layer);
    return std::vector<std::pair<std::string, std::vector<int64_t>>>{
        {"weight", {g.out_channels, g.kernel, g.kernel, g.in_channels}}, {"bias", {g.out_channels}}};
  };
  kind.initialize = [](const LayerSpec& layer, float* const* params, Rng& rng) {
    const Conv2dGeometry g = conv2d_geometry(layer);
    if (layer.orthogonal_init) {
      orthogonal_fill(params[0], g.out_channels, g.patch_size(), layer.init_gain, rng);
      std::fill(params[1], params[1] + g.out_channels, 0.0f);
    } else {
      fan_in_uniform_fill(params[0], params[1], g.out_channels, g.patch_size(), rng);
    }
  };
  kind.forward = [](const LayerSpec& layer, const float* const* params, const float* x, int64_t rows, float* y) {
    conv2d_forward(conv2d_geometry(layer), params[0], params[1], x, rows, y);
  };
  return kind;
}

}  // namespace rlx
