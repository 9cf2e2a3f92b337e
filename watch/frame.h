// One video frame: 8-bit RGB, row-major, the top row first.
#pragma once

#include <cstdint>
#include <vector>

namespace rlx {

struct Frame {
  int width = 0;
  int height = 0;
  std::vector<uint8_t> rgb;  // width * height * 3 bytes

  Frame() = default;
  Frame(int frame_width, int frame_height)
      : width(frame_width), height(frame_height), rgb(static_cast<size_t>(frame_width) * frame_height * 3) {}

  // The first of the 3 bytes of pixel (x, y), y counted from the top.
  uint8_t* pixel(int x, int y) { return rgb.data() + (static_cast<size_t>(y) * width + x) * 3; }
  const uint8_t* pixel(int x, int y) const { return rgb.data() + (static_cast<size_t>(y) * width + x) * 3; }
};

}  // namespace rlx
