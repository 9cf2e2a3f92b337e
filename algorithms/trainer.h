// The training loop behind `rlx train`: iterations of sample -> learn -> publish, results rows,
// checkpoints, stop criteria and a live progress line.
#pragma once

#include <filesystem>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "core/experiment.h"

namespace rlx {

struct TrainOptions {
  Experiment experiment;                       // resolved and validated
  std::filesystem::path output_root = "runs";  // results go to OUTPUT/<experiment>/<trial>/
  std::string trial_name;                      // default: <ALGO>_<env>_seed<S>_<timestamp>
  std::optional<std::filesystem::path> resume; // a checkpoint dir to continue from (same trial dir)
  bool progress = true;                        // the live progress line on stderr
  std::string bind_endpoint = "tcp://127.0.0.1:*";  // where workers connect (remote ones too)
  std::optional<std::filesystem::path> auth_keys;   // CURVE key dir (rlx keys init)
  std::string worker_program;                  // the rlx binary for local workers (default: this executable)
};

struct TrainOutcome {
  bool reward_reached = false;   // stopped by episode_return_mean
  std::string stopped_by;        // the criterion that ended the run
  std::filesystem::path trial_dir;
  std::optional<std::filesystem::path> last_checkpoint;
  nlohmann::json final_row;
};

// Episodes in the episode_return_mean window (RLlib's smoothing window); the reward stop
// criterion needs the window full.
constexpr size_t kEpisodeWindow = 100;

// Trains until a stop criterion is met. Throws ConfigError / CheckpointError / std::runtime_error
// with a message naming what is wrong; results and checkpoints written so far stay intact.
TrainOutcome run_training(const TrainOptions& options);

}  // namespace rlx
