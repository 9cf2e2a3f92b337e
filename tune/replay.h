// `rlx tune --replay TRIAL_DIR`: retrains one trial of a PBT run along its lineage, as
// OUTPUT/<experiment>/replay_<trial>/: its initial params, then at each exploit pbt_log.jsonl
// records the same step the live trial took (the donor's checkpoint copied over the replay's
// latest one, the explored params, the replay's own counters kept), so that where the donors'
// checkpoints still exist the replay trains what the trial trained.
#pragma once

#include <filesystem>
#include <functional>
#include <iosfwd>
#include <string>
#include <vector>

#include "core/experiment.h"
#include "core/process_launcher.h"

namespace rlx {

struct ReplayOptions {
  std::filesystem::path trial_dir;       // OUTPUT/<experiment>/<trial> of a tuning run
  std::string rlx_program;               // the rlx binary the segments run
  std::vector<std::string> env_plugins;  // --env-plugin: when given, they replace the run's plugins
  std::function<void(const Experiment&)> check_experiment;  // as TunerOptions::check_experiment
  std::vector<std::pair<std::string, std::string>> env;    // set in every segment's environment
  ProcessLauncher* launcher = nullptr;  // starts the segments (null: local fork/exec)
};

// Replays the trial: segments that pause where the trial's did (the scheduler's boundaries) and
// at each logged exploit, which is redone there (the donor checkpoint the log records is loaded
// when it still exists and is the one copied then; otherwise the replay says so and goes on
// with its own weights and the new params), until a stop criterion ends it.
// Writes what it does to `out` and the replay's log. Returns the rlx train exit status of the
// last segment (kTrainStopped when a stop signal, passed on to the segment, ended it). std::runtime_error when the trial is not part of a tuning run, the replay
// exists already or a segment fails; ConfigError from check_experiment.
int run_replay(const ReplayOptions& options, std::ostream& out);

}  // namespace rlx
