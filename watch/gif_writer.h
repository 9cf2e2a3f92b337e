// Animated GIFs with giflib: a 256-colour palette quantized per frame, looping forever.
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>

#include "watch/video_writer.h"

namespace rlx {

// Opens a GIF writer (see open_video). std::runtime_error naming the file and giflib's error
// text when it cannot be created.
std::unique_ptr<VideoWriter> open_gif(const std::filesystem::path& path, int width, int height, double fps);

// Which frames a GIF at `fps` keeps (every `stride`-th) and the delay of the k-th kept frame in
// hundredths of a second (delays summing to the true duration, rounding carried over).
struct GifTiming {
  double fps = 0;
  int stride = 1;
  // The delay of kept frame k (0-based).
  int delay_cs(int64_t k) const;
};

// The timing of a GIF at `fps` (> 0): stride ceil(fps / 50).
GifTiming gif_timing(double fps);

}  // namespace rlx
