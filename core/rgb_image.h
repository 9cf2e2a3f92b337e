// An 8-bit RGB picture: what an env draws of itself (Env::render, envs/env.h) and one frame of a
// video (watch/). Row-major, the top row first, three bytes (R, G, B) a pixel.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace rlx {

struct RgbImage {
  int width = 0;
  int height = 0;
  std::vector<uint8_t> rgb;  // [height, width, 3]

  RgbImage() = default;
  // A black image of width x height pixels.
  RgbImage(int image_width, int image_height)
      : width(image_width), height(image_height), rgb(static_cast<size_t>(image_width) * image_height * 3) {}

  // The first of the 3 bytes of pixel (x, y), y counted from the top.
  uint8_t* pixel(int x, int y) { return rgb.data() + (static_cast<size_t>(y) * width + x) * 3; }
  const uint8_t* pixel(int x, int y) const { return rgb.data() + (static_cast<size_t>(y) * width + x) * 3; }
};

}  // namespace rlx
