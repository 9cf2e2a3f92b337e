// H.264 in MP4 with libavformat, libavcodec (libx264) and libswscale (RGB to YUV 4:2:0).
#pragma once

#include <filesystem>
#include <memory>

#include "watch/video_writer.h"

namespace rlx {

// Opens an MP4 writer (see open_video). std::runtime_error naming the file and FFmpeg's error
// text when the encoder or the file cannot be opened.
std::unique_ptr<VideoWriter> open_mp4(const std::filesystem::path& path, int width, int height, double fps);

}  // namespace rlx
