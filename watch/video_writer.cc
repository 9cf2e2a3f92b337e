// open_video: the writer for the path's extension.
#include "watch/video_writer.h"

#include <stdexcept>

#include "watch/gif_writer.h"
#include "watch/mp4_writer.h"

namespace rlx {

void check_video_path(const std::filesystem::path& path) {
  const std::string extension = path.extension().string();
  if (extension != ".mp4" && extension != ".gif") {
    throw std::invalid_argument(path.string() + ": a video file must end in .mp4 or .gif, not '" + extension + "'");
  }
}

std::unique_ptr<VideoWriter> open_video(const std::filesystem::path& path, int width, int height, double fps) {
  if (width < 1 || height < 1) {
    throw std::invalid_argument(path.string() + ": frames of " + std::to_string(width) + " x " +
                                std::to_string(height) + " pixels cannot make a video");
  }
  if (!(fps > 0)) throw std::invalid_argument(path.string() + ": a video needs a frame rate above 0, got " + std::to_string(fps));
  check_video_path(path);
  if (path.extension() == ".mp4") return open_mp4(path, width, height, fps);
  return open_gif(path, width, height, fps);
}

}  // namespace rlx
