// The experiment controller behind `rlx tune`: trials as `rlx train` segment processes, the
// scheduler's decisions between segments, PBT exploits, retries of crashed trials, the live
// status table, experiment_state.json (atomic, after every change), trials.csv, resume after
// a crash. The replay of one trial's lineage is tune/replay.h.
#pragma once

#include <filesystem>
#include <functional>
#include <iosfwd>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/experiment.h"
#include "core/process_launcher.h"
#include "tune/experiment_state.h"

namespace rlx {

constexpr const char* kPbtLogName = "pbt_log.jsonl";
constexpr const char* kTrialsCsvName = "trials.csv";
constexpr const char* kTunedExperimentName = "experiment.yaml";  // the resolved experiment trials run
constexpr const char* kTuneLogName = "tune.log";                 // in OUTPUT/<experiment>/logs/

struct TunerOptions {
  std::filesystem::path experiment_file;        // a fresh run: the YAML file...
  std::string experiment_name;                  // ...and which experiment of it ("" when it holds one)
  std::vector<std::string> overrides;           // --set applied to the base experiment
  std::filesystem::path output_root = "runs";   // trials go to OUTPUT/<experiment>/<trial>/
  std::optional<std::filesystem::path> resume;  // OUTPUT/<experiment> of an interrupted run
  std::string rlx_program;                      // the rlx binary the trial segments run
  std::vector<std::pair<std::string, std::string>> env;  // set in every segment's environment
  ProcessLauncher* launcher = nullptr;          // starts the segments (null: local fork/exec); outlives the run
  bool table = true;                            // the live status table on stderr
  // --env-plugin: added to the experiment's plugins: on a fresh run; on --resume, when given,
  // they replace the plugins the run recorded (run_plugins in tune/segment.h).
  std::vector<std::string> env_plugins;
  // Called once with the resolved experiment (its plugins included) before any trial starts or,
  // on a fresh run, any directory is made; throws (ConfigError) to refuse it. `rlx tune` loads
  // the plugins and checks the env id and spaces here (check_experiment_env, which tune/ cannot
  // call itself: it sits below algorithms/).
  std::function<void(const Experiment&)> check_experiment;
};

struct TuneOutcome {
  std::filesystem::path experiment_dir;
  std::optional<std::string> best_trial;  // best_trial_index: by the metric at each trial's last checkpoint
  std::optional<double> best_metric;      // that value, as the status table's metric column shows it
  nlohmann::json best_params;
  std::optional<std::filesystem::path> best_checkpoint;
  int errored_trials = 0;
  int stop_signal = 0;  // SIGTERM/SIGINT when one stopped the run (resumable with --resume)
};

// Runs (or resumes) a tuning experiment until every trial is terminated or out of retries, or
// a stop signal (core/stop_signal.h) arrives: then each running trial is sent SIGTERM, finishes
// its iteration with a checkpoint, and the run's state is saved to resume from;
// writes the report to `out`; its events (segments started and ended, decisions, exploits) go to
// OUTPUT/<experiment>/logs/tune.log, each segment's output to logs/<trial>.log, and each trial's
// own logs to its logs/ (rlx train's). ConfigError on a bad experiment, tune: section or trial config
// (before any trial starts), std::runtime_error on a state it cannot continue; a crashing trial
// never throws here.
TuneOutcome run_tuner(const TunerOptions& options, std::ostream& out);

}  // namespace rlx
