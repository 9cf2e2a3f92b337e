// EpisodeRecorder: snapshot -> renderer (or the env's render()) -> video writer.
#include "watch/episode_recorder.h"

#include <cmath>
#include <optional>
#include <stdexcept>
#include <utility>

#include "core/config_error.h"
#include "envs/python_env.h"
#include "watch/renderable_envs.h"

namespace rlx {

namespace {

// The ConfigError for an env that nothing can draw, with what to add.
ConfigError cannot_film(const std::string& env_id) {
  if (is_python_env_id(env_id)) {
    return ConfigError(env_id + " cannot be filmed: its class has no render() method; give it one that returns an (H, W, 3) "
                                "uint8 array, as Gymnasium's render_mode='rgb_array' does (docs/python.md)");
  }
  std::string known;
  for (const std::string& id : renderable_env_ids()) known += (known.empty() ? "" : ", ") + id;
  return ConfigError(env_id + " cannot be filmed: rlx has no renderer for it (rlx draws " + known +
                     ") and its render() draws nothing; override Env::render_image() to draw the env "
                     "(docs/envs.md, \"Pictures for videos\")");
}

// `image` resized to width x height, each pixel taken from the nearest source pixel (moved
// through unchanged at its own size).
RgbImage scaled(RgbImage image, int width, int height) {
  if (width == image.width && height == image.height) return image;
  RgbImage out(width, height);
  for (int y = 0; y < height; ++y) {
    const int source_y = static_cast<int>(static_cast<int64_t>(y) * image.height / height);
    for (int x = 0; x < width; ++x) {
      const int source_x = static_cast<int>(static_cast<int64_t>(x) * image.width / width);
      const uint8_t* from = image.pixel(source_x, source_y);
      uint8_t* to = out.pixel(x, y);
      to[0] = from[0];
      to[1] = from[1];
      to[2] = from[2];
    }
  }
  return out;
}

// One side of the video for an env's image of `side` x `other_side` pixels: the option when set,
// else scaled with the other side's option (keeping the aspect), else the image's own.
int video_side(int option, int side, int other_option, int other_side) {
  if (option > 0) return option;
  if (other_option > 0) {
    return std::max(1, static_cast<int>(std::lround(static_cast<double>(side) * other_option / other_side)));
  }
  return side;
}

}  // namespace

EpisodeRecorder::EpisodeRecorder(const std::string& env_id, const RecordOptions& options)
    : env_id_(env_id), options_(options) {
  if (options_.episodes < 1) throw std::invalid_argument("--record-episodes must be >= 1");
  if (options_.fps < 0) throw std::invalid_argument("--fps must be > 0 (0: the env's own rate)");
  check_video_path(options_.path);
  if (is_renderable_env(env_id)) {
    renderer_ = make_env_renderer(env_id, options_.width, options_.height);
  } else if (options_.width < 0 || options_.height < 0 || options_.width > Env::kMaxRenderSide ||
             options_.height > Env::kMaxRenderSide) {
    throw std::invalid_argument("a frame of " + std::to_string(options_.width) + " x " + std::to_string(options_.height) +
                                " pixels: width and height must be in [1, " + std::to_string(Env::kMaxRenderSide) +
                                "] (0: the env's own size)");
  }
}

void EpisodeRecorder::observe(int episode, const Env& env) {
  if (episode >= options_.episodes) return;
  const RgbImage frame = draw(env);
  if (!writer_) {
    const double fps = options_.fps > 0 ? options_.fps : renderer_ ? renderer_->fps() : env.render_fps();
    writer_ = open_video(options_.path, frame.width, frame.height, fps);
  }
  writer_->add(frame);
  ++frames_;
}

RgbImage EpisodeRecorder::draw(const Env& env) {
  if (renderer_) {
    const std::optional<EnvSnapshot> snapshot = env.snapshot();
    if (!snapshot) throw std::invalid_argument(env_id_ + " cannot be recorded: it offers no exact state to draw");
    return renderer_->render(snapshot->exact_state);
  }
  std::optional<RgbImage> image = env.render();
  if (!image) throw cannot_film(env_id_);
  if (env_image_width_ == 0) {
    env_image_width_ = image->width;
    env_image_height_ = image->height;
  } else if (image->width != env_image_width_ || image->height != env_image_height_) {
    throw EnvOutputError(env_id_, "render", env.elapsed_steps(), "image",
                         "is " + std::to_string(image->width) + " x " + std::to_string(image->height) +
                             " pixels, expected the " + std::to_string(env_image_width_) + " x " +
                             std::to_string(env_image_height_) + " of its first (a video's frames have one size)");
  }
  const int width = video_side(options_.width, image->width, options_.height, image->height);
  const int height = video_side(options_.height, image->height, options_.width, image->width);
  return scaled(std::move(*image), width, height);
}

int64_t EpisodeRecorder::finish() {
  if (!writer_) throw std::logic_error("no frame was recorded into " + options_.path.string());
  writer_->finish();
  writer_.reset();
  return frames_;
}

}  // namespace rlx
