// EpisodeRecorder: snapshot -> renderer -> video writer.
#include "watch/episode_recorder.h"

#include <stdexcept>

namespace rlx {

EpisodeRecorder::EpisodeRecorder(const std::string& env_id, const RecordOptions& options)
    : env_id_(env_id), options_(options) {
  if (options_.episodes < 1) throw std::invalid_argument("--record-episodes must be >= 1");
  if (options_.fps < 0) throw std::invalid_argument("--fps must be > 0 (0: the env's own rate)");
  check_video_path(options_.path);
  renderer_ = make_env_renderer(env_id, options_.width, options_.height);
}

void EpisodeRecorder::observe(int episode, const Env& env) {
  if (episode >= options_.episodes) return;
  const std::optional<EnvSnapshot> snapshot = env.snapshot();
  if (!snapshot) throw std::invalid_argument(env_id_ + " cannot be recorded: it offers no exact state to draw");
  const Frame frame = renderer_->render(snapshot->exact_state);
  if (!writer_) {
    writer_ = open_video(options_.path, frame.width, frame.height, options_.fps > 0 ? options_.fps : renderer_->fps());
  }
  writer_->add(frame);
  ++frames_;
}

int64_t EpisodeRecorder::finish() {
  if (!writer_) throw std::logic_error("no frame was recorded into " + options_.path.string());
  writer_->finish();
  writer_.reset();
  return frames_;
}

}  // namespace rlx
