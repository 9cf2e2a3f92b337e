// The training loop behind `rlx train`: iterations of sample -> learn -> publish, results rows,
// checkpoints, stop criteria and a live progress line. Its parts: training_counters.h (counters,
// stop criteria, the rows' columns), episode_window.h, make_sampler.h (workers, CURVE keys),
// training_resume.h (the checkpoint manifest and resuming), progress_line.h, training_video.h.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "algorithms/algorithm.h"
#include "algorithms/training_counters.h"  // pause_counter_names(), the counters pause_at may name
#include "core/experiment.h"
#include "core/process_launcher.h"
#include "core/rank_placement.h"

namespace rlx {

struct TrainOptions {
  Experiment experiment;                       // resolved and validated
  // Builds the run's algorithm: make_algorithm (algorithms/make_algorithm.h) in rlx-torch,
  // make_native_algorithm in the torch-free `rlx`. Required.
  AlgorithmFactory make_algorithm;
  std::filesystem::path output_root = "runs";  // results go to OUTPUT/<experiment>/<trial>/
  std::string trial_name;                      // default: <ALGO>_<env>_seed<S>_<timestamp>
  std::optional<std::filesystem::path> resume; // a checkpoint dir to continue from (same trial dir)
  bool progress = true;                        // the live progress line on stderr
  std::string bind_endpoint;  // where workers connect (remote ones too); empty: a private ipc:// socket
  std::optional<std::filesystem::path> auth_keys;   // CURVE key dir (rlx keys init)
  std::string worker_program;                  // the rlx binary for local workers (default: rlx_program_path())
  ProcessLauncher* launcher = nullptr;         // starts local workers and learner ranks (null: local fork/exec)
  // Pause here: end the run with a checkpoint at the first iteration where this counter (one of
  // pause_counter_names(): "training_iteration", "timesteps_total" or "time_total_s") reaches the
  // value, without touching the experiment's stop criteria or schedules (a tuner's segment boundary).
  std::optional<std::pair<std::string, double>> pause_at;
  // Set when an engine (srun, torchrun) started this process as rank 0 of a data-parallel group
  // whose other ranks it started too (num_learners is the world size).
  std::optional<RankPlacement> placement;
  // Where the workers' endpoint is written once bound (one line, e.g. tcp://node1:5555), for
  // `rlx worker --connect-file`; default TRIAL_DIR/endpoint when bind_endpoint is a TCP address.
  std::filesystem::path endpoint_file;
};

// The trial's endpoint file (TrainOptions::endpoint_file's default): TRIAL_DIR/endpoint.
constexpr const char* kEndpointFileName = "endpoint";

// A trial's logs: OUTPUT/<experiment>/<trial>/logs/driver.log (and the workers' and ranks').
constexpr const char* kLogsDirName = "logs";
constexpr const char* kDriverLogName = "driver.log";

// TrainOutcome::stopped_by when SIGTERM or SIGINT stopped the run (core/stop_signal.h).
constexpr const char* kStoppedBySignal = "signal";

struct TrainOutcome {
  bool reward_reached = false;   // stopped by episode_return_mean
  bool paused = false;           // ended at TrainOptions::pause_at, not by a stop criterion
  std::string stopped_by;        // the criterion that ended the run, or kStoppedBySignal
  int stop_signal = 0;           // with kStoppedBySignal: SIGTERM or SIGINT
  std::filesystem::path trial_dir;
  std::optional<std::filesystem::path> last_checkpoint;
  nlohmann::json final_row;
};

// Trains until a stop criterion is met (or pause_at, or a stop signal: between iterations, with
// a final checkpoint, when a core/stop_signal.h StopSignals is installed). The trial directory's
// logs/ holds this process's log (driver.log, kept open for the run), the local workers'
// (worker_<i>.log) and the learner ranks' (learner_rank_<r>.log). Throws ConfigError /
// CheckpointError / std::runtime_error with a message naming what is wrong; results and
// checkpoints written so far stay intact, and result.json and driver.log tell the error.
TrainOutcome run_training(const TrainOptions& options);

}  // namespace rlx
