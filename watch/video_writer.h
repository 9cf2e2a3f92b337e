// Videos of frames: H.264 in MP4 through FFmpeg's libraries, or an animated GIF through giflib,
// chosen by the file's extension. A video is written beside its path and renamed into place by
// finish(), so a crash never leaves a torn file under the name.
#pragma once

#include <filesystem>
#include <memory>

#include "core/rgb_image.h"

namespace rlx {

class VideoWriter {
 public:
  virtual ~VideoWriter() = default;

  // Appends a frame (the size the writer was opened with; std::invalid_argument otherwise).
  virtual void add(const RgbImage& frame) = 0;

  // Flushes the encoder, closes the file and renames it to its path. std::runtime_error naming
  // the file when encoding or writing fails.
  virtual void finish() = 0;
};

// std::invalid_argument naming `path` unless it ends in .mp4 or .gif.
void check_video_path(const std::filesystem::path& path);

// A writer for `path` (.mp4 or .gif; std::invalid_argument naming the path otherwise) of frames
// of width x height at `fps` frames per second. MP4 frames of odd size are scaled to the next
// even one (H.264's 4:2:0 needs even sizes); a GIF shows at most 50 frames a second (its delays
// count hundredths and players slow shorter ones down), dropping the frames in between.
std::unique_ptr<VideoWriter> open_video(const std::filesystem::path& path, int width, int height, double fps);

}  // namespace rlx
