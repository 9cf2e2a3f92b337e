// GifWriter: giflib's encoder; each frame quantized to its own 256-colour map.
#include "watch/gif_writer.h"

#include <gif_lib.h>

#include <cmath>
#include <stdexcept>
#include <string>
#include <vector>

namespace rlx {
namespace fs = std::filesystem;
namespace {

constexpr double kMaxGifFps = 50;  // delays are whole hundredths; players stretch those under 2

std::string gif_error_text(int code) {
  const char* text = GifErrorString(code);
  return text != nullptr ? text : "giflib error " + std::to_string(code);
}

struct ColorMapDeleter {
  void operator()(ColorMapObject* map) const { GifFreeMapObject(map); }
};

class GifWriter : public VideoWriter {
 public:
  GifWriter(fs::path path, int width, int height, double fps)
      : path_(std::move(path)), temp_(path_.string() + ".partial"), width_(width), height_(height), timing_(gif_timing(fps)) {
    int error = 0;
    gif_ = EGifOpenFileName(temp_.c_str(), false, &error);
    if (gif_ == nullptr) throw std::runtime_error(path_.string() + ": cannot create the GIF: " + gif_error_text(error));
    try {
      EGifSetGifVersion(gif_, true);
      check(EGifPutScreenDesc(gif_, width_, height_, 8, 0, nullptr), "the screen descriptor");
      // NETSCAPE2.0: loop forever.
      const unsigned char application[] = "NETSCAPE2.0";
      const unsigned char loop[] = {1, 0, 0};
      check(EGifPutExtensionLeader(gif_, APPLICATION_EXT_FUNC_CODE), "the loop extension");
      check(EGifPutExtensionBlock(gif_, 11, application), "the loop extension");
      check(EGifPutExtensionBlock(gif_, 3, loop), "the loop extension");
      check(EGifPutExtensionTrailer(gif_), "the loop extension");
    } catch (const std::runtime_error&) {
      abandon();
      throw;
    }
  }

  ~GifWriter() override { abandon(); }

  void add(const RgbImage& frame) override {
    if (frame.width != width_ || frame.height != height_) {
      throw std::invalid_argument(path_.string() + ": a frame of " + std::to_string(frame.width) + " x " +
                                  std::to_string(frame.height) + " in a GIF of " + std::to_string(width_) + " x " +
                                  std::to_string(height_));
    }
    if (frames_seen_++ % timing_.stride != 0) return;
    const size_t pixels = static_cast<size_t>(width_) * height_;
    std::vector<GifByteType> red(pixels), green(pixels), blue(pixels), indices(pixels);
    for (size_t i = 0; i < pixels; ++i) {
      red[i] = frame.rgb[3 * i];
      green[i] = frame.rgb[3 * i + 1];
      blue[i] = frame.rgb[3 * i + 2];
    }
    int colours = 256;
    std::vector<GifColorType> palette(256);
    check(GifQuantizeBuffer(static_cast<unsigned>(width_), static_cast<unsigned>(height_), &colours, red.data(),
                            green.data(), blue.data(), indices.data(), palette.data()),
          "the colour quantization");
    std::unique_ptr<ColorMapObject, ColorMapDeleter> map(GifMakeMapObject(256, palette.data()));
    if (!map) throw std::runtime_error(path_.string() + ": out of memory for a GIF colour map");

    GraphicsControlBlock control{};
    control.DisposalMode = DISPOSE_DO_NOT;
    control.DelayTime = timing_.delay_cs(frames_kept_++);
    control.TransparentColor = NO_TRANSPARENT_COLOR;
    GifByteType extension[4];
    const size_t extension_size = EGifGCBToExtension(&control, extension);
    check(EGifPutExtension(gif_, GRAPHICS_EXT_FUNC_CODE, static_cast<int>(extension_size), extension), "a frame's delay");
    check(EGifPutImageDesc(gif_, 0, 0, width_, height_, false, map.get()), "an image descriptor");
    for (int y = 0; y < height_; ++y) {
      check(EGifPutLine(gif_, indices.data() + static_cast<size_t>(y) * width_, width_), "a row of pixels");
    }
  }

  void finish() override {
    int error = 0;
    GifFileType* gif = gif_;
    gif_ = nullptr;
    if (EGifCloseFile(gif, &error) != GIF_OK) {
      std::error_code ignored;
      fs::remove(temp_, ignored);
      throw std::runtime_error(path_.string() + ": cannot finish the GIF: " + gif_error_text(error));
    }
    // giflib creates its file private (0600); a video is for sharing, like the MP4s.
    fs::permissions(temp_, fs::perms::owner_read | fs::perms::owner_write | fs::perms::group_read | fs::perms::others_read);
    fs::rename(temp_, path_);
  }

 private:
  // Closes an unfinished file and removes it; the path is left untouched.
  void abandon() {
    if (gif_ == nullptr) return;
    int error = 0;
    EGifCloseFile(gif_, &error);
    gif_ = nullptr;
    std::error_code ignored;
    fs::remove(temp_, ignored);
  }

  void check(int status, const char* what) const {
    if (status != GIF_OK) {
      throw std::runtime_error(path_.string() + ": cannot write " + what + ": " + gif_error_text(gif_->Error));
    }
  }

  fs::path path_, temp_;
  int width_, height_;
  GifTiming timing_;
  GifFileType* gif_ = nullptr;
  int64_t frames_seen_ = 0, frames_kept_ = 0;
};

}  // namespace

int GifTiming::delay_cs(int64_t k) const {
  const auto at = [this](int64_t kept) { return std::llround(100.0 * static_cast<double>(kept * stride) / fps); };
  return static_cast<int>(at(k + 1) - at(k));
}

GifTiming gif_timing(double fps) {
  if (!(fps > 0)) throw std::invalid_argument("a GIF needs a frame rate above 0, got " + std::to_string(fps));
  GifTiming timing;
  timing.fps = fps;
  timing.stride = static_cast<int>(std::ceil(fps / kMaxGifFps - 1e-9));
  return timing;
}

std::unique_ptr<VideoWriter> open_gif(const fs::path& path, int width, int height, double fps) {
  return std::make_unique<GifWriter>(path, width, height, fps);
}

}  // namespace rlx
