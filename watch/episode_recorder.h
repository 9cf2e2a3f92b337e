// Records the first episodes an evaluation runs into a video: the env's state after its reset
// and after every step, drawn by its renderer and appended to an MP4 or GIF.
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>

#include "envs/env.h"
#include "watch/env_renderer.h"
#include "watch/video_writer.h"

namespace rlx {

struct RecordOptions {
  std::filesystem::path path;  // .mp4 or .gif
  int episodes = 1;            // the first N episodes go into the video
  int width = 0, height = 0;   // 0: the env's default size
  double fps = 0;              // 0: the env's own frame rate
};

class EpisodeRecorder {
 public:
  // Sets up the renderer of `env_id` and opens the video (std::invalid_argument naming the env
  // or the file when either cannot be had; std::runtime_error when the video cannot be created).
  EpisodeRecorder(const std::string& env_id, const RecordOptions& options);

  // Draws `env`'s current state when `episode` (0-based) is one to record. std::invalid_argument
  // when the env offers no exact state to draw.
  void observe(int episode, const Env& env);

  // Finishes the video (it appears at its path only now); returns the frames written.
  int64_t finish();

 private:
  std::string env_id_;
  RecordOptions options_;
  std::unique_ptr<EnvRenderer> renderer_;
  std::unique_ptr<VideoWriter> writer_;
  int64_t frames_ = 0;
};

}  // namespace rlx
