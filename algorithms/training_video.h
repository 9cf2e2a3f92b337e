// A training run's videos (record_video_every): the check that its env can be filmed at all,
// and one episode filmed for an iteration.
#pragma once

#include <cstdint>
#include <filesystem>

#include "core/experiment.h"

namespace rlx {

// ConfigError when record_video_every is set and the env cannot be filmed (rlx has no renderer
// for it and its render() draws nothing, or it breaks the env contract), naming the way out.
void check_filmable(const Experiment& experiment);

// Films one deterministic episode of `checkpoint`'s policy into
// TRIAL_DIR/videos/iteration_NNNNNN.mp4: `rlx evaluate --record` in a child process (logging to
// TRIAL_DIR/logs/videos.log), so training never loads the video libraries. Waits for it; a failed
// video is a warning naming its log, not the end of the run.
void record_video(const std::filesystem::path& trial_dir, const std::filesystem::path& checkpoint, int64_t iteration);

}  // namespace rlx
