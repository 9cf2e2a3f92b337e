// Records the first episodes an evaluation runs into a video: the env after its reset and after
// every step, drawn by rlx's renderer of a built-in env (watch/env_renderer.h) or by the env's
// own Env::render() (a plugin's or a Python env's), and appended to an MP4 or GIF.
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>

#include "core/rgb_image.h"
#include "envs/env.h"
#include "watch/env_renderer.h"
#include "watch/video_writer.h"

namespace rlx {

struct RecordOptions {
  std::filesystem::path path;  // .mp4 or .gif
  int episodes = 1;            // the first N episodes go into the video
  int width = 0, height = 0;   // 0: the env's default size (one of them 0 for an env that draws
                               // itself: the other scaled to keep its pictures' aspect)
  double fps = 0;              // 0: the env's own frame rate
};

class EpisodeRecorder {
 public:
  // Sets up the recording of env_id: rlx's renderer when it draws env_id, else the env's own
  // render() from the first observe(). std::invalid_argument naming the option or file when
  // the options are bad.
  EpisodeRecorder(const std::string& env_id, const RecordOptions& options);

  // Draws `env`'s current state when `episode` (0-based) is one to record; the first frame opens
  // the video. Throws ConfigError naming the env (and how to give it a render()) when rlx has no
  // renderer for it and its render() draws nothing; EnvOutputError when its render() returns a
  // malformed image or one of another size than its first; std::invalid_argument when a
  // built-in env offers no exact state to draw; std::runtime_error when the video cannot be
  // created.
  void observe(int episode, const Env& env);

  // Finishes the video (it appears at its path only now); returns the frames written.
  int64_t finish();

 private:
  // The frame of env's current state: rlx's renderer's, or the env's own image scaled to the
  // video's size.
  RgbImage draw(const Env& env);

  std::string env_id_;
  RecordOptions options_;
  std::unique_ptr<EnvRenderer> renderer_;  // null: the env draws itself
  int env_image_width_ = 0, env_image_height_ = 0;  // the size of the env's first image
  std::unique_ptr<VideoWriter> writer_;
  int64_t frames_ = 0;
};

}  // namespace rlx
