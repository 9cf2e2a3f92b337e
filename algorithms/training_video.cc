#include "algorithms/training_video.h"

#include <chrono>
#include <cstdio>
#include <optional>
#include <string>
#include <thread>

#include "algorithms/trainer.h"
#include "core/child_process.h"
#include "core/config_error.h"
#include "core/log.h"
#include "core/rlx_program.h"
#include "envs/env.h"
#include "watch/renderable_envs.h"

namespace rlx {

void check_filmable(const Experiment& experiment) {
  if (experiment.config.common().record_video_every <= 0) return;
  bool filmable = false;
  try {
    filmable = can_film_env(experiment.env);
  } catch (const EnvContractError& error) {
    throw ConfigError(std::string("record_video_every: ") + error.what() + "; or set record_video_every: 0");
  }
  if (!filmable) {
    throw ConfigError("record_video_every: env '" + experiment.env +
                      "' cannot be filmed: rlx has no renderer for it and its render() draws nothing (give it one: "
                      "docs/envs.md, docs/python.md), or set record_video_every: 0");
  }
}

void record_video(const std::filesystem::path& trial_dir, const std::filesystem::path& checkpoint, int64_t iteration) {
  const std::filesystem::path videos = trial_dir / "videos";
  std::filesystem::create_directories(videos);
  char name[32];
  std::snprintf(name, sizeof(name), "iteration_%06lld.mp4", static_cast<long long>(iteration));
  const std::filesystem::path log = trial_dir / kLogsDirName / "videos.log";
  ChildProcess evaluate({rlx_program_path(), "evaluate", checkpoint.string(), "--episodes", "1", "--deterministic",
                         "--record", (videos / name).string()},
                        log, "video of iteration " + std::to_string(iteration));
  std::optional<ChildExit> exit;
  while (!(exit = evaluate.poll())) std::this_thread::sleep_for(std::chrono::milliseconds(20));
  if (exit->clean()) {
    file_logger().info("wrote {}", (videos / name).string());
  } else {
    logger().warn("the video of iteration {} failed ({}); see {}", iteration, exit->describe(), log.string());
  }
}

}  // namespace rlx
